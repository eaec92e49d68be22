package sweep

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sync"

	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
)

// BatchDeleter is how Sweep deletes. DeleteBatch deletes keys (relative to
// the bucket's root) and returns the keys it could not delete with their
// errors; err fails the whole batch. Errors are classified by a gocloud
// code, the first found of: the ErrorCode() gcerrors.ErrorCode method of an
// error in the chain, which lets a deleter classify its errors; the
// ErrorClassifiers of WithErrorClassifier, then the deleter's own if it
// implements ErrorClassifier; the store's own answer when it can be read
// without a cloud SDK (a GCS *googleapi.Error, an AWS SDK error with its
// HTTP status, a file system's permission error); gcerrors.Code. NotFound means the object was
// already gone; ResourceExhausted, Unknown (the code of any plain error),
// Internal and DeadlineExceeded are retried; any other code fails the key
// at once.
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
// Package sweep reads S3's, GCS's and the file system's answers itself;
// Azure's need its SDK, which sweep does not import: their reader is
// azdelete.Classifier, which azdelete's Deleter uses, and which a host that
// sweeps an Azure bucket with its own Delete gives WithErrorClassifier
// (without it, Azure's 409 and 412 are retried before they fail the key,
// and ServerBusy does not slow Sweep down; no refusal reads as gone). ResourceExhausted also halves the calls
// Sweep keeps in flight (see the package documentation). Implementations
// must be safe for concurrent use: Sweep keeps up to the top of
// WithDeleteConcurrencyRange (or WithDeleteConcurrency) calls in flight.
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
// The others are deleted in batches through the BatchDeleter (with
// WithMover, those the Mover moved), as many at once as the store takes,
// transient errors retried (see the package documentation); the ones that
// still fail are listed in failed/. Sweep then writes failed/ and sweep.json beside
// the summary, replacing those of an earlier sweep, which it removes before
// it starts (sweep.json first): running it twice is safe, and a sweep
// stopped before its end leaves no sweep.json.
//
// Sweep a mark soon after it was made, and never one older than a later
// mark of the same namespace: its candidates were garbage when it was made,
// and an object can become live again after (a branch reset to an old
// commit, a copy of an old address), which only a new mark sees. Sweep
// cannot tell; the host's schedule must.
func Sweep(ctx context.Context, bucket *blob.Bucket, runID string, opts ...SweepOption) (*Result, error) {
	st, err := NewStore(bucket, opts...)
	if err != nil {
		return nil, err
	}
	cfg := st.cfg
	sum, err := ReadSummary(ctx, bucket, cfg.storagePrefix, runID, cfg.classify...)
	if err != nil {
		return nil, err
	}
	if !sum.Success {
		return nil, fmt.Errorf("%w: %s", ErrRunFailed, runID)
	}
	s := &sweeper{
		Store: st,
		scope: scope{dataPrefix: cfg.dataPrefix + "/", cutoff: sum.CutoffTime, rec: cfg.recognizer()},
		walls: newWallProbe(bucket, cfg),
		cnt:   &counters{progress: cfg.progress},
		batch: cmp.Or(cfg.batch, st.batch),
		win:   cfg.delete.window(),
	}
	if cfg.deleteRate > 0 && !math.IsInf(cfg.deleteRate, 1) {
		s.batch = min(s.batch, max(1, int(cfg.deleteRate)))
		s.limiter = rate.NewLimiter(rate.Limit(cfg.deleteRate), s.batch)
	}
	return s.run(ctx, runID)
}

type sweeper struct {
	*Store
	scope   scope
	walls   *wallProbe
	cnt     *counters
	batch   int // keys a DeleteBatch call gets
	limiter *rate.Limiter
	win     *aimd.Window // the DeleteBatch calls in flight
	move    MoveFunc     // WithMover's; nil: delete
	folder  string       // where move moves the candidates

	mu     sync.Mutex // guards failed
	failed *partWriter[failedRow]
}

func (s *sweeper) run(ctx context.Context, runID string) (*Result, error) {
	start := s.cfg.clock()
	dir := reportDir(s.cfg.storagePrefix, runID)
	// An earlier sweep's sweep.json goes first: its counts are not of the
	// failed/ folder this sweep replaces, and a sweep stopped before its
	// end must not read as done. (Looked for first: a first sweep deletes
	// nothing but candidates.)
	if err := removeObject(ctx, s.bucket, s.cls, dir+"sweep.json"); err != nil {
		return nil, err
	}
	if err := removeFolder(ctx, s.bucket, s.cls, dir+"failed/"); err != nil {
		return nil, err
	}
	var err error
	if s.cfg.mover != nil {
		if s.folder, s.move, err = s.cfg.mover.StartMove(ctx, s.Store, runID); err != nil {
			return nil, err
		}
		if s.move == nil {
			// Deleting what was to be moved aside would lose it: keep.
			return nil, fmt.Errorf("%w: the Mover %T gave no move", ErrInvalidInput, s.cfg.mover)
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
		s.failed.Abort()
		return nil, err
	}
	if err := s.failed.Close(); err != nil {
		return nil, err
	}
	p := s.cnt.snapshot()
	res := &Result{Deleted: p.Deleted, AlreadyGone: p.AlreadyGone, Failed: p.Failed, Refused: p.Refused, Quarantine: s.folder}
	if err := writeJSON(ctx, s.bucket, dir+"sweep.json", sweepJSON{
		Deleted:     res.Deleted,
		AlreadyGone: res.AlreadyGone,
		Failed:      res.Failed,
		Refused:     res.Refused,
		StartTime:   layout.FormatTime(start),
		EndTime:     layout.FormatTime(s.cfg.clock()),
		Quarantine:  res.Quarantine,
	}); err != nil {
		return nil, err
	}
	s.cnt.phase("done")
	if s.cfg.logger != nil {
		s.cfg.logger.Info("sweep: sweep done", "run_id", runID, "deleted", res.Deleted,
			"already_gone", res.AlreadyGone, "failed", res.Failed, "refused", res.Refused,
			"concurrency", s.win.Limit(), "max_in_flight", s.win.MaxInFlight())
	}
	return res, nil
}

// deleteAll reads the candidates and feeds batches to the workers; the
// first error of either cancels the others.
func (s *sweeper) deleteAll(ctx context.Context, runID string) error {
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []string)
	for range s.cfg.delete.hi {
		g.Go(func() error {
			for b := range batches {
				if err := s.deleteBatch(gctx, b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(batches)
		return s.feed(gctx, runID, batches)
	})
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// feed sends the candidates of runID to batches, a batch at a time, and
// records those out of scope as refused.
func (s *sweeper) feed(ctx context.Context, runID string, batches chan<- []string) error {
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
			return err
		}
		why := s.scope.reason(key)
		if why == "" {
			why = s.walls.reason(ctx, key)
		}
		if why != "" {
			if err := s.record(key, "refused: "+why, func(p *Progress) { p.Refused++ }); err != nil {
				return err
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
	return nil
}

// record lists a key in failed/ and counts it.
func (s *sweeper) record(key, why string, count func(*Progress)) error {
	s.mu.Lock()
	err := s.failed.Write(failedRow{Address: key, Error: why})
	s.mu.Unlock()
	s.cnt.update(count)
	return err
}

// deleteBatch deletes keys, retrying the transient failures; an error is
// returned only when the sweep must stop. Each call of the deleter takes a
// place in the window and tells it how the store answered.
func (s *sweeper) deleteBatch(ctx context.Context, keys []string) error {
	if s.move != nil {
		var err error
		if keys, err = s.moveBatch(ctx, keys); err != nil || len(keys) == 0 {
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
		sl, err := s.win.Acquire(ctx)
		if err != nil {
			return err
		}
		failed, err := s.deleter.DeleteBatch(ctx, keys)
		s.win.Release(sl, judgeBatch(failed, err, s.cls), 0)
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
			case s.cls.isNotFound(kerr):
				gone++
			case s.cls.transient(kerr) && attempt < deleteAttempts:
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
		if err := s.cfg.backoff.Wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// judgeBatch says what a DeleteBatch call tells the window: throttled when
// the call or any key was throttled.
func judgeBatch(failed map[string]error, err error, cs classifiers) aimd.Outcome {
	if err != nil {
		return cs.classifier().Judge(err)
	}
	for _, kerr := range failed {
		if kerr != nil && cs.classifier().Judge(kerr) == aimd.Throttled {
			return aimd.Throttled
		}
	}
	return aimd.Answered
}

// removeObject deletes key if it exists. A look-up or a delete that fails
// as not found is one the store's own answer says so of (isNotFound, as
// removeFolder): gcsblob calls GCS's 403 NotFound, and the object is still
// there. (Not bucket.Exists, which answers false for any NotFound.)
func removeObject(ctx context.Context, bucket *blob.Bucket, cs classifiers, key string) error {
	if err := blobio.Remove(ctx, bucket, key, cs.isNotFound); err != nil {
		return fmt.Errorf("sweep: remove %s: %w", key, err)
	}
	return nil
}
