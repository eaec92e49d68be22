// Package retry makes a store's requests within an [aimd.Window], trying a
// request again after a [Backoff] when it fails with a transient error, and
// lists a prefix one page (one request) at a time that way: a [Pager].
// Package sweep lists Mark's slices through Pagers, and waits out Sweep's
// and its Store's retries with the same Backoff and the same judgement of
// an error ([Transient], [Judge]).
//
// An error's gocloud code is read as package storecode reads it: an error
// that tells its own code, then the caller's [Classifier], then the store's
// answer read without an SDK, then gocloud's portable code. A request is
// tried again when that code is transient: ResourceExhausted (throttled),
// Unknown, Internal or DeadlineExceeded; any other error ends it at once.
package retry

import (
	"context"
	"math/rand/v2"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/storecode"
)

// PageAttempts is the attempts of a listing page that fails with a
// transient error, the first included. With sweep's default backoff (1 s
// to 2 min), ten attempts wait out three to six minutes of throttling
// (1+2+...+64+120+120 s at most, each wait drawn from its upper half).
const PageAttempts = 10

// PageSize is the keys a listing request asks for: the most S3 returns.
const PageSize = 1000

// Backoff is the wait before each retry of a request: from Min, doubling
// with each retry up to Max, each wait drawn uniformly from its upper half
// so that requests throttled together do not come back together.
type Backoff struct {
	Min, Max time.Duration
	// Sleep waits: the function Sleep, but in tests, which run minutes
	// of backoff in simulated time.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Wait sleeps before retry number n (1 for the first retry).
func (b Backoff) Wait(ctx context.Context, n int) error {
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		if d > b.Max/2 {
			d = b.Max
			break
		}
		d *= 2
	}
	d = min(d, b.Max)
	return b.Sleep(ctx, d/2+rand.N(d/2+1))
}

// Sleep waits d, or until ctx is done, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A Classifier tells the gocloud code of an error of its store when it
// knows better than gocloud's portable code, and ok false for an error it
// does not know (see storecode.Code). A nil Classifier knows none.
type Classifier func(err error) (code gcerrors.ErrorCode, ok bool)

// Code is err's gocloud code, read as storecode.Code reads it with c.
func (c Classifier) Code(err error) gcerrors.ErrorCode { return storecode.Code(err, c) }

// Transient reports whether err fails its request for now only, so that
// the request is tried again: its code is ResourceExhausted, Unknown,
// Internal or DeadlineExceeded.
func (c Classifier) Transient(err error) bool {
	switch c.Code(err) {
	case gcerrors.ResourceExhausted, gcerrors.Unknown, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return true
	}
	return false
}

// Judge says what a request's error tells the window: Answered for none,
// Throttled for ResourceExhausted, Failed for any other.
func (c Classifier) Judge(err error) aimd.Outcome {
	switch {
	case err == nil:
		return aimd.Answered
	case c.Code(err) == gcerrors.ResourceExhausted:
		return aimd.Throttled
	}
	return aimd.Failed
}
