package keycount

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
)

// TestReadAheadEdges: among parts read ahead, a part that fails before its
// first key, or one that ends early and silently because the context was
// cancelled, fails Count (never a shorter part), and every part's
// sequence is stopped whatever the outcome: no goroutine is left behind.
func TestReadAheadEdges(t *testing.T) {
	keys := func(n int) []string {
		var ks []string
		for i := range n {
			ks = append(ks, fmt.Sprintf("k%05d", i))
		}
		return ks
	}(3000)
	ids := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	for _, tc := range []struct {
		name   string
		first  bool // the bad part fails before its first key
		cancel bool // the bad part ends silently, the context cancelled
		want   error
	}{
		{"fails first", true, false, errBadRead},
		{"cancelled", false, true, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			d, err := extsort.NewSpillDir(t.TempDir(), 4096)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			open := func(ctx context.Context, id string) iter.Seq2[string, error] {
				return func(yield func(string, error) bool) {
					for i, k := range keys {
						if id == "p3" && tc.first && i == 0 {
							yield("", errBadRead)
							return
						}
						if id == "p3" && tc.cancel && i == 1500 {
							cancel()
						}
						if ctx.Err() != nil {
							return // silently short
						}
						if !yield(k, nil) {
							return
						}
					}
				}
			}
			p := &Parts{Open: open, Invalid: errors.New("invalid"), ReadAhead: 4}
			_, _, err = p.Count(ctx, d, ids, 1, nil, 6)
			require.ErrorIs(t, err, tc.want)
			require.NoError(t, d.Remove())
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
		})
	}
}
