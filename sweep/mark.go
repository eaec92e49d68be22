package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
)

// Inputs are the keep set of a mark run: the keys, relative to the namespace
// (the bucket's root), of every object that must not be deleted. A keep key
// protects the listed key with exactly the same bytes: nothing is
// normalised (no URL unescaping, Unicode normalisation, or cleaning of '/'),
// since an object store holds "a%20b" and "a b", NFC and NFD spellings,
// "x/" and "x" as distinct objects, and a normalised key could protect the
// wrong one. Keys must be spelled as the store lists them.
type Inputs struct {
	// Uncommitted yields the addresses of the uncommitted export (for
	// example from uncommitted.ReadRun). It is consumed before Committed
	// or Changes, on the goroutine that called Mark, while Mark lists the
	// namespace on others (and reads Parts, if given, on another).
	Uncommitted iter.Seq2[string, error]
	// Committed yields the addresses of the active commits, in any order,
	// a key as often as the host likes: the keep index counts each time
	// (see Changes). It is consumed after Uncommitted, on the same
	// goroutine. Exactly one
	// of Committed and Parts is given.
	Committed iter.Seq2[string, error]
	// Parts is the committed keep set as immutable, named parts (lakeFS's
	// ranges), in place of Committed: a run reads only the parts that
	// changed since the previous run (see Parts). They are read while
	// Uncommitted is, on a goroutine of Mark's own, so Parts.Open and its
	// sequences must be safe to use while Uncommitted's sequence runs; a
	// panic of theirs comes out of Mark, on its caller's goroutine, once
	// Mark has stopped reading and listing (when both panic,
	// Uncommitted's).
	Parts *Parts
	// Changes, with Committed, is what changed in Committed since a
	// previous run; Mark reads it in place of Committed when it starts
	// from that run (see Changes). Optional.
	Changes *Changes
	// ExportStart is when the uncommitted export's first Prepare call began;
	// the cutoff is anchored there. Required.
	ExportStart time.Time
}

// cleanupTimeout bounds the writes that record a failed run after the
// caller's context was cancelled.
const cleanupTimeout = 30 * time.Second

// Mark lists the namespace in bucket (rooted at the storage namespace),
// keeps the objects it recognizes as the repository's own outside other
// repositories' folders (see the package documentation, "What is
// collected"), subtracts the inputs and every object younger than the
// cutoff, and writes the rest as the candidates of run runID, in lakeFS's
// report format: <prefix>/retention/gc/unified/<runID>/deleted/ and then
// summary.json, unless the canary finds the mark implausible
// (ErrImplausibleMark).
//
// The cutoff is min(in.ExportStart, Mark's start) − MinAge − ClockSkew −
// StagingMargin. An
// object's age is its modification time as the bucket's listing reports it
// (LastModified), not the time in its address: an object whose listed time is
// at or after the cutoff, or unknown, is kept, and counted in Progress.Young
// and Summary.NumYoungObjects apart from the objects kept by reference
// (Progress.Kept, Summary.NumKeptObjects). Mark refuses a run ID whose summary
// says success (ErrRunExists) or cannot be read or parsed (the error, with
// nothing written), and overwrites a failed one. An invalid option fails it
// before it reads or writes anything. Any other failure — a bad input, an
// input's error, a storage error, a cancelled context — leaves a summary with
// success false and no candidates, and is returned. Concurrent Marks of one
// run ID are not supported.
func Mark(ctx context.Context, bucket *blob.Bucket, runID string, in Inputs, opts ...MarkOption) (*Summary, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	if err := validRunID(runID); err != nil {
		return nil, err
	}
	cfg := newMarkConfig(opts)
	if cfg.err != nil {
		// Before anything is read or written, as the options promise.
		return nil, cfg.err
	}
	if err := validPrefix(cfg.storagePrefix); err != nil {
		return nil, err
	}
	m := &marker{
		bucket: bucket,
		cfg:    cfg,
		dir:    reportDir(cfg.storagePrefix, runID),
		sum:    Summary{RunID: runID},
		cnt:    &counters{progress: cfg.progress},
	}
	m.cnt.phase("start")
	// A Mark killed before it could remove its spill folder left it
	// behind; the lock tells it from a live Mark's. Removed first, so
	// that a rerun refused below, of a Mark killed after its summary,
	// removes it too.
	if stale := extsort.RemoveStaleSpills(cfg.tempDir); len(stale) > 0 {
		m.log("sweep: removed stale spill folders", "folders", stale)
	}
	prev, err := ReadSummary(ctx, bucket, cfg.storagePrefix, runID, cfg.classify...)
	switch {
	case err == nil && prev.Success:
		return nil, fmt.Errorf("%w: %s", ErrRunExists, runID)
	case err != nil && !errors.Is(err, ErrNoRun):
		// The summary could not be read or parsed; it may say success, so
		// it stays, and so does its report.
		return nil, wrapOp("existing summary of run "+runID, err)
	}
	m.sum.StartTime = cfg.clock().UTC().Truncate(time.Second)
	if cfg.sharded() {
		m.sum.ShardIndex, m.sum.ShardCount = cfg.shardIndex, cfg.shardCount
	}
	if err := m.run(ctx, in); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			// Say which phase the cancellation stopped, whichever of the
			// listing and the inputs saw it first.
			err = fmt.Errorf("sweep: mark %s: %s: %w", runID, m.cnt.snapshot().Phase, cerr)
		}
		m.fail(ctx, err)
		return nil, err
	}
	// A copy: a pointer into m would keep the whole marker (the bucket,
	// the inputs, the options and their Progress callback) reachable for
	// as long as the caller keeps the summary.
	sum := m.sum
	return &sum, nil
}

type marker struct {
	bucket *blob.Bucket
	cfg    *config
	dir    string // the report folder
	sum    Summary
	cnt    *counters
	spill  *extsort.SpillDir
	rec    *recorder // the records for the next run
	walls  []string  // the folders of other repositories, sorted, prefix-free
	// sinceClean counts the optimized runs since the last clean one,
	// this one included.
	sinceClean int
}

func (m *marker) log(msg string, args ...any) {
	if m.cfg.logger != nil {
		m.cfg.logger.Info(msg, append([]any{"run_id", m.sum.RunID}, args...)...)
	}
}

// shares divides the memory budget.
type shares struct {
	keep   int // the keep set's block and the young listed keys' together
	young  int // the block of the young listed keys
	loose  int // the block of the loose objects
	mem    int // the list of folders and the small listings (the pool), with what the keep set leaves
	folder int // the block that sorts a spilled folder listed out of order
	ioBuf  int // one file buffer
	fanIn  int // the runs a merge reads at once
}

func (m *marker) budgets() shares {
	b := int(min(m.cfg.memoryBudget, math.MaxInt))
	ioBuf := min(max(b/256, 512), 64<<10)
	return shares{
		keep:   b / 8 * 3,
		young:  b / 16,
		loose:  b / 8,
		mem:    b / 8,
		folder: b / 8,
		ioBuf:  ioBuf,
		fanIn:  min(max(b/8/ioBuf, 2), 64),
	}
}

func (m *marker) run(ctx context.Context, in Inputs) error {
	cfg := m.cfg
	if cfg.err != nil {
		return cfg.err
	}
	if in.ExportStart.IsZero() {
		return fmt.Errorf("%w: zero ExportStart", ErrInvalidInput)
	}
	if err := checkInputs(in); err != nil {
		return err
	}
	if cfg.minAge < cfg.linkTTL && !cfg.unsafeMinAge {
		return fmt.Errorf("%w: min age %v < link TTL %v", ErrUnsafeMinAge, cfg.minAge, cfg.linkTTL)
	}
	if cfg.localDir != "" {
		if err := checkLocalRoot(ctx, m.bucket, cfg.localDir); err != nil {
			return err
		}
	}
	anchor := in.ExportStart.UTC()
	if m.sum.StartTime.Before(anchor) {
		anchor = m.sum.StartTime
	}
	// Whole seconds, rounded down: what the summary says is what is applied.
	m.sum.CutoffTime = anchor.Add(-cfg.minAge - cfg.clockSkew - StagingMargin).Truncate(time.Second)
	m.log("sweep: mark started", "cutoff", m.sum.CutoffTime)

	if err := m.removeStale(ctx); err != nil {
		return err
	}
	sh := m.budgets()
	var err error
	if m.spill, err = extsort.NewSpillDir(cfg.tempDir, sh.ioBuf); err != nil {
		return err
	}
	defer m.spill.Remove()
	prev, err := m.startFrom(ctx)
	if err != nil {
		return err
	}
	if prev != nil {
		defer func() {
			if prev.carried != nil {
				prev.carried.Close()
			}
		}()
	}

	// The inputs are read on this goroutine while the namespace is listed
	// on others: the listing waits on the store, reading and sorting the
	// keep set on the processor. The join waits for both.
	m.cnt.phase("keep")
	// keep sorts the uncommitted keys; hold takes them when a sorter of
	// committed keys needs keep's memory.
	keep := extsort.NewSorter(m.spill, sh.keep-sh.young, sh.fanIn)
	defer keep.Release()
	hold := extsort.NewSorter(m.spill, 4096, sh.fanIn)
	defer hold.Release()
	l := m.newLister(sh)
	defer l.pool.Free()
	defer l.loose.Release()
	defer l.youngKeys.s.Release()
	if prev != nil {
		l.skip = prev.skip
	} else if err := m.useInventory(l); err != nil {
		return err
	}
	if l.unrec, err = newUnrecognized(ctx, m.bucket, m.dir); err != nil {
		return err
	}
	com, err := m.readAndList(ctx, in, prev, keep, hold, l)
	if com != nil {
		defer com.release()
	}
	if err != nil {
		l.unrec.w.Abort()
		return err
	}
	m.sum.KeepSource, m.sum.PartsRead = com.source, com.partsRead
	// The unrecognized objects' report is written even if the mark fails
	// later, its canary included: it says what the listing found. Its
	// upload runs beside the join, and every way out waits for it: it is
	// closed, never aborted, whatever the join does, and complete before
	// the state and the summary. Its error is the mark's when the mark has
	// none, and is logged.
	unrecClosed := goWait(l.unrec.w.Close)
	defer func() {
		if uerr := unrecClosed(); uerr != nil {
			m.log("sweep: the unrecognized objects' report failed", "error", uerr)
		}
	}()
	m.sum.FirstSlice = l.firstSlice
	m.sum.SlicesListed, m.sum.SlicesSkipped = l.listed, l.skipped
	m.sum.InventoryObjects = l.reportRead
	if l.movedKept > 0 {
		m.log("sweep: addresses quarantined since the inventory report kept", "addresses", l.movedKept)
	}
	m.sum.NumUnrecognizedObjects, m.sum.UnrecognizedBytes = l.unrec.n, l.unrec.bytes
	m.sum.UnrecognizedSample = slices.Clip(l.unrec.sample)
	if l.unrec.n > 0 {
		m.log("sweep: unrecognized objects kept", "objects", l.unrec.n, "bytes", l.unrec.bytes, "sample", m.sum.UnrecognizedSample)
	}
	m.walls = l.walls.Sorted()
	m.sum.Walls = capList(m.walls)
	if len(m.walls) > 0 {
		m.log("sweep: other repositories' folders kept", "walls", len(m.walls), "first", m.sum.Walls)
	}

	m.cnt.phase("join")
	// The young listed keys join the uncommitted ones.
	staged := keep
	if com.kind == kindMultiset {
		staged = hold
	}
	if err := staged.Adopt(l.youngKeys.s); err != nil {
		return err
	}
	stagedIt, err := staged.Finish()
	if err != nil {
		return err
	}
	// The streams are read ahead on goroutines of their own, so their
	// merges and decoding run while the join compares and writes; the
	// prefetch checks the order itself, on its batches, with no copy of
	// each key.
	js := joinStreams{staged: extsort.NewPrefetch(stagedIt)}
	defer js.close()
	if js.counts, err = m.counts(com); err != nil {
		return err
	}
	if err := m.indexStreams(&js, com, prev); err != nil {
		return err
	}
	listIt, err := l.stream(sh.folder, sh.fanIn)
	if err != nil {
		return err
	}
	if prev != nil && prev.carried != nil {
		// The keys carried from records other than the keep index join
		// the listing: each is in a slice no folder of the listing
		// holds, and the merge drops repeats.
		listIt = extsort.NewMerge([]extsort.Iter{listIt, prev.carried})
		prev.carried = nil
	}
	js.list = extsort.NewPrefetch(listIt)
	n, err := m.join(ctx, js, l.young, com, prev, unrecClosed)
	if uerr := unrecClosed(); err == nil {
		err = uerr
	}
	if err != nil {
		return err
	}
	m.sum.NumDeletedObjects = n
	c := m.cnt.snapshot()
	m.sum.NumYoungObjects, m.sum.NumKeptObjects, m.sum.NumWalledObjects = c.Young, c.Kept, c.Walled
	m.sum.Success = true
	if err := writeJSON(ctx, m.bucket, m.dir+layout.SummaryFile, m.sum); err != nil {
		m.sum.Success = false
		return err
	}
	m.cnt.phase("done")
	m.log("sweep: mark done", "candidates", n, "first_slice", m.sum.FirstSlice,
		"kind", m.sum.RunKind, "slices_listed", m.sum.SlicesListed, "slices_skipped", m.sum.SlicesSkipped)
	return nil
}

// join writes the candidates and, unless the run is one shard of several
// (which leaves no records: the next run is clean), the records an
// optimized run starts from: the keep index, the parts record of a keep set
// given as parts, and the state.
//
// The candidates' part, the committed and staged indexes and the parts
// record are independent objects: they are closed at once, each upload on
// a goroutine of its own (see closeAll). The state names the indexes and
// the parts record, by their entries and checksums, so it is written only
// once every one of the four is complete, as is the unrecognized objects'
// report (unrec waits for its upload); the first that fails cancels the
// uploads of the four still open and fails the run, with no state written.
func (m *marker) join(ctx context.Context, js joinStreams, young *youngSlices, com *committed, prev *previous, unrec func() error) (int64, error) {
	if m.cfg.sharded() {
		return m.writeCandidates(ctx, js)
	}
	// The writers share a context that the first failed upload cancels.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ioBuf, data := m.budgets().ioBuf, m.cfg.dataPrefix+"/"
	index, err := newSinkWriter(wctx, m.bucket, m.dir+indexName, ioBuf, func(w io.Writer) entrySink {
		return newCindexEncoder(w, data, m.cfg.recognizer(), m.cfg.recognize == nil, ioBuf)
	})
	if err != nil {
		return 0, err
	}
	staged, err := newIndexWriter(wctx, m.bucket, m.dir+stagedName, stagedFormat, ioBuf)
	if err != nil {
		index.abort()
		return 0, err
	}
	m.rec = &recorder{index: index, staged: staged, data: data, young: young}
	w, err := m.joinCandidates(wctx, js)
	if err != nil {
		index.abort()
		staged.abort()
		return 0, err
	}
	var n, parts int64
	err = closeAll(cancel,
		func() (err error) { n, err = m.closeCandidates(w); return err },
		index.close,
		staged.close,
		func() (err error) {
			if com.kind == kindParts {
				parts, err = m.writeParts(wctx, com, prev)
			}
			return err
		},
		unrec)
	if err != nil {
		return 0, err
	}
	if err := m.writeState(ctx, m.rec, com.kind, com.version, parts); err != nil {
		return 0, err
	}
	return n, nil
}

// goWait runs f on a goroutine of its own and returns a function that
// waits for it to return and gives its error (each call the same); a panic
// of f's is raised again by each call, on the caller's goroutine, and a
// runtime.Goexit (a test's FailNow in a bucket it wraps) exits the caller's
// goroutine too, rather than read as f returning nil.
func goWait(f func() error) func() error {
	done := make(chan struct{})
	var (
		err      error
		panicked any
	)
	go func() {
		defer close(done)
		returned := false
		defer func() {
			if !returned {
				panicked = recoveredOrExit(recover())
			}
		}()
		err = f()
		returned = true
	}()
	return func() error {
		<-done
		if panicked != nil {
			raiseAgain(panicked)
		}
		return err
	}
}

// goexited stands for a runtime.Goexit where a goroutine's recorder keeps
// what ended it: since Go 1.21 a panic's recovered value is never nil, so
// a deferred recover() that returns nil on a goroutine that did not return
// is a Goexit.
type goexited struct{}

// recoveredOrExit is what ended a goroutine that did not return: p, its
// recovered panic, or goexited{} when p is nil.
func recoveredOrExit(p any) any {
	if p == nil {
		return goexited{}
	}
	return p
}

// raiseAgain raises p, from recoveredOrExit, on the caller's goroutine: a
// Goexit as a Goexit, a panic as a panic.
func raiseAgain(p any) {
	if _, ok := p.(goexited); ok {
		runtime.Goexit()
	}
	panic(p)
}

// closeAll runs each of fs on a goroutine of its own and waits for all of
// them. The first error is returned, and cancel is called as soon as it
// comes (before the error of another that the cancellation caused). A
// panic (or a runtime.Goexit) of one of fs cancels the others too, and is
// raised again on the caller's goroutine once all of them have returned: a
// caller that recovers it finds no upload still writing.
func closeAll(cancel context.CancelFunc, fs ...func() error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		first    error
		panicked any
	)
	failed := func(err error, p any) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil && panicked == nil {
			cancel()
		}
		if first == nil {
			first = err
		}
		if panicked == nil {
			panicked = p
		}
	}
	wg.Add(len(fs))
	for _, f := range fs {
		go func() {
			defer wg.Done()
			returned := false
			defer func() {
				if !returned {
					failed(nil, recoveredOrExit(recover()))
				}
			}()
			err := f()
			returned = true
			if err != nil {
				failed(err, nil)
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		raiseAgain(panicked)
	}
	return first
}

// newLister returns the lister of the namespace. Young listed keys go to a
// sorter of their own, which joins the keep set's before the join; the pool
// starts with its own share, and gets what the keep set's block leaves once
// the inputs are read.
func (m *marker) newLister(sh shares) *lister {
	l := &lister{
		bucket:    m.bucket,
		cfg:       m.cfg,
		dir:       m.spill,
		cutoff:    m.sum.CutoffTime,
		cnt:       m.cnt,
		loose:     extsort.NewSorter(m.spill, sh.loose, sh.fanIn),
		youngKeys: &lockedSorter{s: extsort.NewSorter(m.spill, sh.young, sh.fanIn)},
		pool:      new(extsort.Pool),
		young:     new(youngSlices),
		rec:       m.cfg.recognizer(),
		walls:     newWallSet(m.cfg),
	}
	l.pool.Give(int64(sh.mem))
	return l
}

// inputsRead gives the pool what keep's block did not take of its share,
// once the inputs are read: keep takes no more keys.
func (l *lister) inputsRead(keep *extsort.Sorter) {
	l.pool.Give(int64(max(keep.MaxBytes()-keep.Size(), 0)))
}

// readAndList reads the inputs while l lists the namespace on another
// goroutine: the uncommitted keys into keep on this one and, when the
// committed keep set is parts, those at the same time on a goroutine of
// their own (partsReader: they use neither keep nor hold); a flat keep set
// or Changes on this goroutine after the uncommitted keys, since their
// sorters first take keep's block (see readCommitted). The first error
// stops the others, and is returned once all have stopped. A panic of the
// parts' Open or sequences comes out here, on Mark's caller's goroutine,
// once all have stopped, whatever else failed, as one of Uncommitted's
// does (which comes out instead when both panic). When the inputs are
// read, the pool gets what the last sorter's block did not take of its
// share.
func (m *marker) readAndList(ctx context.Context, in Inputs, prev *previous, keep, hold *extsort.Sorter, l *lister) (*committed, error) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err; cancel() })
	}
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		if err := l.listTop(ctx); err != nil {
			fail(err)
		} else if err := l.listRest(ctx); err != nil {
			fail(err)
		}
	}()
	var parts *partsReader
	// Every way out, an input's panic included, stops the listing and the
	// parts' reading and waits for them: Mark frees the pool and removes
	// the spill folder after.
	defer func() {
		cancel()
		if parts != nil {
			<-parts.done
		}
		<-listed
	}()
	if in.Parts != nil {
		parts = m.startParts(ctx, in.Parts, prev, fail, cancel)
	}
	var com *committed
	last := keep
	err := readKeep(ctx, in.Uncommitted, keep)
	if err != nil {
		fail(err)
	}
	switch {
	case parts != nil:
		var perr error
		com, perr = parts.wait()
		err = cmp.Or(err, perr)
	case err == nil:
		if com, last, err = m.readCommitted(ctx, in, prev, keep, hold); err != nil {
			fail(err)
		}
	}
	if err == nil {
		l.inputsRead(last)
		m.cnt.phase("list")
	}
	<-listed // first is set, if at all, before listed closes
	return com, first
}

// partsReader reads a committed keep set given as parts (readParts) on a
// goroutine of its own, while readAndList reads the uncommitted keys. Its
// error goes to fail; its panic, or its runtime.Goexit (a host's test
// calling t.FailNow in a part's sequence), is kept and raised again on the
// goroutine that waits for it, and cancels the rest first. done closes once
// the goroutine has returned: only then may the other fields be read.
type partsReader struct {
	done     chan struct{}
	com      *committed
	err      error
	panicked any // its panic, or goexited{} (recoveredOrExit)
}

// startParts starts reading p on a goroutine of its own; fail gets its
// error, and cancel stops the rest when it panics.
func (m *marker) startParts(ctx context.Context, p *Parts, prev *previous, fail func(error), cancel context.CancelFunc) *partsReader {
	r := &partsReader{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		returned := false
		defer func() {
			if returned {
				return
			}
			r.panicked = recoveredOrExit(recover())
			cancel()
		}()
		r.com, r.err = m.readParts(ctx, p, prev)
		returned = true
		if r.err != nil {
			fail(r.err)
		}
	}()
	return r
}

// wait waits for the goroutine and returns what it read and its error; its
// panic panics here, and its Goexit exits this goroutine.
func (r *partsReader) wait() (*committed, error) {
	<-r.done
	if r.panicked != nil {
		raiseAgain(r.panicked)
	}
	return r.com, r.err
}

// fullURI reports whether key is a full address in any spelling
// ("s3://b/x", "file:/x"): the module's one rule, nsaddr.IsFull, so that a
// key sweep refuses as full is one Collect judges as full too.
func fullURI(key string) bool { return nsaddr.IsFull(key) }

// readKeep adds every key of seq to the keep sorter, refusing keys that could
// never match a listed key and so would leave their object unprotected.
//
// seq is read on this goroutine and the keys are added on another (a
// keepAdder), in seq's order, so that decoding the input and sorting the
// keys overlap. What readKeep returns is what it returned when it added
// each key before reading the next: the first error in seq's order (a
// key the sorter refused comes before a later key's refusal, seq's error
// or ctx's end), or seq's panic, which, like every way out, returns only
// once the other goroutine has stopped: keep is for the caller's use then.
// But for one case: seq is read on past a key the sorter refused or
// panicked on, by up to keepBatches batches, and a panic of seq's there
// comes out instead of the sorter's error or panic.
func readKeep(ctx context.Context, seq iter.Seq2[string, error], keep *extsort.Sorter) error {
	a := startKeepAdder(keep)
	defer a.stop()
	b := <-a.free
	var (
		n   int64
		err error
	)
	for key, kerr := range seq {
		if kerr != nil {
			err = fmt.Errorf("sweep: input: %w", kerr)
			break
		}
		if err = keepKeyErr(key); err != nil {
			break
		}
		if !b.fits(key) {
			if b = a.next(b); b == nil {
				break // the adder failed: finish says why
			}
		}
		b.put(key)
		if n++; n%4096 == 0 && ctx.Err() != nil {
			err = ctx.Err()
			break
		}
	}
	// The adder's keys came before this goroutine's error.
	if aerr := a.finish(b); aerr != nil {
		return aerr
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// keepAddErr is the error of a key the keep sorter refused: one too long
// (ErrKeyTooLong) is invalid input.
func keepAddErr(err error) error {
	if errors.Is(err, extsort.ErrKeyTooLong) {
		return fmt.Errorf("%w: keep key: %w", ErrInvalidInput, err)
	}
	return err
}

// removeStale removes what a failed run with the same ID left: its
// candidates, and any sweep report.
func (m *marker) removeStale(ctx context.Context) error {
	// At once: a new run's folders are empty, and each is a request's wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	removals := []func() error{func() error { return removeObject(ctx, m.bucket, m.cfg.classify, m.dir+"sweep.json") }}
	for _, sub := range []string{layout.DeletedFolder, "failed/", "unrecognized/", recordDir} {
		removals = append(removals, func() error { return removeFolder(ctx, m.bucket, m.cfg.classify, m.dir+sub) })
	}
	return closeAll(cancel, removals...)
}

// fail records a failed run: no candidates, and a summary with success
// false. It runs even when ctx was cancelled.
func (m *marker) fail(ctx context.Context, cause error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	m.sum.Success = false
	// No candidates: neither their number nor the size of a part that
	// closed before the failure (and is removed below).
	m.sum.NumDeletedObjects, m.sum.CandidatesBytes = 0, 0
	for _, sub := range []string{layout.DeletedFolder, recordDir} {
		if err := removeFolder(ctx, m.bucket, m.cfg.classify, m.dir+sub); err != nil {
			m.log("sweep: mark failed; removing "+sub+" failed too", "error", err)
		}
	}
	if err := writeJSON(ctx, m.bucket, m.dir+layout.SummaryFile, m.sum); err != nil {
		m.log("sweep: mark failed; writing its summary failed too", "error", err)
	}
	m.log("sweep: mark failed", "error", cause)
}
