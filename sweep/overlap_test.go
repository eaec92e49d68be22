package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/gcerrors"
)

// Mark reads its inputs while it lists the namespace (readAndList): these
// tests hold it to that, and to what a failure on either side does to the
// other.

// TestMarkListsWhileReadingInputs gives Mark inputs that stop halfway until
// a slice has been listed: a Mark that read every input before listing
// would wait for ever, and the inputs give up after a while with an error.
func TestMarkListsWhileReadingInputs(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 500)
	listed := make(chan struct{})
	var once sync.Once
	d := &testDriver{listErr: func(prefix string) error {
		if strings.Count(prefix, "/") == 2 { // a slice, data/<slice>/
			once.Do(func() { close(listed) })
		}
		return nil
	}}
	b = newTestBucket(b, d)
	uncommitted := func(yield func(string, error) bool) {
		for _, k := range keys[:100] {
			if !yield(k, nil) {
				return
			}
		}
		select {
		case <-listed:
		case <-time.After(20 * time.Second):
			yield("", errors.New("no slice was listed while the inputs were read"))
			return
		}
		for _, k := range keys[100:200] {
			if !yield(k, nil) {
				return
			}
		}
	}
	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Committed: seqOf(keys[300:]), ExportStart: t0},
		WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(100), sum.NumDeletedObjects)
	require.Equal(t, keys[200:300], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
}

// endless yields keep keys until yield refuses one, or gives up with an
// error after limit, setting gaveUp.
func endless(limit time.Duration, gaveUp *atomic.Bool) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		deadline := time.Now().Add(limit)
		for i := 0; ; i++ {
			if i%4096 == 0 && time.Now().After(deadline) {
				gaveUp.Store(true)
				yield("", errors.New("the inputs were never stopped"))
				return
			}
			if !yield(fmt.Sprintf("data/keep/%012d", i), nil) {
				return
			}
		}
	}
}

// TestMarkListingFailureStopsInputs fails the listing while the inputs are
// still being read (they never end): Mark stops reading them and returns
// the listing's error, not the cancellation it caused, with a failed run
// and no spill files left.
func TestMarkListingFailureStopsInputs(t *testing.T) {
	ctx := context.Background()
	b, _ := oldNamespace(t, 200)
	d := &testDriver{listErr: func(prefix string) error {
		if strings.Count(prefix, "/") == 2 {
			return codeErr{gcerrors.PermissionDenied} // permanent: not retried
		}
		return nil
	}}
	b = newTestBucket(b, d)
	tmp := t.TempDir()
	var gaveUp atomic.Bool
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: endless(20*time.Second, &gaveUp), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
	require.Error(t, err)
	require.Equal(t, gcerrors.PermissionDenied, gcerrors.Code(err), "%v", err)
	require.NotErrorIs(t, err, context.Canceled)
	require.NotContains(t, err.Error(), "never stopped")
	// The listing's error is returned either way: only the inputs know
	// whether they were stopped or ran out their time.
	require.False(t, gaveUp.Load(), "the listing's failure did not stop the inputs")
	requireFailedRun(t, b, "run1")
	requireNoSpill(t, tmp)
}

// TestMarkInputFailureStopsListing fails an input while slices are still
// being listed (each listing waits for the input to fail): Mark returns
// the input's error, not the listing's cancellation.
func TestMarkInputFailureStopsListing(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 200)
	broke := make(chan struct{})
	d := &testDriver{listErr: func(prefix string) error {
		if strings.Count(prefix, "/") == 2 {
			<-broke
		}
		return nil
	}}
	b = newTestBucket(b, d)
	inputErr := errors.New("input broke")
	uncommitted := breakAfter(keys[:50], broke, func(yield func(string, error) bool) { yield("", inputErr) })
	tmp := t.TempDir()
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Committed: seqOf(keys), ExportStart: t0},
		WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
	require.ErrorIs(t, err, inputErr)
	require.NotErrorIs(t, err, context.Canceled)
	requireFailedRun(t, b, "run1")
	requireNoSpill(t, tmp)
}

// TestMarkInputPanicStopsListing has an input panic while slices are still
// being listed: the panic reaches Mark's caller only once the listing has
// stopped, so no listing goroutine still writes to the pool or the spill
// folder that Mark frees and removes on its way out.
func TestMarkInputPanicStopsListing(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 200)
	broke := make(chan struct{})
	var inflight atomic.Int32
	d := &testDriver{listErr: func(prefix string) error {
		if strings.Count(prefix, "/") == 2 {
			inflight.Add(1)
			defer inflight.Add(-1)
			<-broke
			time.Sleep(50 * time.Millisecond) // a slow page
		}
		return nil
	}}
	b = newTestBucket(b, d)
	uncommitted := breakAfter(keys[:50], broke, func(func(string, error) bool) { panic("input panicked") })
	tmp := t.TempDir()
	func() {
		defer func() { require.Equal(t, "input panicked", recover()) }()
		Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Committed: seqOf(keys), ExportStart: t0},
			WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
	}()
	require.Zero(t, inflight.Load(), "a listing still runs after Mark panicked")
	requireNoSpill(t, tmp)
}

// breakAfter yields keys, then closes broke and ends with end.
func breakAfter(keys []string, broke chan<- struct{}, end func(yield func(string, error) bool)) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
		close(broke)
		end(yield)
	}
}

// requireNoSpill checks that Mark left nothing in its temp dir.
func requireNoSpill(t *testing.T, tmp string) {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries)
}
