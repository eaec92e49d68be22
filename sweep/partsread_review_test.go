package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Review of the parts read beside the uncommitted keys (readAndList,
// partsReader): the ways out partsread_test.go leaves open.

// pullGoroutines counts the goroutines of iter.Pull's coroutines: a part
// opened and never stopped leaves one behind.
func pullGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	c := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "iter.Pull") {
			c++
		}
	}
	return c
}

// TestMarkPartOpenPanics has Parts.Open itself panic (or Goexit) for a
// part after others of its merge group were opened, while the uncommitted
// keys are read (they never end): the panic reaches Mark's caller once
// the uncommitted keys and the listing have stopped, and no part opened
// before it is left behind.
func TestMarkPartOpenPanics(t *testing.T) {
	for _, c := range []struct {
		name  string
		ahead int
		exit  bool
	}{{"panic", 0, false}, {"panic read ahead", 3, false}, {"goexit", 0, true}, {"goexit read ahead", 3, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 200)
			parts := []*hostPart{newHostPart(keys[100:]), newHostPart(keys[:50]), newHostPart(nil)}
			ps := hostParts(c.ahead, parts...)
			open := ps.Open
			ps.Open = func(ctx context.Context, id string) iter.Seq2[string, error] {
				if id == "2" {
					if c.exit {
						runtime.Goexit()
					}
					panic("open panicked")
				}
				return open(ctx, id)
			}
			before := pullGoroutines()
			var gaveUp atomic.Bool
			tmp := t.TempDir()
			o := runMark(func() error {
				_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: endless(20*time.Second, &gaveUp), Parts: ps, ExportStart: t0},
					WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
				return err
			})
			require.False(t, o.returned, "Mark returned %v", o.err)
			if c.exit {
				require.Nil(t, o.panicked)
			} else {
				require.Equal(t, "open panicked", o.panicked)
			}
			require.False(t, gaveUp.Load(), "the panic did not stop the uncommitted keys")
			require.Zero(t, partsRunning(parts))
			requireNoSpill(t, tmp)
			// A coroutine left behind stays parked for ever: give the others
			// a moment to end, then count.
			var after int
			for range 50 {
				if after = pullGoroutines(); after <= before {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.LessOrEqual(t, after, before, "parts opened before the panic were never stopped")
		})
	}
}

// TestMarkBothPanic has a part's sequence panic and then the uncommitted
// keys panic too (and, apart, fail): Uncommitted's panic comes out, as
// readAndList says, and the part's when the uncommitted keys only failed
// ("whatever else failed"); either way only once every part has stopped.
func TestMarkBothPanic(t *testing.T) {
	for _, how := range []string{"panic", "error"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 200)
			bad := newHostPart(nil)
			panicked := make(chan struct{})
			bad.end = func(func(string, error) bool) {
				close(panicked)
				panic("part panicked")
			}
			never := newHostPart(nil)
			never.endless = true
			parts := []*hostPart{newHostPart(keys[100:]), bad, never}
			uncommitted := func(yield func(string, error) bool) {
				for _, k := range keys[:50] {
					if !yield(k, nil) {
						return
					}
				}
				select {
				case <-panicked:
				case <-time.After(20 * time.Second):
				}
				if how == "panic" {
					panic("input panicked")
				}
				yield("", errors.New("input broke"))
			}
			tmp := t.TempDir()
			o := runMark(func() error {
				_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Parts: hostParts(3, parts...), ExportStart: t0},
					WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
				return err
			})
			require.False(t, o.returned, "Mark returned %v", o.err)
			want := "part panicked"
			if how == "panic" {
				want = "input panicked"
			}
			require.Equal(t, want, fmt.Sprint(o.panicked))
			require.Zero(t, partsRunning(parts), "a part still runs after Mark panicked")
			require.False(t, never.gaveUp.Load())
			requireNoSpill(t, tmp)
		})
	}
}
