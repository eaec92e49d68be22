package sweep

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/retry"
)

// simClock is simulated time for the backoff: a sleep returns at once and
// moves the clock on by its duration, as if the sleeps of every request
// came one after another. A storm of N simulated minutes thus lasts at least
// N minutes of backoff, however many requests wait at once.
type simClock struct {
	mu     sync.Mutex
	now    time.Duration
	sleeps int
}

func (c *simClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now += d
	c.sleeps++
	c.mu.Unlock()
	runtime.Gosched() // let the others run, as a real sleep would
	return nil
}

func (c *simClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// option makes Mark or Sweep sleep on c.
func (c *simClock) option() Option { return func(cfg *config) { cfg.backoff.Sleep = c.sleep } }

// storm answers SlowDown (ResourceExhausted) to every request made before
// the simulated clock reaches end (forever when end is 0), counts the
// requests per key or listed page, and the most requests it saw in flight
// at once. Each request takes a little real time, so that concurrent ones
// overlap.
type storm struct {
	clk *simClock
	end time.Duration

	mu        sync.Mutex
	calls     map[string]int
	inFlight  int
	peak      int
	throttled int
}

func newStorm(clk *simClock, end time.Duration) *storm {
	return &storm{clk: clk, end: end, calls: map[string]int{}}
}

// enter starts a request on keys; it returns whether the storm throttles it.
func (s *storm) enter(keys ...string) bool {
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	for _, k := range keys {
		s.calls[k]++
	}
	s.mu.Unlock()
	time.Sleep(50 * time.Microsecond)
	raging := s.end == 0 || s.clk.elapsed() < s.end
	if raging {
		s.mu.Lock()
		s.throttled++
		s.mu.Unlock()
	}
	return raging
}

func (s *storm) leave() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

func (s *storm) maxCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n = max(n, c)
	}
	return n
}

// stormDeleter deletes through the bucket, key by key, unless the storm
// throttles the batch: then every key of it fails with SlowDown.
type stormDeleter struct {
	*storm
	b *blob.Bucket
}

func (d stormDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	defer d.leave()
	failed := map[string]error{}
	if d.enter(keys...) {
		for _, k := range keys {
			failed[k] = codeErr{gcerrors.ResourceExhausted}
		}
		return failed, nil
	}
	for _, k := range keys {
		if err := d.b.Delete(ctx, k); err != nil {
			failed[k] = err
		}
	}
	return failed, nil
}

// stormLister is a bucket whose listings of folders under the data folder
// the storm throttles (with throttleTop, the top level's and the data
// folder's too); those of the report's folder are not Mark's listing, and
// pass.
func stormLister(d *testDriver, st *storm, throttleTop bool) *blob.Bucket {
	return wrapBucket(d.bucket, faultblob.WithHook(faultblob.List, func(_ context.Context, c *faultblob.Call) error {
		folder := strings.HasPrefix(c.Key, "data/") && c.Key != "data/"
		top := c.Key == "" || c.Key == "data/"
		if !folder && !(top && throttleTop) {
			return nil
		}
		c.After = st.leave
		if st.enter(fmt.Sprintf("%s@%s", c.Key, c.PageToken)) {
			return codeErr{gcerrors.ResourceExhausted}
		}
		return nil
	}))
}

// stormNamespace writes perSlice old objects in each of n slices
// (manySlices), and returns the bucket, a driver over it for the storm to
// wrap or to fail listings with, and the keys.
func stormNamespace(t *testing.T, n, perSlice int) (*blob.Bucket, *testDriver, []string) {
	t.Helper()
	b, keys := manySlices(t, n, perSlice)
	d := &testDriver{}
	newTestBucket(b, d) // d's base is b
	return b, d, keys
}

// requireSwept checks that every candidate ended deleted or, still stored,
// in failed/, and that the counts say so.
func requireSwept(t *testing.T, b *blob.Bucket, keys []string, res *Result) {
	t.Helper()
	ctx := context.Background()
	failed := readFailed(t, b, "run1")
	var gone int64
	for _, k := range keys {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		_, listed := failed[k]
		require.Equal(t, ok, listed, "%s: stored %v, in failed/ %v", k, ok, listed)
		if !ok {
			gone++
		}
	}
	require.Equal(t, int64(len(keys)), res.Deleted+res.AlreadyGone+res.Failed)
	require.Equal(t, gone, res.Deleted+res.AlreadyGone)
	require.Len(t, failed, int(res.Failed))
}

// TestSweepThrottlingStorm sweeps 40 batches of 25 keys while the store answers
// SlowDown to every request for the first two simulated minutes: the
// batches sent early give up after their five attempts and land in failed/,
// the later ones are deleted once the storm ends; no key is tried more than
// five times, and no more batches are in flight than the bound.
func TestSweepThrottlingStorm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, _, keys := stormNamespace(t, 40, 25)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	clk := &simClock{}
	st := newStorm(clk, 2*time.Minute)
	res, err := Sweep(ctx, b, "run1", WithBatchDeleter(stormDeleter{st, b}),
		WithDeleteConcurrencyRange(1, 4), clk.option(), Option(func(c *config) { c.batch = 25 }))
	require.NoError(t, err)
	requireSwept(t, b, keys, res)
	// The first four batches retry together, for at most 4 × (1+2+4+8) s:
	// they fail within the storm. Forty batches that all failed would have
	// slept at least 40 × 7.5 s: the storm ended before.
	require.Positive(t, res.Failed, "the storm failed no batch")
	require.Positive(t, res.Deleted, "nothing deleted after the storm")
	require.LessOrEqual(t, st.maxCalls(), deleteAttempts)
	require.LessOrEqual(t, st.peak, 4)
	require.GreaterOrEqual(t, clk.elapsed(), 2*time.Minute)
	t.Logf("simulated %v in %d sleeps; %d throttled answers; %+v", clk.elapsed(), clk.sleeps, st.throttled, *res)
	// The next sweep deletes what the storm left.
	res, err = Sweep(ctx, b, "run1")
	require.NoError(t, err)
	requireSwept(t, b, keys, res)
	require.Zero(t, res.Failed)
}

// TestSweepEndlessStorm: a store that never stops throttling ends the sweep
// with every key in failed/ after exactly five attempts each, in bounded
// simulated time.
func TestSweepEndlessStorm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, _, keys := stormNamespace(t, 10, 100)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	clk := &simClock{}
	st := newStorm(clk, 0)
	res, err := Sweep(ctx, b, "run1", WithBatchDeleter(stormDeleter{st, b}), clk.option(),
		Option(func(c *config) { c.batch = 100 }))
	require.NoError(t, err)
	requireSwept(t, b, keys, res)
	require.Equal(t, int64(len(keys)), res.Failed)
	for _, k := range keys {
		require.Equal(t, deleteAttempts, st.calls[k], k)
	}
	batches := time.Duration(len(keys)+99) / 100
	require.LessOrEqual(t, clk.elapsed(), batches*(1+2+4+8)*time.Second)
	require.LessOrEqual(t, st.peak, DefaultMaxDeleteConcurrency)
}

// TestMarkThrottlingStorm lists 60 slices while the store answers SlowDown
// to every listing request for the first two simulated minutes: Mark waits
// the storm out and marks every key, no page is requested more than ten
// times, and no more pages are in flight than the bound. (Ten attempts wait
// at least 0.5+1+...+32+60+60 s, over three minutes: no page gives up.)
func TestMarkThrottlingStorm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, d, keys := stormNamespace(t, 60, 30)
	clk := &simClock{}
	st := newStorm(clk, 2*time.Minute)
	sb := stormLister(d, st, false)
	sum, err := Mark(ctx, sb, "run1", noInputs(), WithClock(fixedClock),
		WithListConcurrencyRange(1, 6), clk.option())
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), sum.NumDeletedObjects)
	require.Equal(t, keys, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	require.LessOrEqual(t, st.maxCalls(), retry.PageAttempts)
	require.Greater(t, st.maxCalls(), 1, "the storm throttled nothing")
	require.LessOrEqual(t, st.peak, 6)
	require.GreaterOrEqual(t, clk.elapsed(), 2*time.Minute)
	t.Logf("simulated %v in %d sleeps; %d throttled answers", clk.elapsed(), clk.sleeps, st.throttled)
}

// TestMarkEndlessStorm: a store that never stops throttling its listings
// fails the Mark, each page tried ten times, in bounded simulated time;
// nothing is marked. A permanent refusal fails it at the first answer.
func TestMarkEndlessStorm(t *testing.T) {
	for _, c := range []struct {
		name     string
		code     gcerrors.ErrorCode
		attempts int
	}{
		{"throttled", gcerrors.ResourceExhausted, retry.PageAttempts},
		{"refused", gcerrors.PermissionDenied, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			b, d, _ := stormNamespace(t, 8, 10)
			clk := &simClock{}
			st := newStorm(clk, 0)
			sb := stormLister(d, st, true)
			if c.code != gcerrors.ResourceExhausted {
				d.listErr = func(p string) error {
					if p == "" || strings.HasPrefix(p, "data/") {
						return codeErr{c.code}
					}
					return nil
				}
				st.end = -1 // the storm is over: the driver's own error answers
			}
			_, err := Mark(ctx, sb, "run1", noInputs(), WithClock(fixedClock), clk.option())
			require.Error(t, err)
			require.Equal(t, c.code, gcerrors.Code(err), "%v", err)
			if c.attempts > 1 {
				require.ErrorContains(t, err, fmt.Sprintf("gave up after %d attempts", c.attempts))
			}
			t.Log(err)
			require.NoError(t, ctx.Err(), "Mark hung")
			d.listErr = nil
			requireFailedRun(t, b, "run1")
			require.Equal(t, c.attempts, st.maxCalls())
			// Ten attempts of one page wait at most 1+2+...+64+120+120 s.
			require.LessOrEqual(t, clk.elapsed(), 367*time.Second)
		})
	}
}

// TestMarkWidensOnSlowStore lists 40 slices of three pages through a store
// that takes 20 ms a request: the adaptive window lists more slices at once
// than it started with, within its bound; a fixed concurrency stays at it.
func TestMarkWidensOnSlowStore(t *testing.T) {
	for _, c := range []struct {
		name     string
		opt      MarkOption
		min, max int
	}{
		{"adaptive", WithListConcurrencyRange(0, 24), DefaultListConcurrency + 1, 24},
		{"fixed", WithListConcurrency(DefaultListConcurrency), DefaultListConcurrency, DefaultListConcurrency},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newGenDriver(t, 40, 3000)
			d.discardParts = true
			s := newSlowStore(d, 20*time.Millisecond, 0)
			sum, err := Mark(context.Background(), s.bucket, "run1", noInputs(),
				WithClock(fixedClock), WithTempDir(t.TempDir()), c.opt)
			require.NoError(t, err)
			require.Equal(t, int64(40*3000), sum.NumDeletedObjects)
			require.GreaterOrEqual(t, s.peak, c.min)
			require.LessOrEqual(t, s.peak, c.max)
			t.Logf("%d listing requests in flight at most", s.peak)
		})
	}
}
