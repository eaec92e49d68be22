package lakegc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"iter"
	"slices"
	"sync/atomic"

	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// CommittedParts is a Committed whose data is immutable, named parts, as
// lakeFS's commits are sets of ranges. When Host.Committed implements it,
// Collect gives the mark the parts instead of every address (see
// sweep.Parts): an optimized cycle then reads only the parts that appeared
// or left since the previous run, and the others not at all.
type CommittedParts interface {
	Committed
	// CommittedParts returns the parts of the given commits (IDs, and Open,
	// which yields a part's addresses). An ID names the same addresses for
	// ever. A part's addresses are spelled as CommittedAddresses' are,
	// relative or full; the relative ones must come strictly ascending (byte
	// order), and Open must serve the parts of earlier calls too, while a
	// run's records may name them (sweep.Parts). Collect reads a part once:
	// the keys of its full addresses and of the relative ones it must also
	// keep cleaned are sorted in memory (so they should be few) and merged
	// with its relative addresses, which it holds meanwhile in a buffer
	// (front-coded; at most 8 MiB a part, and for all the parts the mark
	// holds open at once a quarter of Config.MemoryBudget, at least 8 MiB,
	// beside the budget). A part that does not fit is read twice, once for
	// those keys and once for the rest, in order; two reads that differ in
	// those addresses fail the cycle with ErrInvalidInput. The parts'
	// Version names the host's rules of spelling a part's addresses: new
	// rules, a new Version (the next cycle then reads every part). The
	// parts' ReadAhead is the mark's (sweep.Parts.ReadAhead): above 1, Open
	// and distinct sequences must be safe for concurrent use, and Collect
	// reads up to that many parts at once, each still from one goroutine
	// at a time. Either way the mark reads the parts while it reads the
	// uncommitted addresses (the export's, then Host.Copies'), on another
	// goroutine (sweep.Inputs.Parts): Open and its sequences must be safe
	// to use while those are read.
	CommittedParts(ctx context.Context, active []retention.ActiveCommit) (*sweep.Parts, error)
}

// committedParts is the mark's Parts of a host's parts: each part's keys,
// judged by the namespace's rule as Committed's addresses are, ascending.
func (c *cycle) committedParts(ctx context.Context, cp CommittedParts) (*sweep.Parts, error) {
	hp, err := cp.CommittedParts(ctx, c.active)
	if err != nil {
		return nil, fmt.Errorf("committed parts: %w", err)
	}
	if hp == nil || hp.Open == nil {
		return nil, fmt.Errorf("%w: the host's committed parts have no Open", ErrInvalidInput)
	}
	// The keys of a part follow from the host's version of it, the rules
	// below and the namespace its full addresses are judged against: a
	// change of any of them makes the next run count every part.
	v := sha256.Sum256([]byte(partKeyRules + "\x00" + c.ns.String() + "\x00" + hp.Version))
	pool := newPartBuffers(c.cfg.MemoryBudget)
	return &sweep.Parts{IDs: hp.IDs, Version: hex.EncodeToString(v[:]), ReadAhead: hp.ReadAhead, Open: func(ctx context.Context, id string) iter.Seq2[string, error] {
		return c.partKeys(ctx, hp, id, pool)
	}}, nil
}

// partKeyRules names the rules by which partKeys spells a part's keys (see
// relativeAddresses); it changes with them.
const partKeyRules = "lakegc part keys 1"

// irregular reports whether address a is not kept by its own spelling
// alone: a full address, or a relative one that lakeFS may also resolve
// cleaned.
func (c *cycle) irregular(a string) bool {
	if nsaddr.IsFull(a) {
		return true
	}
	_, cleaned := c.ns.CleanedRelative(a)
	return cleaned
}

// partKeys yields the keys of the host's part id, ascending: the keys of its
// irregular addresses (full ones, and relative ones the namespace may also
// resolve cleaned), found while the part is read and sorted, merged with its
// relative addresses, which come ascending. The irregular keys are known
// only at the part's end, so the part is read once into a buffer (its
// relative addresses, front-coded) and its keys yielded from there; a part
// whose buffer would pass its bound, or the cycle's (partBufferLimits), is
// read a second time instead, and the two reads must find the same
// irregular addresses (a hash of them, in order): a second read with one the
// first did not have would lose that address's keys, so the part fails.
// Distinct sequences may be read concurrently when the host's Open allows
// it: what they share (the namespace, the count of foreign addresses, the
// buffers' bound) is safe for concurrent use.
func (c *cycle) partKeys(ctx context.Context, hp *sweep.Parts, id string, pool *partBuffers) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		buf := partBuffer{pool: pool}
		defer buf.release()
		var extra []string
		first, second := fnv.New64a(), fnv.New64a()
		note := func(h hash.Hash64, a string) {
			h.Write([]byte(a))
			h.Write([]byte{0})
		}
		odd := func(yield func(string, error) bool) {
			for a, err := range hp.Open(ctx, id) {
				if err == nil && !nsaddr.IsFull(a) {
					buf.add(a)
				}
				if err != nil || c.irregular(a) {
					if err == nil {
						note(first, a)
					}
					if !yield(a, err) || err != nil {
						return
					}
				}
			}
		}
		for k, err := range c.relativeAddresses(ctx, "committed part "+id, odd) {
			if err != nil {
				yield("", err)
				return
			}
			extra = append(extra, k)
		}
		slices.Sort(extra)
		m := partMerge{extra: slices.Compact(extra), yield: yield}
		if !buf.over {
			// One read: the part's relative addresses are in buf.
			for a := range buf.addresses() {
				if !m.next(a) {
					return
				}
			}
			m.rest()
			return
		}
		// Two reads: the first found the irregular keys, this one yields
		// the relative addresses in order.
		buf.release()
		for a, err := range hp.Open(ctx, id) {
			if err != nil {
				yield("", fmt.Errorf("committed part %s: %w", id, err))
				return
			}
			if c.irregular(a) {
				note(second, a)
			}
			if nsaddr.IsFull(a) {
				continue // its keys are in extra
			}
			if !m.next(a) {
				return
			}
		}
		if first.Sum64() != second.Sum64() {
			yield("", fmt.Errorf("%w: committed part %s: its two reads differ in their full or cleaned addresses", ErrInvalidInput, id))
			return
		}
		m.rest()
	}
}

// partMerge yields a part's relative addresses, in the order they come,
// merged with its irregular addresses' keys (extra, sorted, distinct): a
// key of extra equal to an address is yielded once.
type partMerge struct {
	extra []string
	yield func(string, error) bool
}

// next yields the keys of extra below a, then a; false when the consumer
// stopped.
func (m *partMerge) next(a string) bool {
	for len(m.extra) > 0 && m.extra[0] <= a {
		if m.extra[0] < a && !m.yield(m.extra[0], nil) {
			return false
		}
		m.extra = m.extra[1:]
	}
	return m.yield(a, nil)
}

// rest yields the keys of extra left.
func (m *partMerge) rest() {
	for _, k := range m.extra {
		if !m.yield(k, nil) {
			return
		}
	}
}

// The bounds of the buffers that let Collect read a part once. The mark
// holds every part of a merge group open at once (up to 64, its fan-in)
// and pulls each first before it merges them, so the buffers of a whole
// group are held together, not only those of the ReadAhead parts read at
// a time: the bound is on all of them. A part's relative addresses are
// kept front-coded (the length an address shares with the one before it,
// and the rest): ascending addresses of lakeFS's shape (a slice's prefix,
// then names that begin with their time) share most of their bytes with
// the one before. The bottom line's ranges (tests/bottomline: 50,000
// addresses of 46 bytes, a lakeFS range's expected entries) take 176 KB
// each, 3.5 bytes an address; addresses that share nothing take 2 bytes
// more than their own. A whole merge group of such ranges (64) takes 11 MiB
// (16 MiB allocated: a buffer grows by doubling), well within the default
// bounds.
const (
	// partBufferMax bounds one part's buffer: a part whose addresses take
	// more is read twice.
	partBufferMax = 8 << 20
	// partBufferStep is a buffer's first size.
	partBufferStep = 64 << 10
)

// partBufferLimits returns the bounds of one part's buffer and of all of a
// cycle's at once, for a memory budget: a quarter of the budget in all
// (64 MiB at DefaultMemoryBudget), beside the budget as the mark's batches
// of parts are; at least one part's. Tests lower them.
var partBufferLimits = func(budget int64) (part, all int64) {
	return partBufferMax, max(budget/4, partBufferMax)
}

// partBuffers is what a cycle's part buffers may still reserve: safe for
// concurrent use.
type partBuffers struct {
	part int64        // one part's bound
	free atomic.Int64 // bytes not reserved
}

func newPartBuffers(budget int64) *partBuffers {
	part, all := partBufferLimits(budget)
	p := &partBuffers{part: min(part, all)}
	p.free.Store(all)
	return p
}

// partBuffer holds a part's relative addresses, in the order they came,
// front-coded: for each, uvarint shared (the bytes it shares with the one
// before it), uvarint length of the rest, the rest. Its bytes grow by
// doubling, from partBufferStep, each size reserved from the pool before
// it is allocated. It is used by one goroutine.
type partBuffer struct {
	pool *partBuffers
	data []byte
	held int64  // bytes reserved from pool: cap(data), or the next size while it is copied
	prev string // the last address added
	over bool   // an address did not fit: the buffer is dropped
}

// add appends address a, or drops the buffer when the part's addresses
// take more than its bound or the pool has not the bytes, or a is longer
// than partAddressMax (decoding it would copy it beside the buffer).
func (b *partBuffer) add(a string) {
	if b.over {
		return
	}
	shared := 0
	for n := min(len(a), len(b.prev)); shared < n && a[shared] == b.prev[shared]; shared++ {
	}
	rest := a[shared:]
	need := int64(len(b.data)) + int64(uvarintLen(shared)+uvarintLen(len(rest))+len(rest))
	if need > b.pool.part || len(a) > partAddressMax {
		b.drop()
		return
	}
	if need > int64(cap(b.data)) {
		size := min(max(2*int64(cap(b.data)), partBufferStep, need), b.pool.part)
		if !b.pool.reserve(size) {
			b.drop()
			return
		}
		b.held += size
		data := make([]byte, len(b.data), size)
		copy(data, b.data)
		b.pool.free.Add(int64(cap(b.data)))
		b.held -= int64(cap(b.data))
		b.data = data
	}
	b.data = binary.AppendUvarint(b.data, uint64(shared))
	b.data = binary.AppendUvarint(b.data, uint64(len(rest)))
	b.data = append(b.data, rest...)
	b.prev = a
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// drop releases the buffer for good: the part is read twice.
func (b *partBuffer) drop() {
	b.over = true
	b.release()
}

// release gives the buffer's reservation back and drops its bytes.
func (b *partBuffer) release() {
	b.pool.free.Add(b.held)
	b.held, b.data, b.prev = 0, nil, ""
}

// reserve takes n bytes if they are free.
func (p *partBuffers) reserve(n int64) bool {
	if p.free.Add(-n) >= 0 {
		return true
	}
	p.free.Add(n)
	return false
}

// addresses yields the buffer's addresses in the order they were added.
// They are decoded a batch at a time into one string each, whose parts are
// yielded: one allocation a batch, not one an address.
func (b *partBuffer) addresses() iter.Seq[string] {
	return func(yield func(string) bool) {
		var key, batch []byte
		var ends []int
		flush := func() bool {
			s, start := string(batch), 0
			for _, end := range ends {
				if !yield(s[start:end]) {
					return false
				}
				start = end
			}
			batch, ends = batch[:0], ends[:0]
			return true
		}
		for d := b.data; len(d) > 0; {
			shared, n := binary.Uvarint(d)
			d = d[n:]
			size, n := binary.Uvarint(d)
			d = d[n:]
			key = append(key[:shared], d[:size]...)
			d = d[size:]
			batch = append(batch, key...)
			ends = append(ends, len(batch))
			if (len(batch) >= partBatchBytes || len(ends) == partBatchKeys) && !flush() {
				return
			}
		}
		flush()
	}
}

// The batches addresses decodes end at partBatchBytes or partBatchKeys,
// whichever comes first: a batch of empty or repeated addresses (which the
// mark refuses) stays small too.
const (
	partBatchBytes = 32 << 10
	partBatchKeys  = 1024
)

// partAddressMax is the longest address a part buffer holds: the mark
// refuses longer keys (sweep.Parts), so a part with one is read twice and
// fails there, and its decode batch stays small.
const partAddressMax = 64 << 10
