package gcsdelete

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"cloud.google.com/go/storage"
	"github.com/lakegc/lakegc/internal/storecode"
	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// DefaultConcurrency is the number of deletes one DeleteBatch call keeps in
// flight.
const DefaultConcurrency = 16

// ErrNotGCS is returned by FromBucket for a bucket that is not gcsblob's.
var ErrNotGCS = errors.New("gcsdelete: not a GCS bucket")

// ErrInvalidInput is wrapped by the error of FromBucket for an option given
// an invalid value.
var ErrInvalidInput = errors.New("gcsdelete: invalid input")

// Option configures FromBucket.
type Option func(*Deleter) error

// WithConcurrency sets how many deletes one DeleteBatch call keeps in
// flight (default DefaultConcurrency); n > 0. Sweep keeps up to the top of
// its delete concurrency (sweep.WithDeleteConcurrencyRange, 64 by default,
// or sweep.WithDeleteConcurrency) calls in flight, so up to their product of
// requests are in flight.
func WithConcurrency(n int) Option {
	return func(d *Deleter) error {
		if n <= 0 {
			return fmt.Errorf("%w: concurrency %d", ErrInvalidInput, n)
		}
		d.concurrency = n
		return nil
	}
}

// Deleter is a sweep.BatchDeleter that deletes the objects of a batch
// concurrently with the bucket's GCS client. It is safe for concurrent use.
type Deleter struct {
	bucket      *blob.Bucket
	concurrency int
}

// FromBucket returns a deleter for a bucket opened with gcsblob (possibly
// wrapped by blob.PrefixedBucket). Another bucket is an error wrapping
// ErrNotGCS; an option given an invalid value, one wrapping
// ErrInvalidInput. Nil options are ignored.
func FromBucket(b *blob.Bucket, opts ...Option) (sweep.BatchDeleter, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrNotGCS)
	}
	var client *storage.Client
	if !b.As(&client) || client == nil {
		return nil, ErrNotGCS
	}
	d := &Deleter{bucket: b, concurrency: DefaultConcurrency}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(d); err != nil {
			return nil, err
		}
	}
	if _, err := d.object(context.Background(), "probe"); err != nil {
		return nil, err
	}
	return d, nil
}

// errResolved stops the read whose object handle object captured.
var errResolved = errors.New("gcsdelete: resolved")

// object returns the handle gcsblob uses for key (the bucket's prefix and
// gcsblob's escaping applied, bound to the bucket's client), captured in
// BeforeRead, before anything is sent.
func (d *Deleter) object(ctx context.Context, key string) (*storage.ObjectHandle, error) {
	var handle **storage.ObjectHandle
	_, err := d.bucket.NewRangeReader(ctx, key, 0, 0, &blob.ReaderOptions{
		BeforeRead: func(as func(any) bool) error {
			as(&handle)
			return errResolved
		},
	})
	if handle == nil || *handle == nil {
		if err == nil || errors.Is(err, errResolved) {
			err = ErrNotGCS
		}
		return nil, fmt.Errorf("gcsdelete: key %q: %w", key, err)
	}
	return *handle, nil
}

// DeleteBatch deletes keys, up to the concurrency at once, each with one
// request. Objects GCS does not delete are returned in failed with GCS's
// error (a *googleapi.Error, which Classifier classifies by its status, or
// storage.ErrObjectNotExist for an object already gone). err is only
// ctx's.
func (d *Deleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	var (
		mu     sync.Mutex
		failed map[string]error
		wg     sync.WaitGroup
		work   = make(chan string)
	)
	for range min(d.concurrency, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				obj, err := d.object(ctx, k)
				if err == nil {
					err = obj.Delete(ctx)
				}
				if err != nil {
					mu.Lock()
					if failed == nil {
						failed = make(map[string]error)
					}
					failed[k] = fmt.Errorf("gcsdelete: %q: %w", k, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		work <- k
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return failed, err
	}
	return failed, nil
}

// Classifier is a sweep.ErrorClassifier of Google's errors: a
// *googleapi.Error in the chain is classified by its status (see
// sweep.BatchDeleter), as gcsblob's own codes mislead (GCS's 403, a
// retention policy, a hold or a missing permission, is NotFound to it and
// would count as an object already gone). Package sweep reads GCS's answers
// the same way itself (googleapi comes with gocloud.dev/blob), so a host
// need not give it to sweep.WithErrorClassifier; a Deleter classifies its
// errors with it. The zero value is ready to use.
type Classifier struct{}

// ClassifyError returns the code of the GCS answer in err's chain; ok is
// false when there is none.
func (Classifier) ClassifyError(err error) (code gcerrors.ErrorCode, ok bool) {
	var g *googleapi.Error
	if errors.As(err, &g) {
		return storecode.GCS(g.Code), true
	}
	return gcerrors.Unknown, false
}

// ClassifyError classifies the errors of the bucket and of DeleteBatch, as
// Classifier.
func (d *Deleter) ClassifyError(err error) (gcerrors.ErrorCode, bool) {
	return Classifier{}.ClassifyError(err)
}
