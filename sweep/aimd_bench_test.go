package sweep

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/time/rate"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// slowStore makes a generated namespace answer like a remote store: every
// listing request of a folder under data/ and every delete request waits
// latency, and beyond limit requests a second (0: no limit) the store
// answers SlowDown, after the same wait.
type slowStore struct {
	*genDriver
	bucket  *blob.Bucket // the generated namespace, slow
	latency time.Duration
	limiter *rate.Limiter

	requests, throttled atomic.Int64

	mu             sync.Mutex
	inFlight, peak int // requests in flight, and their most
}

func newSlowStore(d *genDriver, latency time.Duration, limit int) *slowStore {
	s := &slowStore{genDriver: d, latency: latency}
	s.bucket = wrapBucket(blob.NewBucket(d), faultblob.WithHook(faultblob.List,
		func(_ context.Context, c *faultblob.Call) error {
			if strings.HasPrefix(c.Key, "data/") && c.Delimiter == "" {
				return s.request()
			}
			return nil
		}))
	if limit > 0 {
		s.limiter = rate.NewLimiter(rate.Limit(limit), max(limit/20, 1))
	}
	return s
}

// request is one round trip to the store.
func (s *slowStore) request() error {
	s.requests.Add(1)
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	time.Sleep(s.latency)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	if s.limiter != nil && !s.limiter.Allow() {
		s.throttled.Add(1)
		return codeErr{gcerrors.ResourceExhausted}
	}
	return nil
}

// DeleteBatch deletes keys in one request, as S3's DeleteObjects does; a
// throttled request fails every key.
func (s *slowStore) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	if err := s.request(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		_ = s.genDriver.Delete(ctx, k) // a key already gone is gone
	}
	return nil, nil
}

// concurrencies are the settings the benchmarks compare: the default
// adaptive window, and fixed concurrencies of each of ns.
func concurrencies(list bool, ns ...int) (names []string, opts []any) {
	names, opts = []string{"adaptive"}, []any{Option(func(*config) {})}
	for _, n := range ns {
		names = append(names, fmt.Sprintf("fixed=%d", n))
		if list {
			opts = append(opts, WithListConcurrency(n))
		} else {
			opts = append(opts, WithDeleteConcurrency(n))
		}
	}
	return names, opts
}

// BenchmarkListSlowStore marks 64 generated slices of 5000 keys (320
// listing pages) through a store that takes 50 ms a listing request, as S3
// may, without a limit and with one of 200 requests a second, with the
// default adaptive window and with fixed concurrencies; the backoff is the
// default, 1 s to 2 min. It reports the keys listed a second, and the
// requests and throttled answers per run.
func BenchmarkListSlowStore(b *testing.B) {
	const slices, perSlice = 64, 5000
	names, opts := concurrencies(true, 2, 8, 32)
	for _, limit := range []int{0, 200} {
		for i, opt := range opts {
			b.Run(fmt.Sprintf("limit=%d/%s", limit, names[i]), func(b *testing.B) {
				d := newGenDriver(b, slices, perSlice)
				d.discardParts = true
				s := newSlowStore(d, 50*time.Millisecond, limit)
				bucket := s.bucket
				for range b.N {
					b.StopTimer()
					d.reset()
					b.StartTimer()
					sum, err := Mark(context.Background(), bucket, "bench", noInputs(),
						WithClock(fixedClock), WithTempDir(b.TempDir()), opt.(MarkOption))
					if err != nil {
						b.Fatal(err)
					}
					if sum.NumDeletedObjects != slices*perSlice {
						b.Fatalf("marked %d", sum.NumDeletedObjects)
					}
				}
				n := float64(b.N)
				b.ReportMetric(slices*perSlice*n/b.Elapsed().Seconds(), "keys/s")
				b.ReportMetric(float64(s.requests.Load())/n, "requests/op")
				b.ReportMetric(float64(s.throttled.Load())/n, "throttled/op")
			})
		}
	}
}

// BenchmarkSweepSlowStore sweeps 50,000 generated candidates in 5000
// batches of 10 keys, each batch one request (as S3's DeleteObjects),
// through a store that takes 5 ms a request and answers SlowDown beyond
// 5000 requests a second, with the default adaptive window and with fixed
// concurrencies; the backoff is the default, 1 s to 2 min. It reports the
// keys deleted a second, the keys that ended in failed/, and the requests
// and throttled answers per run.
func BenchmarkSweepSlowStore(b *testing.B) {
	const slices, perSlice, batch = 50, 1000, 10
	names, opts := concurrencies(false, 8, 32, 64)
	for i, opt := range opts {
		b.Run(names[i], func(b *testing.B) {
			d := newGenDriver(b, slices, perSlice)
			s := newSlowStore(d, 5*time.Millisecond, 0)
			bucket := s.bucket
			ctx := context.Background()
			var deleted, failedKeys, requests, throttled int64
			for range b.N {
				b.StopTimer()
				d.reset()
				s.limiter = nil
				if _, err := Mark(ctx, bucket, "bench", noInputs(),
					WithClock(fixedClock), WithTempDir(b.TempDir())); err != nil {
					b.Fatal(err)
				}
				r0, th0 := s.requests.Load(), s.throttled.Load()
				s.limiter = rate.NewLimiter(5000, 250)
				b.StartTimer()
				res, err := Sweep(ctx, bucket, "bench", WithBatchDeleter(s), opt.(SweepOption),
					Option(func(c *config) { c.batch = batch }))
				if err != nil {
					b.Fatal(err)
				}
				deleted += res.Deleted
				failedKeys += res.Failed
				requests += s.requests.Load() - r0
				throttled += s.throttled.Load() - th0
			}
			n := float64(b.N)
			b.ReportMetric(float64(deleted)/b.Elapsed().Seconds(), "keys/s")
			b.ReportMetric(float64(failedKeys)/n, "failed/op")
			b.ReportMetric(float64(requests)/n, "requests/op")
			b.ReportMetric(float64(throttled)/n, "throttled/op")
		})
	}
}
