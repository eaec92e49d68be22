package sweep

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWindowProperties drives windows of random bounds with random answers
// and checks each step against what AIMD promises: the size stays within
// its bounds; a throttled request sent since the last decrease halves it (to
// no less than lo), an older one leaves it; an answer that came while the
// caller mostly waited (latency at least the work) grows it unless it is at
// hi, and one that came while the caller mostly worked, or an error, leaves
// it.
func TestWindowProperties(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		lo := 1 + rng.IntN(4)
		hi := lo + rng.IntN(40)
		w := newWindow(lo, rng.IntN(hi+2), hi)
		require.GreaterOrEqual(t, w.size, w.lo)
		require.LessOrEqual(t, w.size, w.hi)
		for step := range 500 {
			epoch := w.epoch
			if rng.IntN(4) == 0 && epoch > 0 {
				epoch-- // a request sent before the last decrease
			}
			o := outcome(rng.IntN(3))
			latency := time.Duration(rng.IntN(100)) * time.Millisecond
			work := time.Duration(rng.IntN(100)) * time.Millisecond
			before, fresh := w.size, epoch == w.epoch
			w.adjust(epoch, o, latency, work)
			after := w.size
			var bad string
			switch {
			case after < w.lo || after > w.hi:
				bad = "out of bounds"
			case o == throttled && fresh:
				if after != max(before/2, w.lo) {
					bad = "a fresh throttle did not halve it"
				}
			case o == answered && latency >= work && before < w.hi:
				if after <= before || after-before > 1 {
					bad = "a slow answer did not grow it by at most one"
				}
			default:
				if after != before {
					bad = "it moved"
				}
			}
			if bad != "" {
				t.Fatalf("seed %d step %d: [%v, %v], %v (fresh %v, latency %v, work %v): %v -> %v: %s",
					seed, step, w.lo, w.hi, o, fresh, latency, work, before, after, bad)
			}
		}
	}
}

// TestWindowFollowsCapacity runs a window against a store that throttles
// every request beyond its capacity at once: the window climbs to the
// capacity, halves when it passes it, and so saw-tooths between about half
// the capacity and the capacity, never beyond its own bound.
func TestWindowFollowsCapacity(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ lo, start, hi, capacity int }{
		{1, 8, 64, 20},
		{1, 16, 64, 3},
		{1, 1, 10, 100}, // a store faster than the bound: the window stays at it
		{4, 8, 32, 2},   // a store slower than the floor: the window stays at it
	} {
		w := newWindow(c.lo, c.start, c.hi)
		var sizes []int
		throttles := 0
		for range 2000 {
			n := w.limit()
			sizes = append(sizes, n)
			slots := make([]ticket, n)
			for i := range slots {
				var err error
				slots[i], err = w.acquire(ctx)
				require.NoError(t, err)
			}
			for i, s := range slots {
				o := answered
				if i >= c.capacity {
					o = throttled
					throttles++
				}
				w.release(s, o, 0)
			}
		}
		tail := sizes[len(sizes)/2:]
		lo, hi, sum := tail[0], tail[0], 0
		for _, n := range tail {
			lo, hi, sum = min(lo, n), max(hi, n), sum+n
		}
		want := min(max(c.capacity, c.lo), c.hi)
		require.LessOrEqual(t, hi, min(c.hi, max(want+1, c.lo)), "%+v: %v", c, tail[:20])
		require.GreaterOrEqual(t, lo, max(c.lo, want/2-1), "%+v", c)
		if c.capacity < c.hi && c.capacity >= c.lo {
			require.Positive(t, throttles, "%+v: the window never probed the capacity", c)
			require.GreaterOrEqual(t, float64(sum)/float64(len(tail)), 0.6*float64(want), "%+v", c)
		}
		require.LessOrEqual(t, w.maxInFlight(), c.hi)
	}
}

// TestWindowBurstHalvesOnce sends a window's worth of requests together and
// throttles them all: the window halves once, not once per answer.
func TestWindowBurstHalvesOnce(t *testing.T) {
	ctx := context.Background()
	w := newWindow(1, 32, 32)
	var slots []ticket
	for range 32 {
		s, err := w.acquire(ctx)
		require.NoError(t, err)
		slots = append(slots, s)
	}
	for _, s := range slots {
		w.release(s, throttled, 0)
	}
	require.Equal(t, 16, w.limit())
	// The next round's throttle halves it again.
	s, err := w.acquire(ctx)
	require.NoError(t, err)
	w.release(s, throttled, 0)
	require.Equal(t, 8, w.limit())
}

// TestWindowHoldsWhenWorkDominates: answers that come back faster than the
// caller handles them do not grow the window; slow ones do.
func TestWindowHoldsWhenWorkDominates(t *testing.T) {
	w := newWindow(1, 4, 64)
	for range 100 {
		w.adjust(w.epoch, answered, time.Millisecond, 10*time.Millisecond)
	}
	require.Equal(t, 4, w.limit())
	for range 100 {
		w.adjust(w.epoch, answered, 10*time.Millisecond, time.Millisecond)
	}
	require.Greater(t, w.limit(), 4)
}

// TestWindowConcurrent hammers a window from many goroutines with random
// answers: the requests in flight, counted outside the window, never exceed
// its bound, and the window's own count agrees.
func TestWindowConcurrent(t *testing.T) {
	ctx := context.Background()
	w := newWindow(2, 4, 12)
	var (
		mu             sync.Mutex
		inFlight, peak int
	)
	var wg sync.WaitGroup
	for g := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for range 200 {
				s, err := w.acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inFlight++
				peak = max(peak, inFlight)
				mu.Unlock()
				if rng.IntN(10) == 0 {
					time.Sleep(time.Microsecond)
				}
				mu.Lock()
				inFlight--
				mu.Unlock()
				w.release(s, outcome(rng.IntN(3)), 0)
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, peak, 12)
	require.LessOrEqual(t, w.maxInFlight(), 12)
	require.GreaterOrEqual(t, w.maxInFlight(), peak)
	require.Zero(t, w.inflight)
}

// TestWindowAcquireCancelled: a full window's waiter returns when its
// context ends.
func TestWindowAcquireCancelled(t *testing.T) {
	w := newWindow(1, 1, 1)
	s, err := w.acquire(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = w.acquire(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	w.release(s, answered, 0)
	_, err = w.acquire(context.Background())
	require.NoError(t, err)
}

// TestBackoffWaits checks the waits of a backoff: each within the upper half
// of lo doubled per retry, capped at hi, also past the point where doubling
// would overflow.
func TestBackoffWaits(t *testing.T) {
	var got []time.Duration
	b := backoff{lo: time.Second, hi: 2 * time.Minute, sleep: func(_ context.Context, d time.Duration) error {
		got = append(got, d)
		return nil
	}}
	for n := 1; n <= 12; n++ {
		require.NoError(t, b.wait(context.Background(), n))
	}
	require.Len(t, got, 12)
	for i, d := range got {
		full := min(time.Second<<i, 2*time.Minute)
		require.GreaterOrEqual(t, d, full/2, "retry %d", i+1)
		require.LessOrEqual(t, d, full, "retry %d", i+1)
	}
	huge := backoff{lo: time.Hour, hi: 1<<63 - 1, sleep: b.sleep}
	got = nil
	require.NoError(t, huge.wait(context.Background(), 80))
	require.Len(t, got, 1)
	require.Positive(t, got[0])
	require.GreaterOrEqual(t, got[0], huge.hi/2, "the 80th wait is capped at hi")
}

// TestConcurrencyOptions: the ranges' zero values mean their defaults, a
// fixed concurrency is a range of one value, the last option wins, and
// invalid ranges are errors wrapping ErrInvalidInput.
func TestConcurrencyOptions(t *testing.T) {
	def := newConfig(nil)
	require.Equal(t, span{1, DefaultListConcurrency, DefaultMaxListConcurrency}, def.list)
	require.Equal(t, span{1, DefaultDeleteConcurrency, DefaultMaxDeleteConcurrency}, def.delete)
	require.Equal(t, DefaultMinBackoff, def.backoff.lo)
	require.Equal(t, DefaultMaxBackoff, def.backoff.hi)
	for _, c := range []struct {
		name       string
		opts       []Option
		list, del  span
		minB, maxB time.Duration
	}{
		{"zeros", []Option{WithListConcurrencyRange(0, 0), WithDeleteConcurrencyRange(0, 0), WithBackoff(0, 0), WithListConcurrency(0), WithDeleteConcurrency(0)},
			def.list, def.delete, DefaultMinBackoff, DefaultMaxBackoff},
		{"fixed", []Option{WithListConcurrency(3), WithDeleteConcurrency(5)}, span{3, 3, 3}, span{5, 5, 5}, DefaultMinBackoff, DefaultMaxBackoff},
		{"ranges start within", []Option{WithListConcurrencyRange(12, 20), WithDeleteConcurrencyRange(2, 4)}, span{12, 12, 20}, span{2, 4, 4}, DefaultMinBackoff, DefaultMaxBackoff},
		{"high floor", []Option{WithListConcurrencyRange(100, 0), WithDeleteConcurrencyRange(0, 3)}, span{100, 100, 100}, span{1, 3, 3}, DefaultMinBackoff, DefaultMaxBackoff},
		{"last wins", []Option{WithListConcurrencyRange(2, 9), WithListConcurrency(4)}, span{4, 4, 4}, def.delete, DefaultMinBackoff, DefaultMaxBackoff},
		{"backoff", []Option{WithBackoff(time.Millisecond, time.Second)}, def.list, def.delete, time.Millisecond, time.Second},
		{"long floor", []Option{WithBackoff(5*time.Minute, 0)}, def.list, def.delete, 5 * time.Minute, 5 * time.Minute},
	} {
		cfg := newConfig(c.opts)
		require.NoError(t, cfg.err, c.name)
		require.Equal(t, c.list, cfg.list, c.name)
		require.Equal(t, c.del, cfg.delete, c.name)
		require.Equal(t, c.minB, cfg.backoff.lo, c.name)
		require.Equal(t, c.maxB, cfg.backoff.hi, c.name)
	}
	for _, o := range []Option{
		WithListConcurrencyRange(-1, 4), WithListConcurrencyRange(5, 4), WithListConcurrencyRange(0, -1),
		WithDeleteConcurrencyRange(-1, 0), WithDeleteConcurrencyRange(9, 8),
		WithBackoff(-time.Second, 0), WithBackoff(time.Second, -1), WithBackoff(time.Minute, time.Second),
		WithDeleteConcurrency(-2),
	} {
		require.ErrorIs(t, newConfig([]Option{o}).err, ErrInvalidInput)
	}
}

// TestConcurrencyBound: Sweep starts a worker per batch it may keep in
// flight, and Mark one per slice it may list at once, so a concurrency past
// maxConcurrency is refused rather than made into that many goroutines; at
// the bound it is taken.
func TestConcurrencyBound(t *testing.T) {
	for _, o := range []Option{
		WithDeleteConcurrencyRange(0, 1<<40), WithDeleteConcurrencyRange(maxConcurrency+1, 0),
		WithListConcurrencyRange(0, maxConcurrency+1), WithListConcurrencyRange(1<<40, 0),
		WithDeleteConcurrency(1 << 40), WithListConcurrency(maxConcurrency + 1),
	} {
		err := newConfig([]Option{o}).err
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, "1024")
	}
	cfg := newConfig([]Option{WithDeleteConcurrencyRange(0, maxConcurrency), WithListConcurrency(maxConcurrency)})
	require.NoError(t, cfg.err)
	require.Equal(t, span{1, DefaultDeleteConcurrency, maxConcurrency}, cfg.delete)
	require.Equal(t, span{maxConcurrency, maxConcurrency, maxConcurrency}, cfg.list)
}
