package aimd

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
// hi — by one request in a doubling window (NewDoubling) until its first
// fresh throttle or four times its start, else by 1/size — and one that
// came while the caller mostly worked, or an error, leaves it.
func TestWindowProperties(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		lo := 1 + rng.IntN(4)
		hi := lo + rng.IntN(40)
		w := New(lo, rng.IntN(hi+2), hi)
		doubling := seed%2 == 1
		if doubling {
			start := rng.IntN(hi + 2)
			w = NewDoubling(lo, start, hi)
			// It doubles up to four times its start (clamped), at most hi.
			until := min(4*float64(min(max(start, lo), hi)), w.hi)
			require.Equal(t, until, w.until)
			doubling = w.size < until
		}
		require.GreaterOrEqual(t, w.size, w.lo)
		require.LessOrEqual(t, w.size, w.hi)
		for step := range 500 {
			epoch := w.epoch
			if rng.IntN(4) == 0 && epoch > 0 {
				epoch-- // a request sent before the last decrease
			}
			o := Outcome(rng.IntN(3))
			latency := time.Duration(rng.IntN(100)) * time.Millisecond
			work := time.Duration(rng.IntN(100)) * time.Millisecond
			before, fresh := w.size, epoch == w.epoch
			w.adjust(epoch, o, latency, work)
			after := w.size
			var bad string
			switch {
			case after < w.lo || after > w.hi:
				bad = "out of bounds"
			case o == Throttled && fresh:
				if after != max(before/2, w.lo) {
					bad = "a fresh throttle did not halve it"
				}
			case o == Answered && latency >= work && before < w.hi && doubling:
				if after != min(before+1, w.until) {
					bad = "a slow answer did not grow a doubling window by one, to at most four times its start"
				}
			case o == Answered && latency >= work && before < w.hi:
				if after <= before || after-before > 1/before+1e-9 {
					bad = "a slow answer did not grow it by 1/size"
				}
			default:
				if after != before {
					bad = "it moved"
				}
			}
			if bad != "" {
				t.Fatalf("seed %d step %d: [%v, %v], %v (fresh %v, latency %v, work %v, doubling %v): %v -> %v: %s",
					seed, step, w.lo, w.hi, o, fresh, latency, work, doubling, before, after, bad)
			}
			// A window doubles until the first throttle, or until it
			// reaches hi: then it grows as New's.
			if o == Throttled && fresh || after == w.hi || after == w.until {
				doubling = false
			}
			require.Equal(t, doubling, w.doubling, "seed %d step %d", seed, step)
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
		w := New(c.lo, c.start, c.hi)
		var sizes []int
		throttles := 0
		for range 2000 {
			n := w.Limit()
			sizes = append(sizes, n)
			slots := make([]Ticket, n)
			for i := range slots {
				var err error
				slots[i], err = w.Acquire(ctx)
				require.NoError(t, err)
			}
			for i, s := range slots {
				o := Answered
				if i >= c.capacity {
					o = Throttled
					throttles++
				}
				w.Release(s, o, 0)
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
		require.LessOrEqual(t, w.MaxInFlight(), c.hi)
	}
}

// TestWindowDoublesUntilThrottled: a doubling window of 8 against a store
// with room for 100 requests at once reaches its bound of 32 in two rounds
// (a window from New needs 24); after a throttled answer it halves and then
// grows by about one request a round.
func TestWindowDoublesUntilThrottled(t *testing.T) {
	ctx := context.Background()
	round := func(w *Window, o Outcome) int {
		n := w.Limit()
		slots := make([]Ticket, n)
		for i := range slots {
			var err error
			slots[i], err = w.Acquire(ctx)
			require.NoError(t, err)
		}
		for _, s := range slots {
			w.Release(s, o, 0)
		}
		return w.Limit()
	}
	w, plain := NewDoubling(1, 8, 32), New(1, 8, 32)
	require.Equal(t, 16, round(w, Answered))
	require.Equal(t, 32, round(w, Answered))
	require.Equal(t, 32, round(w, Answered))
	require.Equal(t, 8, round(plain, Answered)) // 8 + 8 × about 1/8
	require.Equal(t, 9, round(plain, Answered))

	// A wide range: doubling stops at four times the start, then one a
	// round.
	w = NewDoubling(1, 8, 1024)
	require.Equal(t, 16, round(w, Answered))
	require.Equal(t, 32, round(w, Answered))
	require.Equal(t, 32, round(w, Answered)) // 32 + 32 × about 1/32
	require.Equal(t, 33, round(w, Answered))

	w = NewDoubling(1, 8, 64)
	require.Equal(t, 16, round(w, Answered))
	require.Equal(t, 8, round(w, Throttled))
	require.Equal(t, 8, round(w, Answered))
	require.Equal(t, 9, round(w, Answered))
}

// TestWindowBurstHalvesOnce sends a window's worth of requests together and
// throttles them all: the window halves once, not once per answer.
func TestWindowBurstHalvesOnce(t *testing.T) {
	ctx := context.Background()
	w := New(1, 32, 32)
	var slots []Ticket
	for range 32 {
		s, err := w.Acquire(ctx)
		require.NoError(t, err)
		slots = append(slots, s)
	}
	for _, s := range slots {
		w.Release(s, Throttled, 0)
	}
	require.Equal(t, 16, w.Limit())
	// The next round's throttle halves it again.
	s, err := w.Acquire(ctx)
	require.NoError(t, err)
	w.Release(s, Throttled, 0)
	require.Equal(t, 8, w.Limit())
}

// TestWindowHoldsWhenWorkDominates: answers that come back faster than the
// caller handles them do not grow the window; slow ones do.
func TestWindowHoldsWhenWorkDominates(t *testing.T) {
	w := New(1, 4, 64)
	for range 100 {
		w.adjust(w.epoch, Answered, time.Millisecond, 10*time.Millisecond)
	}
	require.Equal(t, 4, w.Limit())
	for range 100 {
		w.adjust(w.epoch, Answered, 10*time.Millisecond, time.Millisecond)
	}
	require.Greater(t, w.Limit(), 4)
}

// TestWindowConcurrent hammers a window from many goroutines with random
// answers: the requests in flight, counted outside the window, never exceed
// its bound, and the window's own count agrees.
func TestWindowConcurrent(t *testing.T) {
	ctx := context.Background()
	w := New(2, 4, 12)
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
				s, err := w.Acquire(ctx)
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
				w.Release(s, Outcome(rng.IntN(3)), 0)
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, peak, 12)
	require.LessOrEqual(t, w.MaxInFlight(), 12)
	require.GreaterOrEqual(t, w.MaxInFlight(), peak)
	require.Zero(t, w.inflight)
}

// TestWindowAcquireCancelled: a full window's waiter returns when its
// context ends.
func TestWindowAcquireCancelled(t *testing.T) {
	w := New(1, 1, 1)
	s, err := w.Acquire(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = w.Acquire(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	w.Release(s, Answered, 0)
	_, err = w.Acquire(context.Background())
	require.NoError(t, err)
}
