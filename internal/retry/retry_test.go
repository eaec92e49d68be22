package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/faultblob"
)

func testWindow() *aimd.Window { return aimd.New(1, 8, 32) }

// coded is an error with its own gocloud code.
type coded struct {
	err  error
	code gcerrors.ErrorCode
}

func (e *coded) Error() string                 { return e.err.Error() }
func (e *coded) Unwrap() error                 { return e.err }
func (e *coded) ErrorCode() gcerrors.ErrorCode { return e.code }

// TestBackoffWaits checks the waits of a backoff: each within the upper half
// of Min doubled per retry, capped at Max, also past the point where doubling
// would overflow.
func TestBackoffWaits(t *testing.T) {
	var got []time.Duration
	b := Backoff{Min: time.Second, Max: 2 * time.Minute, Sleep: func(_ context.Context, d time.Duration) error {
		got = append(got, d)
		return nil
	}}
	for n := 1; n <= 12; n++ {
		require.NoError(t, b.Wait(context.Background(), n))
	}
	require.Len(t, got, 12)
	for i, d := range got {
		full := min(time.Second<<i, 2*time.Minute)
		require.GreaterOrEqual(t, d, full/2, "retry %d", i+1)
		require.LessOrEqual(t, d, full, "retry %d", i+1)
	}
	huge := Backoff{Min: time.Hour, Max: 1<<63 - 1, Sleep: b.Sleep}
	got = nil
	require.NoError(t, huge.Wait(context.Background(), 80))
	require.Len(t, got, 1)
	require.Positive(t, got[0])
	require.GreaterOrEqual(t, got[0], huge.Max/2, "the 80th wait is capped at Max")
}

// TestBucketListingFailureSticks: the bucket's pager, asked again after a
// page failed for good, gives the error again, never io.EOF nor the
// objects after the failed page.
func TestBucketListingFailureSticks(t *testing.T) {
	ctx := context.Background()
	inner := memblob.OpenBucket(nil)
	defer inner.Close()
	for i := range 3 * PageSize / 2 {
		require.NoError(t, inner.WriteAll(ctx, fmt.Sprintf("data/k%04d", i), []byte("x"), nil))
	}
	denied := errors.New("denied")
	pages := 0
	// The driver's pages hold half a ListPage: its third fails the
	// pager's second page.
	fb, err := faultblob.New(inner, faultblob.WithMaxPageSize(PageSize/2), faultblob.WithHook(faultblob.List, func(context.Context, *faultblob.Call) error {
		if pages++; pages == 3 {
			return &coded{denied, gcerrors.PermissionDenied}
		}
		return nil
	}))
	require.NoError(t, err)
	p := NewBucketPager(fb.Bucket(), &blob.ListOptions{Prefix: "data/"}, testWindow(), Backoff{Sleep: Sleep}, nil)
	defer p.Close()
	n := 0
	for ; ; n++ {
		if _, err = p.Next(ctx); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, denied)
	require.Equal(t, PageSize, n, "the objects before the failed page")
	for range 3 {
		_, again := p.Next(ctx)
		require.ErrorIs(t, again, denied, "asked again")
	}
}

// TestPagerRetriesTransient lists a bucket whose listing requests fail at
// random with every code: the listing is whole, each key once and in order,
// when every failure is transient and none repeats PageAttempts times; a
// permanent failure ends it at once, and the caller's Classifier overrides
// the error's code only where the error does not tell its own.
func TestPagerRetriesTransient(t *testing.T) {
	ctx := context.Background()
	inner := memblob.OpenBucket(nil)
	defer inner.Close()
	var keys []string
	for i := range 2*PageSize + 123 {
		k := fmt.Sprintf("data/k%05d", i)
		keys = append(keys, k)
		require.NoError(t, inner.WriteAll(ctx, k, []byte("x"), nil))
	}
	plain := errors.New("plain")
	for _, tc := range []struct {
		name      string
		err       error
		classify  Classifier
		transient bool
	}{
		{"throttled", &coded{plain, gcerrors.ResourceExhausted}, nil, true},
		{"internal", &coded{plain, gcerrors.Internal}, nil, true},
		{"deadline", &coded{plain, gcerrors.DeadlineExceeded}, nil, true},
		{"unknown", plain, nil, true},
		{"denied", &coded{plain, gcerrors.PermissionDenied}, nil, false},
		{"not found", &coded{plain, gcerrors.NotFound}, nil, false},
		{"classified permanent", plain, func(error) (gcerrors.ErrorCode, bool) { return gcerrors.PermissionDenied, true }, false},
		{"classified transient", plain, func(error) (gcerrors.ErrorCode, bool) { return gcerrors.ResourceExhausted, true }, true},
		{"own code wins", &coded{plain, gcerrors.Internal}, func(error) (gcerrors.ErrorCode, bool) { return gcerrors.PermissionDenied, true }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			run := 0 // failures in a row
			calls, waits := 0, 0
			fb, err := faultblob.New(inner, faultblob.WithMaxPageSize(PageSize/3), faultblob.WithHook(faultblob.List, func(context.Context, *faultblob.Call) error {
				calls++
				if run < PageAttempts-1 && (calls == 2 || rng.IntN(3) == 0) {
					run++
					return tc.err
				}
				run = 0
				return nil
			}))
			require.NoError(t, err)
			b := Backoff{Min: time.Second, Max: time.Minute, Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
			p := NewBucketPager(fb.Bucket(), &blob.ListOptions{Prefix: "data/"}, testWindow(), b, tc.classify)
			defer p.Close()
			var got []string
			for {
				o, err := p.Next(ctx)
				if err == io.EOF {
					break
				}
				if !tc.transient {
					if err == nil {
						continue
					}
					require.ErrorIs(t, err, plain)
					require.Zero(t, waits, "a permanent error is not retried")
					require.Equal(t, 2, calls, "the listing ends at the failed request")
					return
				}
				require.NoError(t, err)
				got = append(got, o.Key)
			}
			require.Equal(t, keys, got)
			require.Positive(t, waits, "no request was retried")
		})
	}
}

// TestPagerGivesUp: a request that fails with a transient error
// PageAttempts times fails the listing, after PageAttempts-1 waits.
func TestPagerGivesUp(t *testing.T) {
	throttled := &coded{errors.New("slow down"), gcerrors.ResourceExhausted}
	calls, waits := 0, 0
	read := func(context.Context, []*blob.ListObject) ([]*blob.ListObject, bool, error) {
		calls++
		return nil, true, throttled
	}
	b := Backoff{Min: time.Second, Max: time.Minute, Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
	released := 0
	p := NewPager(read, func() { released++ }, true, testWindow(), b, nil)
	_, err := p.Next(context.Background())
	require.ErrorIs(t, err, throttled)
	require.Equal(t, PageAttempts, calls)
	require.Equal(t, PageAttempts-1, waits)
	require.Equal(t, 1, released, "a failed listing releases what it holds")
}

// TestPagerCancelled: a cancelled context ends a listing waiting out its
// backoff, with the context's error.
func TestPagerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	read := func(context.Context, []*blob.ListObject) ([]*blob.ListObject, bool, error) {
		cancel()
		return nil, true, &coded{errors.New("busy"), gcerrors.ResourceExhausted}
	}
	p := NewPager(read, nil, true, testWindow(), Backoff{Min: time.Hour, Max: time.Hour, Sleep: Sleep}, nil)
	start := time.Now()
	_, err := p.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Minute)
}

// TestJudge: what an answer tells the window.
func TestJudge(t *testing.T) {
	var c Classifier
	require.Equal(t, aimd.Answered, c.Judge(nil))
	require.Equal(t, aimd.Throttled, c.Judge(&coded{errors.New("x"), gcerrors.ResourceExhausted}))
	require.Equal(t, aimd.Failed, c.Judge(&coded{errors.New("x"), gcerrors.Internal}))
	require.Equal(t, aimd.Failed, c.Judge(errors.New("x")))
}
