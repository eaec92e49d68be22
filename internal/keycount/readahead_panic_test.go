package keycount

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
)

// TestReadAheadPanic: a part's sequence that panics (or calls
// runtime.Goexit, as t.FailNow does) before its first key, while Count
// pulls the group's first batches from goroutines of its own, panics (or
// exits) on Count's caller's goroutine, as it does with ReadAhead 1, once
// every part's sequence has ended: it neither kills the process from a
// read-ahead goroutine nor reads the part as empty.
func TestReadAheadPanic(t *testing.T) {
	for _, ahead := range []int{1, 4} {
		for _, how := range []string{"panic", "goexit"} {
			t.Run(fmt.Sprint(how, ahead), func(t *testing.T) {
				d, err := extsort.NewSpillDir(t.TempDir(), 4096)
				require.NoError(t, err)
				defer d.Remove()
				var running atomic.Int64
				ids := []string{"a", "b", "c", "d", "e"}
				p := &Parts{ReadAhead: ahead, Open: func(_ context.Context, id string) iter.Seq2[string, error] {
					return func(yield func(string, error) bool) {
						running.Add(1)
						defer running.Add(-1)
						if id == "c" {
							if how == "panic" {
								panic("part c panicked")
							}
							runtime.Goexit()
						}
						for k := range 3000 { // more than one batch
							if !yield(fmt.Sprintf("k%05d", k), nil) {
								return
							}
						}
					}
				}}
				type result struct {
					returned bool
					panicked any
				}
				done := make(chan result)
				go func() {
					var r result
					defer func() {
						r.panicked = recover()
						done <- r
					}()
					p.Count(context.Background(), d, ids, 1, nil, 64)
					r.returned = true
				}()
				r := <-done
				require.False(t, r.returned, "Count returned")
				if how == "panic" {
					require.Equal(t, "part c panicked", r.panicked)
				} else {
					require.Nil(t, r.panicked)
				}
				require.Zero(t, running.Load(), "a part's sequence still runs")
			})
		}
	}
}
