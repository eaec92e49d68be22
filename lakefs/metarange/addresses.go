package metarange

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

// Errors of Addresses, wrapped with what failed.
var (
	// ErrInvalidInput: an invalid option, storage namespace or metarange ID,
	// or a nil reader or negative size given to Ranges or Entries.
	ErrInvalidInput = errors.New("metarange: invalid input")
	// ErrMissing: a metarange or range is not in the bucket. Never skipped:
	// the objects of a missing range would be left unprotected.
	ErrMissing = errors.New("metarange: missing table")
	// ErrCorrupt: a table, or a record in it, is not what lakeFS writes.
	ErrCorrupt = errors.New("metarange: corrupt table")
	// ErrLimit: a table larger than WithMaxFileSize, or more distinct ranges
	// than WithMaxRanges.
	ErrLimit = errors.New("metarange: over a limit")
	// ErrNamespaceMismatch: an entry's full address names the storage
	// namespace in another spelling than the one given (an S3 scheme alias
	// such as s3a, ".." or doubled slashes, percent-escapes), or is outside
	// it while its tail is an object of the bucket. Its object would be
	// left out of the keep set: the iteration stops.
	ErrNamespaceMismatch = errors.New("metarange: an address names the namespace in another spelling")
)

// Stats are the running totals of an iteration of Addresses.
type Stats struct {
	MetaRanges      int64 // distinct metaranges read
	EmptyMetaRanges int64 // empty metarange IDs (lakeFS's empty commit): nothing to read
	Ranges          int64 // distinct ranges read
	SharedRanges    int64 // ranges listed again by another metarange, not read again
	Bytes           int64 // bytes of the tables read
	Entries         int64 // entries of the ranges read
	AsStored        int64 // entries kept with their address as stored: a relative one
	MadeRelative    int64 // entries whose full address inside the namespace was made relative
	Outside         int64 // entries whose full address is outside the namespace, such as imports: only a tail of a lakeFS key shape kept
	// Cache is the range cache's part (WithRangeCache): Ranges counts the
	// ranges served from their cache and from their tables alike, and so
	// do Entries, AsStored, MadeRelative and Outside (a cache holds its
	// range's counts); Bytes counts the tables read only.
	Cache CacheStats
	Done  bool // the iteration has ended: this is the last call
}

// CacheStats are the range cache's running totals (WithRangeCache, Cache).
type CacheStats struct {
	Hits        int64 // ranges served from their cache: their tables not read
	Misses      int64 // ranges read from their tables (and their caches written, but for WriteErrors and ranges over WithCacheMaxBytes)
	Rejected    int64 // among Misses, caches found and ignored: damaged, of other settings or versions, unreadable
	WriteErrors int64 // among Misses, caches that could not be written (the run goes on)
	Bytes       int64 // bytes of the caches read
}

// Addresses returns the addresses, relative to the storage namespace, of
// the objects of every entry of the given metaranges: what a lakeFS
// repository's kept commits reference, the committed input of a mark
// (sweep.Inputs.Committed). The bucket is the storage namespace itself,
// and storageNamespace is its URI as lakeFS reports it ("s3://bucket/repo"),
// against which full addresses are compared. An empty metarange ID, that
// of lakeFS's empty first commit, lists nothing.
//
// Each metarange and each range is read once, however many metaranges list
// it, WithConcurrency tables at a time. Addresses come range by range, in no
// particular order, and may repeat: an object unchanged between two
// versions of a range is listed by both.
//
// With WithRangeCache each range is read through the range cache (the
// package documentation, "The range cache"): from its cache object when
// one checks out, else from its table, whose keys are then cached; the
// keys then include the unsigned forms of linked objects' keys.
//
// Any failure (a missing or corrupt table, a limit, the context) ends the
// iteration with an error, never with a silently shorter list. Memory is
// bounded by the tables being read (WithConcurrency × WithMaxFileSize at
// worst) and a few decompressed blocks of each (about 4 KiB as lakeFS
// writes them, 16 MiB at most), the set of the range IDs read
// (WithMaxRanges) and a few batches of addresses in flight, and with
// WithRangeCache each range's cache as it is read, or a missed range's
// keys and checksums while they are sorted and encoded (at most twice
// WithCacheMaxBytes, beside its table): not by the number of addresses.
func Addresses(ctx context.Context, bucket *blob.Bucket, storageNamespace string, metaRangeIDs []string, opts ...Option) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		r, err := newRun(bucket, storageNamespace, metaRangeIDs, opts)
		if err != nil {
			yield("", err)
			return
		}
		r.run(ctx, yield)
	}
}

// Sizes of a batch of addresses sent from a range reader to the iterator.
const (
	batchLen   = 1024
	batchBytes = 64 << 10
)

// run is one iteration of Addresses.
type run struct {
	cfg        *config
	bucket     *blob.Bucket
	ns         namespace
	prober     *nsaddr.Prober // of the tails of addresses outside the namespace
	metaRanges []id
	ranges     *idSet
	files      chan struct{} // a token per table held in memory

	metaRangesRead, emptyMetaRanges, rangesRead, sharedRanges atomic.Int64
	bytes, entries, asStored, madeRelative, outside           atomic.Int64

	cache                                                               *cacheCore // nil without WithRangeCache
	cacheHits, cacheMisses, cacheRejected, cacheWriteErrors, cacheBytes atomic.Int64

	errOnce sync.Once
	err     error
	cancel  context.CancelFunc
}

// batch is a run of addresses of one range; last is set on its last one.
type batch struct {
	addrs []string
	last  bool
}

func newRun(bucket *blob.Bucket, storageNamespace string, metaRangeIDs []string, opts []Option) (*run, error) {
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
	r := &run{
		cfg:    cfg,
		bucket: bucket,
		ns:     ns,
		prober: nsaddr.NewProber(bucket, ns.ns.String(), nsaddr.DefaultProbes),
		ranges: newIDSet(cfg.maxRanges),
		files:  make(chan struct{}, cfg.concurrency),
	}
	if cfg.rangeCache {
		r.cache = &cacheCore{bucket: bucket, cfg: cfg, ns: &r.ns, namespace: storageNamespace, prober: r.prober}
	}
	seen := make(map[id]bool, len(metaRangeIDs))
	for _, s := range metaRangeIDs {
		if s == "" {
			r.emptyMetaRanges.Add(1)
			continue
		}
		v, ok := parseID([]byte(s))
		if !ok {
			return nil, fmt.Errorf("%w: metarange ID %q is not 64 lower-case hex digits", ErrInvalidInput, s)
		}
		if !seen[v] {
			seen[v] = true
			r.metaRanges = append(r.metaRanges, v)
		}
	}
	return r, nil
}

// run reads the metaranges and their ranges and yields their addresses.
// Metarange readers send the IDs of ranges not seen before to range
// readers, which send batches of addresses to the iterating goroutine.
// Both hold a token of r.files while a table is in memory; a metarange
// reader gives its token back before it sends anything, so that range
// readers can always progress.
func (r *run) run(ctx context.Context, yield func(string, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	rangeIDs := make(chan id, batchLen)
	batches := make(chan batch, r.cfg.concurrency)
	var wg sync.WaitGroup
	finished := false
	defer func() {
		if !finished { // the caller stopped early
			cancel()
			wg.Wait()
			r.report(true)
		}
	}()

	var metaWG sync.WaitGroup
	var next atomic.Int64
	for range min(r.cfg.concurrency, len(r.metaRanges)) {
		metaWG.Add(1)
		wg.Go(func() {
			defer metaWG.Done()
			for i := int(next.Add(1) - 1); i < len(r.metaRanges); i = int(next.Add(1) - 1) {
				fresh, err := r.readMetaRange(ctx, r.metaRanges[i])
				if err != nil {
					r.fail(err)
					return
				}
				for _, v := range fresh {
					select {
					case rangeIDs <- v:
					case <-ctx.Done():
						r.fail(stopped(ctx))
						return
					}
				}
			}
		})
	}
	wg.Go(func() {
		metaWG.Wait()
		close(rangeIDs)
	})

	var rangeWG sync.WaitGroup
	for range r.cfg.concurrency {
		rangeWG.Add(1)
		wg.Go(func() {
			defer rangeWG.Done()
			for v := range rangeIDs {
				if err := r.readRange(ctx, v, batches); err != nil {
					r.fail(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		rangeWG.Wait()
		close(batches)
	})

	for b := range batches {
		for _, a := range b.addrs {
			if !yield(a, nil) {
				return
			}
		}
		if b.last {
			r.report(false)
		}
	}
	wg.Wait()
	err := r.failure(ctx)
	finished = true
	cancel()
	r.report(true)
	if err != nil {
		yield("", err)
	}
}

// fail records the first error and stops the run.
func (r *run) fail(err error) {
	r.errOnce.Do(func() {
		r.err = err
		r.cancel()
	})
}

// stopped is the error of a reader stopped by the end of the context.
func stopped(ctx context.Context) error {
	return fmt.Errorf("metarange: %w", context.Cause(ctx))
}

// failure returns the run's error once every goroutine has stopped: the
// first one recorded, or an error if, all the same, not every table was
// read (a safety net: the output must never be silently short).
func (r *run) failure(ctx context.Context) error {
	r.errOnce.Do(func() {}) // no error is recorded after this
	if r.err != nil {
		return r.err
	}
	if int(r.metaRangesRead.Load()) != len(r.metaRanges) || int(r.rangesRead.Load()) != r.ranges.len() {
		return fmt.Errorf("metarange: incomplete: %d of %d metaranges and %d of %d ranges read (context: %v)",
			r.metaRangesRead.Load(), len(r.metaRanges), r.rangesRead.Load(), r.ranges.len(), context.Cause(ctx))
	}
	return nil
}

func (r *run) report(done bool) {
	if r.cfg.stats == nil {
		return
	}
	r.cfg.stats(Stats{
		MetaRanges:      r.metaRangesRead.Load(),
		EmptyMetaRanges: r.emptyMetaRanges.Load(),
		Ranges:          r.rangesRead.Load(),
		SharedRanges:    r.sharedRanges.Load(),
		Bytes:           r.bytes.Load(),
		Entries:         r.entries.Load(),
		AsStored:        r.asStored.Load(),
		MadeRelative:    r.madeRelative.Load(),
		Outside:         r.outside.Load(),
		Cache: CacheStats{Hits: r.cacheHits.Load(), Misses: r.cacheMisses.Load(), Rejected: r.cacheRejected.Load(),
			WriteErrors: r.cacheWriteErrors.Load(), Bytes: r.cacheBytes.Load()},
		Done: done,
	})
}

// load reads a table into memory, holding a token of r.files until the
// returned release is called.
func (r *run) load(ctx context.Context, v id) (data []byte, release func(), err error) {
	if ctx.Err() != nil {
		return nil, nil, stopped(ctx)
	}
	select {
	case r.files <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, stopped(ctx)
	}
	release = func() { <-r.files }
	data, err = readFile(ctx, r.bucket, r.cfg.storagePrefix+"/"+v.String(), r.cfg.maxFileSize)
	if err != nil {
		release()
		return nil, nil, err
	}
	r.bytes.Add(int64(len(data)))
	return data, release, nil
}

// readMetaRange reads a metarange and returns the IDs of its ranges that
// no other metarange listed before.
func (r *run) readMetaRange(ctx context.Context, mr id) ([]id, error) {
	data, release, err := r.load(ctx, mr)
	if err != nil {
		return nil, err
	}
	defer release()
	var fresh []id
	err = eachRange(data, "metarange "+mr.String(), func(v id, _ rangeData) error {
		switch added, full := r.ranges.add(v); {
		case full:
			return fmt.Errorf("%w: more than %d distinct ranges (WithMaxRanges)", ErrLimit, r.cfg.maxRanges)
		case added:
			fresh = append(fresh, v)
			if r.cfg.rangeIDs != nil {
				r.cfg.rangeIDs(v.String())
			}
		default:
			r.sharedRanges.Add(1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.metaRangesRead.Add(1)
	return fresh, nil
}

// readRange reads a range and sends the addresses of its entries: through
// the range cache with WithRangeCache (cachedrange.go), else from its
// table, as it comes.
func (r *run) readRange(ctx context.Context, rg id, out chan<- batch) error {
	if r.cache != nil {
		return r.readRangeCached(ctx, rg, out)
	}
	data, release, err := r.load(ctx, rg)
	if err != nil {
		return err
	}
	defer release()
	b := &sendingBatcher{batcher: newBatcher(), ctx: ctx, out: out}
	c, err := r.derive(ctx, data, rg, b)
	if err != nil {
		return err
	}
	r.add(c, false)
	return b.send(true)
}

// derive derives the keys of a range's table into sink, probing the tails
// of addresses outside the namespace and, with WithEntryStats, reporting
// the entries' sizes and checksums.
func (r *run) derive(ctx context.Context, data []byte, rg id, sink keySink) (rangeCounts, error) {
	probe := func(address, tail string) error {
		if err := r.prober.Probe(ctx, address, tail); err != nil {
			if errors.Is(err, nsaddr.ErrMismatch) {
				err = fmt.Errorf("%w: range %s: %w", ErrNamespaceMismatch, rg, err)
			}
			return err
		}
		return nil
	}
	return deriveRange(data, rg, &r.ns, sink, probe, r.cfg.entryStats)
}

// add adds a range's counts to the run's totals.
func (r *run) add(c rangeCounts, cached bool) {
	r.entries.Add(c.entries)
	r.asStored.Add(c.asStored)
	r.madeRelative.Add(c.madeRelative)
	r.outside.Add(c.outside)
	r.rangesRead.Add(1)
	if cached {
		r.cacheHits.Add(1)
	}
}

// sendingBatcher is a keySink that sends its batches to the iterating
// goroutine as they fill.
type sendingBatcher struct {
	*batcher
	ctx context.Context
	out chan<- batch
}

func (b *sendingBatcher) entryDone() error {
	if b.full() {
		return b.send(false)
	}
	return nil
}

func (b *sendingBatcher) send(last bool) error {
	select {
	case b.out <- batch{addrs: b.take(), last: last}:
		return nil
	case <-b.ctx.Done():
		return stopped(b.ctx)
	}
}

// batcher gathers addresses into one string, sliced into a batch: one
// allocation per batch rather than one per address.
type batcher struct {
	arena []byte
	ends  []int
}

func newBatcher() *batcher {
	return &batcher{arena: make([]byte, 0, batchBytes+1024), ends: make([]int, 0, batchLen)}
}

func (b *batcher) addBytes(k []byte) {
	b.arena = append(b.arena, k...)
	b.ends = append(b.ends, len(b.arena))
}

func (b *batcher) addString(k string) {
	b.arena = append(b.arena, k...)
	b.ends = append(b.ends, len(b.arena))
}

func (b *batcher) full() bool { return len(b.ends) >= batchLen || len(b.arena) >= batchBytes }

func (b *batcher) take() []string {
	s := string(b.arena)
	addrs := make([]string, len(b.ends))
	start := 0
	for i, end := range b.ends {
		addrs[i] = s[start:end]
		start = end
	}
	b.arena, b.ends = b.arena[:0], b.ends[:0]
	return addrs
}
