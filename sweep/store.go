package sweep

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"gocloud.dev/blob"
)

// A Store is a bucket with what SweepOptions say about using it: the
// storage prefix, the clock, the logger, the retries of transient errors
// and the reading of the store's errors, and the BatchDeleter. Packages
// that build on Sweep (sweep/quarantine) work through one, so that they
// read and retry the store's answers as Sweep does. Safe for concurrent
// use.
type Store struct {
	bucket  *blob.Bucket
	cfg     *config
	cls     classifiers  // WithErrorClassifier's, then the deleter's own
	deleter BatchDeleter // WithBatchDeleter's, or bucket.Delete key by key
	batch   int          // the keys a DeleteBatch call takes
}

// NewStore returns the Store of bucket and opts: the options Sweep takes,
// of which it uses WithStoragePrefix, WithClock, WithLogger, WithBackoff,
// WithErrorClassifier and WithBatchDeleter. A nil bucket or an invalid
// option is an error wrapping ErrInvalidInput.
func NewStore(bucket *blob.Bucket, opts ...SweepOption) (*Store, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	cfg := newSweepConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	s := &Store{bucket: bucket, cfg: cfg, cls: cfg.classify, deleter: cfg.deleter, batch: maxBatch}
	if s.deleter == nil {
		s.deleter, s.batch = bucketDeleter{bucket: bucket}, defaultBatch
	}
	if c, ok := s.deleter.(ErrorClassifier); ok {
		// The deleter reads its own refusals.
		s.cls = append(slices.Clip(s.cls), c)
	}
	return s, nil
}

// Bucket is the store's bucket.
func (s *Store) Bucket() *blob.Bucket { return s.bucket }

// StoragePrefix is WithStoragePrefix's folder, DefaultStoragePrefix by default.
func (s *Store) StoragePrefix() string { return s.cfg.storagePrefix }

// Now is the time of WithClock's clock.
func (s *Store) Now() time.Time { return s.cfg.clock() }

// Logger is WithLogger's logger, nil without one.
func (s *Store) Logger() *slog.Logger { return s.cfg.logger }

// IsNotFound reports whether err says the object is not there, read as
// Sweep reads a delete's answer (see BatchDeleter): GCS's 403, which gcsblob
// calls NotFound, is a refusal, not a missing object.
func (s *Store) IsNotFound(err error) bool { return s.cls.isNotFound(err) }

// Retry calls op until it succeeds, fails with an error that is not
// transient (see BatchDeleter), or was called five times (the attempts
// Sweep gives a key), waiting WithBackoff's backoff between calls; it
// returns op's last error, or ctx's when ctx ends a wait.
func (s *Store) Retry(ctx context.Context, op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !s.cls.transient(err) || attempt == deleteAttempts {
			return err
		}
		if err := s.cfg.backoff.Wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// BatchSize is the most keys DeleteBatch takes at once: 1000 with
// WithBatchDeleter's deleter, 100 with the bucket's Delete.
func (s *Store) BatchSize() int { return s.batch }

// DeleteBatch deletes keys, at most BatchSize of them, through the
// BatchDeleter, once, with its contract.
func (s *Store) DeleteBatch(ctx context.Context, keys []string) (failed map[string]error, err error) {
	return s.deleter.DeleteBatch(ctx, keys)
}

// A Mover moves Sweep's candidates aside before their originals are
// deleted (WithMover); package sweep/quarantine's moves them into the
// run's quarantine.
type Mover interface {
	// StartMove is called once by each Sweep given the Mover, after the
	// earlier sweep's report was removed and before the first batch, with
	// the sweep's store and run. It returns the folder the candidates go
	// to, which Result.Quarantine and sweep.json name, and the move of a
	// batch; a nil move with a nil error fails the sweep with
	// ErrInvalidInput before any delete.
	StartMove(ctx context.Context, st *Store, runID string) (folder string, move MoveFunc, err error)
}

// A MoveFunc moves keys, a batch of candidates, and returns the keys it did
// not move with their errors, as BatchDeleter's DeleteBatch does: Sweep
// deletes the others through the BatchDeleter (Result.Deleted counts
// them), counts a key whose error reads NotFound (see BatchDeleter) as gone
// already, and lists any other in failed/ with its error's text (a key
// listed with a nil error is not moved either: it is kept and listed). err
// stops the sweep. Sweep calls it from several goroutines at once.
type MoveFunc func(ctx context.Context, keys []string) (failed map[string]error, err error)

// WithMover makes Sweep hand each batch of candidates to m before it
// deletes the batch's originals, and delete only the ones m moved (nil:
// delete them all, the default).
func WithMover(m Mover) SweepOption {
	return sweepOnly("Mover", func(c *config) { c.mover = m })
}

// moveBatch moves keys aside through s.move and returns the moved ones,
// whose originals are to be deleted; the others are counted, gone already
// or failed and listed.
func (s *sweeper) moveBatch(ctx context.Context, keys []string) ([]string, error) {
	failed, err := s.move(ctx, keys)
	if err != nil || len(failed) == 0 {
		return keys, err
	}
	moved := keys[:0:0]
	for _, k := range keys {
		kerr, listed := failed[k]
		switch {
		case !listed:
			moved = append(moved, k)
		case kerr == nil:
			// Listed as not moved, but without a reason: keep it.
			if err := s.record(k, "not moved (the Mover gave no error)", func(p *Progress) { p.Failed++ }); err != nil {
				return nil, err
			}
		case s.cls.isNotFound(kerr):
			// Gone from its place (deleted by an earlier sweep after its
			// move, or by someone else): nothing to move.
			s.cnt.update(func(p *Progress) { p.AlreadyGone++ })
		default:
			if err := s.record(k, kerr.Error(), func(p *Progress) { p.Failed++ }); err != nil {
				return nil, err
			}
		}
	}
	return moved, nil
}
