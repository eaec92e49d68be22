package metarange

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
)

// The range cache's object (the package documentation, "The range cache"):
//
//	magic "lakegcRC" | uvarint version
//	string namespace | string storage prefix | string data prefix | 32-byte range ID
//	uvarint entries, as stored, made relative, outside
//	uvarint n probes (≤ maxCacheProbes) | n × (string address, string tail)
//	uvarint n keys   | n × (uvarint shared, string unshared)   strictly ascending
//	uvarint n stats  | n × (uvarint size, uvarint shared, string unshared checksum)
//	                   strictly ascending by (checksum, size)
//	uint32 CRC-32C (Castagnoli, little-endian) of every byte before it
//
// where a string is a uvarint length and its bytes, and shared is how many
// bytes a key (or checksum) shares with the one before it. Nothing after
// the checksum. The decoder checks the checksum first, then every length
// against the bytes left, and allocates nothing the file sizes beyond one
// key (at most maxCacheKey bytes) and the probes (at most maxCacheProbes).
const (
	cacheMagic = "lakegcRC"
	// cacheVersion is the format's version, and the version of the rule
	// that derives the keys: bump it with any change to either (the
	// package's address rules, nsaddr's spellings, the unsigned forms),
	// and every cache written before is read again from its table.
	// TestCacheVersionPinsTheRule and TestCacheVersionPinsTheSpellings
	// fail on such a change until the version is bumped and re-pinned.
	cacheVersion = 1
	// maxCacheKey bounds a key of the cache: larger ones are refused when
	// reading, and a range with one is not cached.
	maxCacheKey = 1 << 20
	// maxCacheProbes is how many outside tails a range's cache keeps for
	// the namespace probe: the prober samples at most as many in a run.
	maxCacheProbes = 64
	cacheCRCLen    = 4
)

// errCacheStale is a cache written under other settings or another format
// version: ignored, and written again.
var errCacheStale = errors.New("cache of other settings or version")

// cacheSettings are what the keys of a range depend on, besides its table:
// a cache written under others is ignored.
type cacheSettings struct {
	namespace     string // the storage namespace as given to Addresses
	storagePrefix string
	rangeID       id
}

// cacheView is a checked cache object.
type cacheView struct {
	counts        rangeCounts
	probes        [][2]string // address, tail
	keys, stats   []byte      // their sections, after their counts, exactly
	nKeys, nStats uint64
}

// cacheReader reads a cache object's fields, checking each length against
// the bytes left.
type cacheReader struct {
	b   []byte
	err error
}

func (r *cacheReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.b = nil
}

func (r *cacheReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 1 && r.b[n-1] == 0 { // the shortest encoding only
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cacheReader) bytes(max uint64) []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) || n > max {
		r.fail("a string of %d bytes, %d left", n, len(r.b))
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// count reads the number of items of a section, each at least min bytes.
func (r *cacheReader) count(min uint64) uint64 {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b))/min {
		r.fail("%d items in %d bytes", n, len(r.b))
		return 0
	}
	return n
}

// parseCache checks a cache object against the settings: its checksum,
// then its header, then every key and checksum of its sections (in order,
// within bounds). An error wrapping errCacheStale is a cache of other
// settings; any other error a damaged one.
func parseCache(data []byte, want cacheSettings) (*cacheView, error) {
	if len(data) < len(cacheMagic)+cacheCRCLen || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("not a range cache")
	}
	body := data[:len(data)-cacheCRCLen]
	if got, sum := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != sum {
		return nil, fmt.Errorf("checksum %#08x, want %#08x", got, sum)
	}
	r := &cacheReader{b: body[len(cacheMagic):]}
	if v := r.uvarint(); r.err == nil && v != cacheVersion {
		return nil, fmt.Errorf("%w: format version %d, not %d", errCacheStale, v, cacheVersion)
	}
	ns, prefix, data := r.bytes(uint64(len(r.b))), r.bytes(uint64(len(r.b))), r.bytes(uint64(len(r.b)))
	if r.err == nil && len(r.b) < len(want.rangeID) {
		r.fail("short header")
	}
	if r.err != nil {
		return nil, r.err
	}
	rangeID := r.b[:len(want.rangeID)]
	r.b = r.b[len(want.rangeID):]
	switch {
	case string(ns) != want.namespace, string(prefix) != want.storagePrefix, string(data) != lakefslayout.DataPrefix:
		return nil, fmt.Errorf("%w: namespace %q, storage prefix %q, data prefix %q", errCacheStale, ns, prefix, data)
	case !bytes.Equal(rangeID, want.rangeID[:]):
		return nil, fmt.Errorf("%w: the cache of range %x", errCacheStale, rangeID)
	}
	v := &cacheView{}
	c := &v.counts
	c.entries, c.asStored, c.madeRelative, c.outside = int64(r.uvarint()), int64(r.uvarint()), int64(r.uvarint()), int64(r.uvarint())
	if r.err == nil && (c.entries < 0 || c.asStored < 0 || c.madeRelative < 0 || c.outside < 0 ||
		uint64(c.asStored)+uint64(c.madeRelative)+uint64(c.outside) > uint64(c.entries)) {
		r.fail("counts %+v", *c)
	}
	n := r.count(2)
	if r.err == nil && n > maxCacheProbes {
		r.fail("%d probes", n)
	}
	for range n {
		a, t := r.bytes(maxCacheKey), r.bytes(maxCacheKey)
		if r.err == nil {
			v.probes = append(v.probes, [2]string{string(a), string(t)})
		}
	}
	v.nKeys = r.count(2)
	v.keys = r.b
	if r.err == nil {
		r.b, r.err = walkKeys(r.b, v.nKeys, nil)
		v.keys = v.keys[:len(v.keys)-len(r.b)]
	}
	v.nStats = r.count(3)
	v.stats = r.b
	if r.err == nil {
		r.b, r.err = walkStats(r.b, v.nStats, nil)
		v.stats = v.stats[:len(v.stats)-len(r.b)]
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the last section", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return v, nil
}

// walkKeys reads n prefix-encoded keys from b, checking that they ascend
// strictly and that each is at most maxCacheKey bytes, and calls fn (if
// not nil) with each; the key is valid only during the call. It returns
// the bytes after the last key.
func walkKeys(b []byte, n uint64, fn func(k []byte) error) ([]byte, error) {
	r := &cacheReader{b: b}
	var key []byte
	for i := range n {
		shared := r.uvarint()
		rest := r.bytes(maxCacheKey)
		if r.err != nil {
			return nil, fmt.Errorf("key %d: %w", i, r.err)
		}
		if shared > uint64(len(key)) || shared+uint64(len(rest)) > maxCacheKey {
			return nil, fmt.Errorf("key %d shares %d bytes of %d, adds %d", i, shared, len(key), len(rest))
		}
		// Strictly ascending, the prefix shared whole: the first byte
		// after it is larger than the previous key's, or the previous
		// key ends there.
		if i > 0 && (len(rest) == 0 || shared < uint64(len(key)) && rest[0] <= key[shared]) {
			return nil, fmt.Errorf("key %d does not follow key %d", i, i-1)
		}
		key = append(key[:shared], rest...)
		if fn != nil {
			if err := fn(key); err != nil {
				return nil, err
			}
		}
	}
	return r.b, nil
}

// walkStats reads n entries' sizes and checksums from b, in strictly
// ascending (checksum, size) order, each checksum prefix-encoded on the
// one before, and calls fn (if not nil) with each; the checksum is valid
// only during the call. It returns the bytes after the last one.
func walkStats(b []byte, n uint64, fn func(size int64, sum []byte)) ([]byte, error) {
	r := &cacheReader{b: b}
	var (
		sum      []byte
		lastSize uint64
	)
	for i := range n {
		size := r.uvarint()
		shared := r.uvarint()
		rest := r.bytes(maxCacheKey)
		if r.err != nil {
			return nil, fmt.Errorf("checksum %d: %w", i, r.err)
		}
		if shared > uint64(len(sum)) || shared+uint64(len(rest)) > maxCacheKey {
			return nil, fmt.Errorf("checksum %d shares %d bytes of %d, adds %d", i, shared, len(sum), len(rest))
		}
		if i > 0 {
			// Ascending by checksum, then size: an equal checksum
			// (shared whole, nothing added) needs a larger size.
			same := shared == uint64(len(sum)) && len(rest) == 0
			switch {
			case same && size <= lastSize:
				return nil, fmt.Errorf("checksum %d does not follow checksum %d", i, i-1)
			case !same && len(rest) == 0, !same && shared < uint64(len(sum)) && rest[0] <= sum[shared]:
				return nil, fmt.Errorf("checksum %d does not follow checksum %d", i, i-1)
			}
		}
		sum = append(sum[:shared], rest...)
		lastSize = size
		if fn != nil {
			fn(int64(size), sum)
		}
	}
	return r.b, nil
}

// cacheWriter encodes a cache object.
type cacheWriter struct{ b []byte }

func (w *cacheWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *cacheWriter) bytes(s []byte) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// sharedLen is the length of the common prefix of a and b.
func sharedLen(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// encodeCache encodes a range's cache: keys sorted ascending and
// deduplicated, stats sorted by (checksum, size) and deduplicated (both
// by the caller, sortedKeys and sortedStats).
func encodeCache(s cacheSettings, c rangeCounts, probes [][2]string, keys [][]byte, stats []entryStat) []byte {
	w := &cacheWriter{b: make([]byte, 0, 256)}
	w.b = append(w.b, cacheMagic...)
	w.uvarint(cacheVersion)
	w.bytes([]byte(s.namespace))
	w.bytes([]byte(s.storagePrefix))
	w.bytes([]byte(lakefslayout.DataPrefix))
	w.b = append(w.b, s.rangeID[:]...)
	for _, v := range []int64{c.entries, c.asStored, c.madeRelative, c.outside} {
		w.uvarint(uint64(v))
	}
	w.uvarint(uint64(len(probes)))
	for _, p := range probes {
		w.bytes([]byte(p[0]))
		w.bytes([]byte(p[1]))
	}
	w.uvarint(uint64(len(keys)))
	var prev []byte
	for _, k := range keys {
		n := sharedLen(prev, k)
		w.uvarint(uint64(n))
		w.bytes(k[n:])
		prev = k
	}
	w.uvarint(uint64(len(stats)))
	prev = nil
	for _, e := range stats {
		w.uvarint(uint64(e.size))
		n := sharedLen(prev, e.sum)
		w.uvarint(uint64(n))
		w.bytes(e.sum[n:])
		prev = e.sum
	}
	return binary.LittleEndian.AppendUint32(w.b, crc32.Checksum(w.b, castagnoli))
}

// entryStat is an entry's size and checksum (WithEntryStats).
type entryStat struct {
	size int64
	sum  []byte
}

// sortedKeys sorts keys ascending and drops duplicates, in place.
func sortedKeys(keys [][]byte) [][]byte {
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// sortedStats sorts stats by (checksum, size) and drops duplicates, in place.
func sortedStats(stats []entryStat) []entryStat {
	cmp := func(a, b entryStat) int {
		if c := bytes.Compare(a.sum, b.sum); c != 0 {
			return c
		}
		switch {
		case uint64(a.size) < uint64(b.size): // as encoded
			return -1
		case uint64(a.size) > uint64(b.size):
			return 1
		}
		return 0
	}
	slices.SortFunc(stats, cmp)
	return slices.CompactFunc(stats, func(a, b entryStat) bool { return cmp(a, b) == 0 })
}
