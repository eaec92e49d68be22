package metarange

import (
	"fmt"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

// rangeCounts are what the entries of a range became (Stats' counts).
type rangeCounts struct {
	entries, asStored, madeRelative, outside int64
}

// keySink receives the keys of a range's entries: addBytes and addString
// each add a key (addBytes' argument is valid only during the call), and
// entryDone ends an entry's keys.
type keySink interface {
	addBytes(k []byte)
	addString(k string)
	entryDone() error
}

// deriveRange derives the keep keys of every entry of a range's table, in
// the table's order, into sink: the one rule of Addresses (the package
// documentation, "The addresses"), with and without the cache. probe is
// called with each address outside the namespace whose tail has a key
// shape lakeFS writes, and that tail; stats, if not nil, with each entry's
// size and checksum (WithEntryStats). rg names the range in errors.
func deriveRange(data []byte, rg id, ns *namespace, sink keySink, probe func(address, tail string) error, stats func(int64, []byte)) (rangeCounts, error) {
	var (
		c      rangeCounts
		keys   []string
		record int
	)
	err := eachValue(data, typeRanges, "range "+rg.String(), func(value []byte) error {
		record++
		_, entry, err := splitValue(value)
		if err != nil {
			return fmt.Errorf("%w: range %s: record %d: %w", ErrCorrupt, rg, record, err)
		}
		address, typ, err := decodeEntry(entry)
		if err != nil {
			return fmt.Errorf("%w: range %s: record %d: %w", ErrCorrupt, rg, record, err)
		}
		if stats != nil {
			size, sum, err := entryStats(entry)
			if err != nil {
				return fmt.Errorf("%w: range %s: record %d: %w", ErrCorrupt, rg, record, err)
			}
			stats(size, sum)
		}
		c.entries++
		if typ == relative {
			sink.addBytes(address)
			c.asStored++
			if nsaddr.MayClean(address) {
				// On S3, also the key lakeFS before v0.110 used.
				if k, ok := ns.ns.CleanedRelative(string(address)); ok {
					sink.addString(k)
				}
			}
			return sink.entryDone()
		}
		var oc outcome
		keys, oc = ns.keys(keys[:0], string(address), typ)
		switch {
		case oc == mismatch:
			_, _, err := ns.ns.Check(nil, string(address))
			return fmt.Errorf("%w: range %s: record %d: %w", ErrNamespaceMismatch, rg, record, err)
		case oc == outside && len(keys) > 0:
			if err := probe(string(address), keys[0]); err != nil {
				return err
			}
		}
		for _, k := range keys {
			sink.addString(k)
		}
		switch oc {
		case asStored:
			c.asStored++
		case madeRelative:
			c.madeRelative++
		case outside:
			c.outside++
		}
		return sink.entryDone()
	})
	return c, err
}
