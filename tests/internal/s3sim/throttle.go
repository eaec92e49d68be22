package s3sim

import (
	"math"
	"sync"
	"time"
)

// throttle is a token bucket per partition and class (reads, writes): each
// holds at most a second's worth of requests and refills at the rate, so a
// burst of a second's requests passes and a sustained rate above it does
// not. A request that needs more than a second's worth (a delete batch of
// more keys than the write rate) passes when its bucket is full and leaves
// it in debt, so that it is slowed to the rate rather than refused for
// ever.
type throttle struct {
	now   func() time.Time
	rates [2]float64 // reads, writes

	mu      sync.Mutex
	buckets map[tkey]*tbucket
}

type tkey struct {
	part  string
	write bool
}

type tbucket struct {
	tokens float64
	at     time.Time
}

func newThrottle(now func() time.Time, reads, writes float64) *throttle {
	return &throttle{now: now, rates: [2]float64{reads, writes}, buckets: map[tkey]*tbucket{}}
}

// take takes a token for each of parts (a partition named n times takes n)
// and reports whether all were there (a full bucket for n above the rate);
// if not, it takes none.
func (t *throttle) take(write bool, parts []string) bool {
	rate := t.rates[0]
	if write {
		rate = t.rates[1]
	}
	if math.IsInf(rate, 1) {
		return true
	}
	need := make(map[string]float64, 1)
	for _, p := range parts {
		need[p]++
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for p, n := range need {
		b := t.buckets[tkey{p, write}]
		if b == nil {
			b = &tbucket{tokens: rate, at: now}
			t.buckets[tkey{p, write}] = b
		}
		if d := now.Sub(b.at); d > 0 {
			b.tokens = min(rate, b.tokens+d.Seconds()*rate)
			b.at = now
		}
		if b.tokens < min(n, rate) {
			return false
		}
	}
	for p, n := range need {
		t.buckets[tkey{p, write}].tokens -= n
	}
	return true
}
