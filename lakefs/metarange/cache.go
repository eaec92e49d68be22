package metarange

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
)

// unsignedLen returns the length of k without a linked object's signature
// (lakeFS's "data/<slice>/<xid>,<signature>": a ',' in its last element),
// and whether it has one: both keys are kept, as the lakeFS host keeps
// them.
func unsignedLen(k []byte) (int, bool) {
	i := bytes.LastIndexByte(k, ',')
	return i, i > bytes.LastIndexByte(k, '/')
}

// collector gathers a range's keys, with their unsigned forms, and its
// entries' sizes and checksums, for its cache, up to max bytes; over that
// it stops and says so (over).
type collector struct {
	max   int64
	arena []byte
	spans [][2]int
	sums  []byte
	stats [][3]int64 // size, start and end in sums
	over  bool
}

func (c *collector) addBytes(k []byte) {
	if c.admit(len(k)) {
		c.arena = append(c.arena, k...)
		c.span(len(c.arena) - len(k))
	}
}

func (c *collector) addString(k string) {
	if c.admit(len(k)) {
		c.arena = append(c.arena, k...)
		c.span(len(c.arena) - len(k))
	}
}

// admit reports whether a key of n bytes may be collected, and gives up
// on the range when it is too long.
func (c *collector) admit(n int) bool {
	if c.over {
		return false
	}
	if n > maxCacheKey {
		c.overflow()
		return false
	}
	return true
}

// span records the key at the end of the arena, from start, and its
// unsigned form when it is a signed link address.
func (c *collector) span(start int) {
	c.spans = append(c.spans, [2]int{start, len(c.arena)})
	if n, ok := unsignedLen(c.arena[start:]); ok {
		c.spans = append(c.spans, [2]int{start, start + n})
	}
}

func (c *collector) stat(size int64, sum []byte) {
	if c.over {
		return
	}
	if len(sum) > maxCacheKey {
		c.overflow()
		return
	}
	start := len(c.sums)
	c.sums = append(c.sums, sum...)
	c.stats = append(c.stats, [3]int64{size, int64(start), int64(len(c.sums))})
}

func (c *collector) entryDone() error {
	if !c.over && c.held() > c.max {
		c.overflow()
	}
	return nil
}

// held is the memory the collector holds, as allocated (the arenas, a span
// of 16 bytes or a stat of 24 bytes each), with the slices sorted makes (a
// key of 24 bytes or an entryStat of 32 each): with the encoded cache,
// itself smaller, a missed range takes at most twice max.
func (c *collector) held() int64 {
	return int64(cap(c.arena)+cap(c.sums)+16*cap(c.spans)+24*cap(c.stats)) + int64(24*len(c.spans)+32*len(c.stats))
}

func (c *collector) overflow() {
	*c = collector{max: c.max, over: true}
}

// sorted returns the keys and the stats, sorted and deduplicated.
func (c *collector) sorted() ([][]byte, []entryStat) {
	keys := make([][]byte, len(c.spans))
	for i, s := range c.spans {
		keys[i] = c.arena[s[0]:s[1]:s[1]]
	}
	stats := make([]entryStat, len(c.stats))
	for i, s := range c.stats {
		stats[i] = entryStat{size: s[0], sum: c.sums[s[1]:s[2]:s[2]]}
	}
	return sortedKeys(keys), sortedStats(stats)
}

// unsignedSink adds to a sink each key's unsigned form after it, as a
// range's cache holds them.
type unsignedSink struct{ keySink }

func (s unsignedSink) addBytes(k []byte) {
	s.keySink.addBytes(k)
	if n, ok := unsignedLen(k); ok {
		s.keySink.addBytes(k[:n])
	}
}

func (s unsignedSink) addString(k string) {
	s.keySink.addString(k)
	if i := strings.LastIndexByte(k, ','); i > strings.LastIndexByte(k, '/') {
		s.keySink.addString(k[:i])
	}
}

// cacheCore reads and writes range caches; it is safe for concurrent use.
type cacheCore struct {
	bucket    *blob.Bucket
	cfg       *config
	ns        *namespace
	namespace string // as given
	prober    *nsaddr.Prober
}

// rangeKeys are the keys of a range: a checked cache object (view), its
// cache read (hit) or just encoded from its table; or, a range whose cache
// is too large to write, its keys sorted (keys); or, a range too large to
// cache, its table to derive again (table). A view holds the range's keys
// prefix-encoded, a few bytes a key: the arenas of a missed range are
// dropped once its cache is encoded.
type rangeKeys struct {
	counts             rangeCounts
	view               *cacheView
	keys               [][]byte
	table              []byte
	hit                bool  // served from its cache
	rejected           bool  // a cache was found and ignored
	written            bool  // the cache was written
	writeErr           error // writing the cache failed
	tableLen, cacheLen int64
}

// each calls fn with every key, ascending but for a range too large to
// cache, whose keys come in the table's order.
func (k *rangeKeys) each(c *cacheCore, rg id, fn func([]byte) error) error {
	switch {
	case k.view != nil:
		_, err := walkKeys(k.view.keys, k.view.nKeys, fn)
		return err
	case k.table != nil:
		s := &funcSink{fn: fn}
		_, err := deriveRange(k.table, rg, c.ns, unsignedSink{s}, func(string, string) error { return nil }, nil)
		if err == nil {
			err = s.err
		}
		return err
	}
	for _, key := range k.keys {
		if err := fn(key); err != nil {
			return err
		}
	}
	return nil
}

// funcSink is a keySink calling fn with each key, stopping at its first
// error.
type funcSink struct {
	fn  func([]byte) error
	err error
}

func (s *funcSink) addBytes(k []byte) {
	if s.err == nil {
		s.err = s.fn(k)
	}
}
func (s *funcSink) addString(k string) { s.addBytes([]byte(k)) }
func (s *funcSink) entryDone() error   { return s.err }

func (c *cacheCore) key(rg id) string {
	return lakefslayout.RangeCacheKey(c.cfg.storagePrefix, rg.String())
}

func (c *cacheCore) settings(rg id) cacheSettings {
	return cacheSettings{namespace: c.namespace, storagePrefix: c.cfg.storagePrefix, rangeID: rg}
}

// probe checks an outside tail, as Addresses does.
func (c *cacheCore) probe(ctx context.Context, rg id, address, tail string) error {
	if err := c.prober.Probe(ctx, address, tail); err != nil {
		if errors.Is(err, nsaddr.ErrMismatch) {
			err = fmt.Errorf("%w: range %s: %w", ErrNamespaceMismatch, rg, err)
		}
		return err
	}
	return nil
}

// get returns the keys of range rg: from its cache when it holds a cache
// of these settings that checks out, else from its table, whose keys it
// then caches. A cache that is missing, damaged, of other settings or that
// cannot be read is ignored, never an error. Either way the outside tails
// are probed and WithEntryStats is called (from a cache, once per distinct
// size and checksum). With mustSort, a range too large to cache is an
// error (ErrLimit); without, its table is returned to derive again.
func (c *cacheCore) get(ctx context.Context, rg id, mustSort bool) (*rangeKeys, error) {
	out := &rangeKeys{}
	if data, err := readFile(ctx, c.bucket, c.key(rg), c.cfg.cacheMaxBytes); err == nil {
		v, err := parseCache(data, c.settings(rg))
		if err == nil {
			for _, p := range v.probes {
				if err := c.probe(ctx, rg, p[0], p[1]); err != nil {
					return nil, err
				}
			}
			if c.cfg.entryStats != nil {
				if _, err := walkStats(v.stats, v.nStats, c.cfg.entryStats); err != nil {
					return nil, fmt.Errorf("metarange: range cache %s: %w", rg, err) // checked by parseCache: never
				}
			}
			out.counts, out.view, out.cacheLen, out.hit = v.counts, v, int64(len(data)), true
			return out, nil
		}
		out.rejected = true
	} else if ctx.Err() != nil {
		return nil, stopped(ctx)
	} else if gcerrors.Code(err) != gcerrors.NotFound {
		out.rejected = true // unreadable, too large: read the table
	}
	table, err := readFile(ctx, c.bucket, c.cfg.storagePrefix+"/"+rg.String(), c.cfg.maxFileSize)
	if err != nil {
		return nil, err
	}
	out.tableLen = int64(len(table))
	col := &collector{max: c.cfg.cacheMaxBytes}
	var (
		probes [][2]string
		seen   = map[string]bool{}
	)
	probe := func(address, tail string) error {
		// The prober's sample, as the table gives it: the first distinct
		// tails. The address only names the entry in an error: one over
		// the bound is cut, not left out of the sample. (A tail over it
		// is a key too long to cache: no cache is written.)
		if !seen[tail] && len(probes) < maxCacheProbes && len(tail) <= maxCacheKey {
			seen[tail] = true
			probes = append(probes, [2]string{address[:min(len(address), maxCacheKey)], tail})
		}
		return c.probe(ctx, rg, address, tail)
	}
	stats := col.stat
	if fn := c.cfg.entryStats; fn != nil {
		stats = func(size int64, sum []byte) { col.stat(size, sum); fn(size, sum) }
	}
	out.counts, err = deriveRange(table, rg, c.ns, col, probe, stats)
	if err != nil {
		return nil, err
	}
	if col.over {
		if mustSort {
			return nil, fmt.Errorf("%w: range %s: its keys and checksums take more than %d bytes (WithCacheMaxBytes)", ErrLimit, rg, c.cfg.cacheMaxBytes)
		}
		out.table = table
		return out, nil
	}
	keys, sums := col.sorted()
	enc := encodeCache(c.settings(rg), out.counts, probes, keys, sums)
	if int64(len(enc)) > c.cfg.cacheMaxBytes {
		out.keys = keys // readable, not within the bound: not written
		return out, nil
	}
	if err := c.bucket.WriteAll(ctx, c.key(rg), enc, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx)
		}
		out.writeErr = fmt.Errorf("metarange: write range cache %s: %w", c.key(rg), err)
	} else {
		out.written = true
	}
	// From the encoded cache, a fraction of the arenas' size (the arenas
	// should the encoding not read back, which the fuzz test says never).
	if v, err := parseCache(enc, c.settings(rg)); err == nil {
		out.view = v
	} else {
		out.keys = keys
	}
	return out, nil
}

// readRangeCached sends the keys of a range through its cache.
func (r *run) readRangeCached(ctx context.Context, rg id, out chan<- batch) error {
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	select {
	case r.files <- struct{}{}:
	case <-ctx.Done():
		return stopped(ctx)
	}
	defer func() { <-r.files }()
	k, err := r.cache.get(ctx, rg, false)
	if err != nil {
		return err
	}
	b := &sendingBatcher{batcher: newBatcher(), ctx: ctx, out: out}
	err = k.each(r.cache, rg, func(key []byte) error {
		b.addBytes(key)
		return b.entryDone()
	})
	if err != nil {
		return err
	}
	r.bytes.Add(k.tableLen)
	r.cacheBytes.Add(k.cacheLen)
	if k.rejected {
		r.cacheRejected.Add(1)
	}
	if !k.hit {
		r.cacheMisses.Add(1)
	}
	if k.writeErr != nil {
		r.cacheWriteErrors.Add(1)
	}
	r.add(k.counts, k.hit)
	return b.send(true)
}

// A Cache serves the keys of ranges one range at a time, each sorted, from
// the range cache (the package documentation, "The range cache"): the
// committed input of a mark as parts, one part per range. It is safe for
// concurrent use.
type Cache struct {
	core  *cacheCore
	files chan struct{}

	ranges, hits, misses, rejected, writeErrors atomic.Int64
	bytes, cacheBytes, entries                  atomic.Int64
	asStored, madeRelative, outside             atomic.Int64
}

// NewCache returns a Cache of the ranges of the storage namespace bucket,
// whose URI is storageNamespace, as Addresses takes them. Of the options,
// WithStoragePrefix, WithMaxFileSize, WithCacheMaxBytes, WithEntryStats
// and WithConcurrency (how many ranges Open reads at once) apply.
func NewCache(bucket *blob.Bucket, storageNamespace string, opts ...Option) (*Cache, error) {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	ns, err := parseNamespace(storageNamespace)
	if err != nil {
		return nil, err
	}
	return &Cache{
		core: &cacheCore{bucket: bucket, cfg: cfg, ns: &ns, namespace: storageNamespace,
			prober: nsaddr.NewProber(bucket, ns.ns.String(), nsaddr.DefaultProbes)},
		files: make(chan struct{}, cfg.concurrency),
	}, nil
}

// Open yields the keys of range rangeID strictly ascending: what
// Addresses yields for the range with WithRangeCache, sorted and without
// duplicates. They come from the range's cache, or, when it has none that
// checks out, from its table, and the cache is then written. A failure
// (a missing or corrupt table, a range whose keys take more than
// WithCacheMaxBytes, a namespace mismatch, the context) is the last value
// yielded; a cache that cannot be written is only counted
// (CacheStats.WriteErrors). At most WithConcurrency ranges are read (and
// a missed one sorted and encoded) at once, each in at most twice
// WithCacheMaxBytes of memory; an open range then holds only its keys,
// prefix-encoded as in its cache (about 12 bytes a key for lakeFS's keys),
// until they have been yielded, so that a merge of many ranges at once
// holds about that much per key of the ranges open: how many are open at
// once is the caller's to bound. The
// range is read when the iteration starts (its first pull), not at Open.
func (c *Cache) Open(ctx context.Context, rangeID string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		rg, ok := parseID([]byte(rangeID))
		if !ok {
			yield("", fmt.Errorf("%w: range ID %q is not 64 lower-case hex digits", ErrInvalidInput, rangeID))
			return
		}
		k, err := c.get(ctx, rg)
		if err != nil {
			yield("", err)
			return
		}
		c.count(k)
		b := newBatcher()
		stop := errors.New("stop")
		flush := func() bool {
			for _, s := range b.take() {
				if !yield(s, nil) {
					return false
				}
			}
			return true
		}
		err = k.each(c.core, rg, func(key []byte) error {
			b.addBytes(key)
			if b.full() && !flush() {
				return stop
			}
			return nil
		})
		switch {
		case err == stop:
		case err != nil:
			yield("", err)
		default:
			flush()
		}
	}
}

// get returns a range's keys, holding a token of c.files while its table
// or cache is read (and a missed one sorted), not while its keys are
// yielded: a caller may hold many ranges open at once (a merge of parts).
func (c *Cache) get(ctx context.Context, rg id) (*rangeKeys, error) {
	select {
	case c.files <- struct{}{}:
	case <-ctx.Done():
		return nil, stopped(ctx)
	}
	defer func() { <-c.files }()
	k, err := c.core.get(ctx, rg, true)
	if err == nil && k.view != nil {
		// Only the keys section stays while the range is open: its
		// probes and checksums were used.
		k.view.keys, k.view.stats, k.view.probes = slices.Clone(k.view.keys), nil, nil
	}
	return k, err
}

func (c *Cache) count(k *rangeKeys) {
	c.ranges.Add(1)
	if k.hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	if k.rejected {
		c.rejected.Add(1)
	}
	if k.writeErr != nil {
		c.writeErrors.Add(1)
	}
	c.bytes.Add(k.tableLen)
	c.cacheBytes.Add(k.cacheLen)
	c.entries.Add(k.counts.entries)
	c.asStored.Add(k.counts.asStored)
	c.madeRelative.Add(k.counts.madeRelative)
	c.outside.Add(k.counts.outside)
}

// Stats returns the running totals of the ranges opened so far, as
// Addresses counts them (MetaRanges, EmptyMetaRanges and SharedRanges are
// Addresses' own: zero here; Done is false).
func (c *Cache) Stats() Stats {
	return Stats{Ranges: c.ranges.Load(), Bytes: c.bytes.Load(), Entries: c.entries.Load(),
		AsStored: c.asStored.Load(), MadeRelative: c.madeRelative.Load(), Outside: c.outside.Load(),
		Cache: CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Rejected: c.rejected.Load(),
			WriteErrors: c.writeErrors.Load(), Bytes: c.cacheBytes.Load()}}
}

// Version names the rules by which Open spells a range's keys: the range
// cache's format version (which is the version of the rule deriving the
// keys, bumped with any change to it), the storage namespace as given and
// the storage prefix — the settings a cache is checked against. Two Caches
// of the same Version give the same keys for a range ID; a caller that
// remembers what a range contributed (a mark's counted parts,
// sweep.Parts.Version) must forget it when the Version changes. It is 64
// lower-case hex digits (a SHA-256).
func (c *Cache) Version() string {
	v := sha256.Sum256(fmt.Appendf(nil, "lakegc metarange keys\x00%d\x00%s\x00%s", cacheVersion, c.core.namespace, c.core.cfg.storagePrefix))
	return hex.EncodeToString(v[:])
}

// ReadEntryStats reads range rangeID as Open does — from its cache, or,
// when it has none that checks out, from its table, whose cache is then
// written — and gives its entries' sizes and checksums to WithEntryStats
// (from a cache, each distinct size and checksum once), without yielding
// its keys: for a caller that needs every range's checksums but the keys
// of only some (the lakeFS host's re-upload check, beside a mark that
// reads only the ranges that changed). A cache read this way is checked
// and its outside tails probed as Open's are; nothing is sorted. It
// returns the range's number of entries (Stats.Entries), and counts the
// read in Stats. Its failures are Open's.
func (c *Cache) ReadEntryStats(ctx context.Context, rangeID string) (int64, error) {
	rg, ok := parseID([]byte(rangeID))
	if !ok {
		return 0, fmt.Errorf("%w: range ID %q is not 64 lower-case hex digits", ErrInvalidInput, rangeID)
	}
	select {
	case c.files <- struct{}{}:
	case <-ctx.Done():
		return 0, stopped(ctx)
	}
	k, err := c.core.get(ctx, rg, true)
	<-c.files
	if err != nil {
		return 0, err
	}
	c.count(k)
	return k.counts.entries, nil
}
