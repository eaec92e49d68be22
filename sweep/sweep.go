package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/time/rate"
)

// BatchDeleter is how Sweep deletes. DeleteBatch deletes keys (relative to
// the bucket's root) and returns the keys it could not delete with their
// errors; err fails the whole batch. Errors are classified by a gocloud
// code, the first found of: the ErrorCode() gcerrors.ErrorCode method of an
// error in the chain, which lets a deleter classify its errors; the store's
// own answer, when the chain holds an Azure or GCS SDK error, an AWS SDK
// error with its HTTP status or a file system's permission error (see
// below); gcerrors.Code. NotFound means the
// object was already gone; ResourceExhausted, Unknown (the code of any plain
// error), Internal and DeadlineExceeded are retried; any other code fails
// the key at once.
//
// The store's answer is read from its HTTP status and error code, because
// gocloud's own codes mislead here: a 404 is NotFound; 401 and 403 are
// PermissionDenied (gcsblob says NotFound for GCS's 403, which a retention
// policy, a hold or a missing permission answer: the object is still there);
// Azure's 409 and 412 (a lease, snapshots, an immutability policy) are
// FailedPrecondition (azureblob says Unknown); 429, 503 and Azure's
// ServerBusy are ResourceExhausted; other 5xx are Internal; 408 is
// DeadlineExceeded; S3's 409 (OperationAborted, "try again") is Unknown; a
// file system's EACCES or EPERM is PermissionDenied (fileblob says Unknown).
// ResourceExhausted also halves the calls Sweep keeps in flight (see the
// package documentation). Implementations must be safe for concurrent use:
// Sweep keeps up to the top of WithDeleteConcurrencyRange (or
// WithDeleteConcurrency) calls in flight.
type BatchDeleter interface {
	DeleteBatch(ctx context.Context, keys []string) (failed map[string]error, err error)
}

// bucketDeleter is the default BatchDeleter: bucket.Delete key by key.
type bucketDeleter struct{ bucket *blob.Bucket }

func (d bucketDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	var failed map[string]error
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := d.bucket.Delete(ctx, k); err != nil {
			if failed == nil {
				failed = make(map[string]error)
			}
			failed[k] = err
		}
	}
	return failed, nil
}

// Batch sizes: S3's DeleteObjects takes 1000 keys; the default deleter
// deletes one by one, so smaller batches spread better over the workers.
const (
	maxBatch     = 1000
	defaultBatch = 100
)

// errorCode is the gocloud code of err; see BatchDeleter.
func errorCode(err error) gcerrors.ErrorCode {
	var c interface{ ErrorCode() gcerrors.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	if code, ok := storeCode(err); ok {
		return code
	}
	return gcerrors.Code(err)
}

func isNotFound(err error) bool { return err != nil && errorCode(err) == gcerrors.NotFound }

func transient(err error) bool {
	switch errorCode(err) {
	case gcerrors.ResourceExhausted, gcerrors.Unknown, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return true
	}
	return false
}

// Sweep deletes the candidates of a successful mark run, written by Mark or
// by lakeFS's Spark client. A run without a summary gives ErrNoRun, a failed
// one ErrRunFailed. A candidate outside what Mark scans (see Mark), whose
// key the recognizer does not accept (WithRecognizer, WithInclude: give
// Sweep the options Mark had), or that lies in another repository's folder
// (a key holding "<storage prefix>/" below the data folder; with an include
// prefix or a host's recognizer, also a key in a folder that holds one,
// looked for with one listing request per folder), is refused: never
// deleted, counted and listed in failed/ with the reason. The
// scope uses the summary's cutoff_time; a summary without one makes every
// candidate inside a slice refused.
// The others are deleted in batches through the BatchDeleter, as many at
// once as the store takes (see the package documentation), with transient
// errors retried with exponential backoff (WithBackoff); the ones that still
// fail are listed in failed/. Sweep then writes failed/ and sweep.json beside
// the summary, replacing those of an earlier sweep, which it removes before
// it starts (sweep.json first): running it twice is safe, and a sweep
// stopped before its end leaves no sweep.json.
//
// Sweep a mark soon after it was made, and never one older than a later
// mark of the same namespace: its candidates were garbage when it was made,
// and an object can become live again after (a branch reset to an old
// commit, a copy of an old address), which only a new mark sees. Sweep
// cannot tell; the host's schedule must.
func Sweep(ctx context.Context, bucket *blob.Bucket, runID string, opts ...Option) (*SweepResult, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	cfg := newConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	sum, err := ReadSummary(ctx, bucket, cfg.storagePrefix, runID)
	if err != nil {
		return nil, err
	}
	if !sum.Success {
		return nil, fmt.Errorf("%w: %s", ErrRunFailed, runID)
	}
	s := &sweeper{
		bucket:  bucket,
		cfg:     cfg,
		scope:   scope{dataPrefix: cfg.dataPrefix + "/", cutoff: sum.CutoffTime, rec: cfg.recognizer()},
		walls:   newWallProbe(bucket, cfg),
		cnt:     &counters{progress: cfg.progress},
		deleter: cfg.deleter,
		batch:   maxBatch,
		win:     cfg.delete.window(),
	}
	if s.deleter == nil {
		s.deleter = bucketDeleter{bucket: bucket}
		s.batch = defaultBatch
	}
	s.batch = cmp.Or(cfg.batch, s.batch)
	if cfg.deleteRate > 0 && !math.IsInf(cfg.deleteRate, 1) {
		s.batch = min(s.batch, max(1, int(cfg.deleteRate)))
		s.limiter = rate.NewLimiter(rate.Limit(cfg.deleteRate), s.batch)
	}
	return s.run(ctx, runID)
}

type sweeper struct {
	bucket  *blob.Bucket
	cfg     *config
	scope   scope
	walls   *wallProbe
	cnt     *counters
	deleter BatchDeleter
	batch   int
	limiter *rate.Limiter
	win     *window      // the DeleteBatch calls in flight
	q       *quarantiner // WithQuarantine; nil: delete

	mu     sync.Mutex // guards failed
	failed *partWriter[failedRow]
}

func (s *sweeper) run(ctx context.Context, runID string) (*SweepResult, error) {
	start := s.cfg.clock()
	dir := reportDir(s.cfg.storagePrefix, runID)
	// An earlier sweep's sweep.json goes first: its counts are not of the
	// failed/ folder this sweep replaces, and a sweep stopped before its
	// end must not read as done. (Looked for first: a first sweep deletes
	// nothing but candidates.)
	if err := removeObject(ctx, s.bucket, dir+"sweep.json"); err != nil {
		return nil, err
	}
	if err := removeFolder(ctx, s.bucket, dir+"failed/"); err != nil {
		return nil, err
	}
	var err error
	if s.cfg.quarantine {
		if s.q, err = s.startQuarantine(ctx, runID); err != nil {
			return nil, err
		}
	}
	if s.failed, err = newPartWriter[failedRow](ctx, s.bucket, dir+"failed/"+partName); err != nil {
		return nil, err
	}
	if s.cfg.logger != nil {
		s.cfg.logger.Info("sweep: sweep started", "run_id", runID)
	}
	s.cnt.phase("delete")
	if err := s.deleteAll(ctx, runID); err != nil {
		s.failed.abort()
		return nil, err
	}
	if err := s.failed.close(); err != nil {
		return nil, err
	}
	p := s.cnt.snapshot()
	res := &SweepResult{Deleted: p.Deleted, AlreadyGone: p.AlreadyGone, Failed: p.Failed, Refused: p.Refused}
	if s.q != nil {
		res.Quarantine = s.q.dir
	}
	if err := writeJSON(ctx, s.bucket, dir+"sweep.json", sweepJSON{
		Deleted:     res.Deleted,
		AlreadyGone: res.AlreadyGone,
		Failed:      res.Failed,
		Refused:     res.Refused,
		StartTime:   formatTime(start),
		EndTime:     formatTime(s.cfg.clock()),
		Quarantine:  res.Quarantine,
	}); err != nil {
		return nil, err
	}
	s.cnt.phase("done")
	if s.cfg.logger != nil {
		s.cfg.logger.Info("sweep: sweep done", "run_id", runID, "deleted", res.Deleted,
			"already_gone", res.AlreadyGone, "failed", res.Failed, "refused", res.Refused,
			"concurrency", s.win.limit(), "max_in_flight", s.win.maxInFlight())
	}
	return res, nil
}

// deleteAll reads the candidates and feeds batches to the workers.
func (s *sweeper) deleteAll(ctx context.Context, runID string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
		batches  = make(chan []string)
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	for range s.cfg.delete.hi {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := s.deleteBatch(ctx, b); err != nil {
					fail(err)
				}
			}
		}()
	}
	send := func(b []string) bool {
		select {
		case batches <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	batch := make([]string, 0, s.batch)
	for key, err := range Candidates(ctx, s.bucket, s.cfg.storagePrefix, runID) {
		if err != nil {
			fail(err)
			break
		}
		why := s.scope.reason(key)
		if why == "" {
			why = s.walls.reason(ctx, key)
		}
		if why != "" {
			if err := s.record(key, "refused: "+why, func(p *Progress) { p.Refused++ }); err != nil {
				fail(err)
				break
			}
			continue
		}
		if batch = append(batch, key); len(batch) == s.batch {
			if !send(batch) {
				break
			}
			batch = make([]string, 0, s.batch)
		}
	}
	if len(batch) > 0 && ctx.Err() == nil {
		send(batch)
	}
	close(batches)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// record lists a key in failed/ and counts it.
func (s *sweeper) record(key, why string, count func(*Progress)) error {
	s.mu.Lock()
	err := s.failed.write(failedRow{Address: key, Error: why})
	s.mu.Unlock()
	s.cnt.update(count)
	return err
}

// deleteBatch deletes keys, retrying the transient failures; an error is
// returned only when the sweep must stop. Each call of the deleter takes a
// place in the window and tells it how the store answered.
func (s *sweeper) deleteBatch(ctx context.Context, keys []string) error {
	if s.q != nil {
		var err error
		if keys, err = s.q.move(ctx, keys); err != nil || len(keys) == 0 {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		// Retries count against the rate limit too.
		if s.limiter != nil {
			if err := s.limiter.WaitN(ctx, len(keys)); err != nil {
				return err
			}
		}
		sl, err := s.win.acquire(ctx)
		if err != nil {
			return err
		}
		failed, err := s.deleter.DeleteBatch(ctx, keys)
		s.win.release(sl, judgeBatch(failed, err), 0)
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		var retry []string
		if err != nil {
			failed = make(map[string]error, len(keys))
			for _, k := range keys {
				failed[k] = err
			}
		}
		var deleted, gone int64
		for _, k := range keys {
			kerr, bad := failed[k]
			switch {
			case !bad || kerr == nil:
				deleted++
			case isNotFound(kerr):
				gone++
			case transient(kerr) && attempt < deleteAttempts:
				retry = append(retry, k)
			default:
				if err := s.record(k, kerr.Error(), func(p *Progress) { p.Failed++ }); err != nil {
					return err
				}
			}
		}
		s.cnt.update(func(p *Progress) { p.Deleted += deleted; p.AlreadyGone += gone })
		if len(retry) == 0 {
			return nil
		}
		keys = retry
		if err := s.cfg.backoff.wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// judgeBatch says what a DeleteBatch call tells the window: throttled when
// the call or any key was throttled.
func judgeBatch(failed map[string]error, err error) outcome {
	if err != nil {
		return judge(err)
	}
	for _, kerr := range failed {
		if kerr != nil && judge(kerr) == throttled {
			return throttled
		}
	}
	return answered
}

// removeObject deletes key if it exists. A delete that fails as not found
// is one the store's own answer says so of (isNotFound, as removeFolder):
// gcsblob calls GCS's 403 NotFound, and the object is still there.
func removeObject(ctx context.Context, bucket *blob.Bucket, key string) error {
	ok, err := bucket.Exists(ctx, key)
	if err == nil && ok {
		if err = bucket.Delete(ctx, key); isNotFound(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("sweep: remove %s: %w", key, err)
	}
	return nil
}
