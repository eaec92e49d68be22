// Package aimd bounds the requests a client keeps in flight to a store, and
// moves the bound with the store's answers: additive increase,
// multiplicative decrease, as TCP does with its congestion window (and, from
// NewDoubling, its slow start). Package sweep lists (Mark) and deletes
// (Sweep) through a [Window].
package aimd

import (
	"context"
	"sync"
	"time"
)

// Window bounds the requests a caller keeps in flight, and moves that bound
// with the store's answers:
//
//   - A request answered while the caller was mostly waiting on the store
//     (its latency at least the time the caller spent on the previous
//     answer) grows the window by 1/size: by one request per window's worth
//     of such answers. More requests at once then shorten the wait; when the
//     caller's own work dominates, more would only queue, so the window holds.
//   - A throttled request halves the window, at most once per round: only a
//     request sent after the last decrease can decrease it again, so a burst
//     of throttled answers to requests sent together counts once.
//   - Any other answer (another error) leaves it as it is.
//
// A window from [NewDoubling] first grows faster: by one request for each
// such answer, so that it doubles each round (TCP's slow start), until the
// first throttled answer, or until it reaches four times its start (TCP's
// slow-start threshold) or hi; from then on, as above.
//
// The window never leaves [lo, hi]; with lo == hi it is fixed. Safe for
// concurrent use.
type Window struct {
	lo, hi float64
	until  float64 // where a doubling window stops doubling

	mu   sync.Mutex
	size float64 // in [lo, hi]; int(size) requests may be in flight
	// doubling says the window grows by one request per answer: no
	// request was throttled yet, and it is below until.
	doubling bool
	inflight int
	epoch    uint64        // decreases so far
	wake     chan struct{} // closed when a slot may have come free
	peak     int           // the most requests ever in flight
}

// New returns a window of start requests (clamped to [lo, hi]),
// 1 <= lo <= hi.
func New(lo, start, hi int) *Window {
	return &Window{
		lo:   float64(lo),
		hi:   float64(hi),
		size: float64(min(max(start, lo), hi)),
		wake: make(chan struct{}),
	}
}

// NewDoubling returns a window of start requests (clamped to [lo, hi]),
// 1 <= lo <= hi, that doubles each round until the first throttled answer
// or until it reaches four times its start or hi (see [Window]): a caller
// that sends many requests to a store far from its limits gets there in
// two rounds rather than in three times start rounds, and climbs by one a
// round past it, so that a wide range (hi in the hundreds) is not reached
// in a few rounds of requests that a store-wide limit would all throttle.
func NewDoubling(lo, start, hi int) *Window {
	w := New(lo, start, hi)
	w.until = min(4*w.size, w.hi)
	w.doubling = w.size < w.until
	return w
}

// Outcome is what a request's answer tells the window.
type Outcome int

const (
	Answered  Outcome = iota // the store answered (even with a refusal)
	Throttled                // the store asked to slow down
	Failed                   // another error: the window holds
)

// Ticket is a request in flight, from [Window.Acquire] to [Window.Release].
type Ticket struct {
	epoch uint64
	sent  time.Time
}

// Acquire waits until the window has room for one more request, or ctx is
// done.
func (w *Window) Acquire(ctx context.Context) (Ticket, error) {
	for {
		w.mu.Lock()
		if w.inflight < int(w.size) {
			w.inflight++
			w.peak = max(w.peak, w.inflight)
			s := Ticket{epoch: w.epoch, sent: time.Now()}
			w.mu.Unlock()
			return s, nil
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Ticket{}, ctx.Err()
		}
	}
}

// Release ends the request of s, whose answer was o, and whose caller had
// spent work on the previous answer before sending it.
func (w *Window) Release(s Ticket, o Outcome, work time.Duration) {
	latency := time.Since(s.sent)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inflight--
	w.adjust(s.epoch, o, latency, work)
	close(w.wake)
	w.wake = make(chan struct{})
}

// adjust moves the window for one answer; w.mu is held.
func (w *Window) adjust(epoch uint64, o Outcome, latency, work time.Duration) {
	switch {
	case o == Throttled && epoch == w.epoch:
		w.size = max(w.size/2, w.lo)
		w.epoch++
		w.doubling = false
	case o == Answered && latency >= work && w.doubling:
		if w.size = min(w.size+1, w.until); w.size == w.until {
			w.doubling = false
		}
	case o == Answered && latency >= work:
		w.size = min(w.size+1/w.size, w.hi)
	}
}

// Limit returns the requests the window lets in flight now.
func (w *Window) Limit() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.size)
}

// MaxInFlight returns the most requests that were ever in flight at once.
func (w *Window) MaxInFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}
