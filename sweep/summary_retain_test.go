package sweep

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// TestSummaryHoldsNoMark: the summary Mark returns is the caller's to
// keep (lakegc's Report keeps it), and must not keep what the mark used
// reachable: here a Progress callback's data, which a marker around the
// summary would hold through its options.
func TestSummaryHoldsNoMark(t *testing.T) {
	freed := make(chan struct{}, 1)
	sum := func() *Summary {
		held := new([1 << 16]byte)
		runtime.AddCleanup(held, func(c chan struct{}) { c <- struct{}{} }, freed)
		b := memblob.OpenBucket(nil)
		defer b.Close()
		sum, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()),
			WithProgress(func(Progress) { held[0]++ }))
		require.NoError(t, err)
		return sum
	}()
	for range 50 {
		runtime.GC()
		select {
		case <-freed:
			require.Equal(t, "run1", sum.RunID)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("the Progress callback's data is still reachable while the caller keeps the summary of run %s", sum.RunID)
}
