package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A committed keep set given as parts is read at the same time as the
// uncommitted keys, on a goroutine of its own (readAndList, partsReader):
// these tests hold Mark to that, and to what a failure or a panic on either
// side does to the other.

// hostPart is a host's part: its keys, or, with endless, keys until its
// sequence is stopped or limit passes (it then fails, setting gaveUp);
// end, if set, ends it after its keys. running counts its sequences
// running (between their start and their end), opened the sequences
// started.
type hostPart struct {
	keys    []string
	endless bool
	limit   time.Duration
	gaveUp  atomic.Bool
	end     func(yield func(string, error) bool)
	opened  chan struct{} // closed when a sequence starts
	once    sync.Once
	running atomic.Int32
}

func newHostPart(keys []string) *hostPart {
	return &hostPart{keys: keys, limit: 20 * time.Second, opened: make(chan struct{})}
}

func (p *hostPart) seq(yield func(string, error) bool) {
	p.running.Add(1)
	defer p.running.Add(-1)
	p.once.Do(func() { close(p.opened) })
	for _, k := range p.keys {
		if !yield(k, nil) {
			return
		}
	}
	if p.endless {
		deadline := time.Now().Add(p.limit)
		for i := 0; ; i++ {
			if i%4096 == 0 && time.Now().After(deadline) {
				p.gaveUp.Store(true)
				yield("", errors.New("the part was never stopped"))
				return
			}
			if !yield(fmt.Sprintf("data/~part/%012d", i), nil) {
				return
			}
		}
	}
	if p.end != nil {
		p.end(yield)
	}
}

// hostParts are the Parts of parts, named by their index, read ahead as
// ahead says.
func hostParts(ahead int, parts ...*hostPart) *Parts {
	ps := &Parts{ReadAhead: ahead, Open: func(_ context.Context, id string) iter.Seq2[string, error] {
		var i int
		fmt.Sscan(id, &i)
		return parts[i].seq
	}}
	for i := range parts {
		ps.IDs = append(ps.IDs, fmt.Sprint(i))
	}
	return ps
}

// waitOpened waits until p has been opened, for at most 20 seconds.
func waitOpened(p *hostPart) bool {
	select {
	case <-p.opened:
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

func partsRunning(parts []*hostPart) int32 {
	var n int32
	for _, p := range parts {
		n += p.running.Load()
	}
	return n
}

// TestMarkReadsPartsWithUncommitted gives Mark uncommitted keys that stop
// halfway until a part has been opened: a Mark that read the parts only
// after the uncommitted keys would wait for ever, and the input gives up
// after a while with an error.
func TestMarkReadsPartsWithUncommitted(t *testing.T) {
	for _, ahead := range []int{0, 3} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 500)
			parts := []*hostPart{newHostPart(keys[300:400]), newHostPart(keys[400:])}
			uncommitted := func(yield func(string, error) bool) {
				for _, k := range keys[:100] {
					if !yield(k, nil) {
						return
					}
				}
				select {
				case <-parts[0].opened:
				case <-parts[1].opened:
				case <-time.After(20 * time.Second):
					yield("", errors.New("no part was opened while the uncommitted keys were read"))
					return
				}
				for _, k := range keys[100:200] {
					if !yield(k, nil) {
						return
					}
				}
			}
			sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Parts: hostParts(ahead, parts...), ExportStart: t0},
				WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(t.TempDir()))
			require.NoError(t, err)
			require.Equal(t, int64(100), sum.NumDeletedObjects)
			require.Equal(t, int64(2), sum.PartsRead)
			require.Equal(t, keys[200:300], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
		})
	}
}

// TestMarkPartFailureStopsUncommitted fails a part while the uncommitted
// keys are still being read (they never end): Mark stops reading them and
// returns the part's error, not the cancellation it caused, with a failed
// run and no spill files left.
func TestMarkPartFailureStopsUncommitted(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 200)
	partErr := errors.New("part broke")
	bad := newHostPart(keys[:10])
	bad.end = func(yield func(string, error) bool) { yield("", partErr) }
	parts := []*hostPart{newHostPart(keys[100:]), bad}
	var gaveUp atomic.Bool
	tmp := t.TempDir()
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: endless(20*time.Second, &gaveUp), Parts: hostParts(0, parts...), ExportStart: t0},
		WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
	require.ErrorIs(t, err, partErr)
	require.NotErrorIs(t, err, context.Canceled)
	require.False(t, gaveUp.Load(), "the part's failure did not stop the uncommitted keys")
	require.Zero(t, partsRunning(parts))
	requireFailedRun(t, b, "run1")
	requireNoSpill(t, tmp)
}

// TestMarkUncommittedFailureStopsParts fails the uncommitted keys while a
// part is still being read (it never ends): Mark stops reading it and
// returns the uncommitted keys' error.
func TestMarkUncommittedFailureStopsParts(t *testing.T) {
	for _, ahead := range []int{0, 3} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 200)
			never := newHostPart(nil)
			never.endless = true
			parts := []*hostPart{newHostPart(keys[100:]), never}
			inputErr := errors.New("input broke")
			uncommitted := func(yield func(string, error) bool) {
				for _, k := range keys[:50] {
					if !yield(k, nil) {
						return
					}
				}
				if !waitOpened(never) {
					yield("", errors.New("the part was not read while the uncommitted keys were"))
					return
				}
				yield("", inputErr)
			}
			tmp := t.TempDir()
			_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Parts: hostParts(ahead, parts...), ExportStart: t0},
				WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
			require.ErrorIs(t, err, inputErr)
			require.NotErrorIs(t, err, context.Canceled)
			require.False(t, never.gaveUp.Load(), "the uncommitted keys' failure did not stop the parts")
			require.Zero(t, partsRunning(parts), "a part still runs after Mark returned")
			requireFailedRun(t, b, "run1")
			requireNoSpill(t, tmp)
		})
	}
}

// markOutcome runs Mark on a goroutine of its own and says how it ended:
// returned, or with the value it panicked with, or neither (Goexit).
type markOutcome struct {
	returned bool
	err      error
	panicked any
}

func runMark(b func() error) markOutcome {
	done := make(chan markOutcome)
	go func() {
		var o markOutcome
		defer func() {
			o.panicked = recover()
			done <- o
		}()
		o.err = b()
		o.returned = true
	}()
	return <-done
}

// TestMarkPartPanics has a part's sequence panic (or Goexit, as t.FailNow
// does) while the uncommitted keys are read (they never end) and the
// namespace is listed: the panic reaches Mark's caller, on its goroutine,
// only once the uncommitted keys, the listing and every part have stopped,
// with or without read-ahead, at the first key (read ahead) or later (in
// the merge).
func TestMarkPartPanics(t *testing.T) {
	for _, c := range []struct {
		name   string
		ahead  int
		before int // keys before the panic
		exit   bool
	}{
		{"at once", 0, 0, false},
		{"later", 0, 3000, false},
		{"read ahead", 3, 0, false},
		{"read ahead, later", 3, 3000, false},
		{"goexit", 0, 0, true},
		{"goexit read ahead", 3, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 200)
			var inflight atomic.Int32
			d := &testDriver{listErr: func(prefix string) error {
				if strings.Count(prefix, "/") == 2 {
					inflight.Add(1)
					defer inflight.Add(-1)
					time.Sleep(20 * time.Millisecond) // a slow page
				}
				return nil
			}}
			b = newTestBucket(b, d)
			var many []string
			for i := range c.before {
				many = append(many, fmt.Sprintf("data/~a/%06d", i))
			}
			bad := newHostPart(many)
			bad.end = func(func(string, error) bool) {
				if c.exit {
					runtime.Goexit()
				}
				panic("part panicked")
			}
			parts := []*hostPart{newHostPart(keys[100:]), bad, newHostPart(keys[:50])}
			var gaveUp atomic.Bool
			tmp := t.TempDir()
			o := runMark(func() error {
				_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: endless(20*time.Second, &gaveUp), Parts: hostParts(c.ahead, parts...), ExportStart: t0},
					WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
				return err
			})
			require.False(t, o.returned, "Mark returned %v", o.err)
			if c.exit {
				require.Nil(t, o.panicked)
			} else {
				require.Equal(t, "part panicked", o.panicked)
			}
			require.False(t, gaveUp.Load(), "the part's panic did not stop the uncommitted keys")
			require.Zero(t, inflight.Load(), "a listing still runs after Mark panicked")
			require.Zero(t, partsRunning(parts), "a part still runs after Mark panicked")
			requireNoSpill(t, tmp)
		})
	}
}

// TestMarkUncommittedPanicStopsParts has the uncommitted keys panic while a
// part is still being read (it never ends): the panic reaches Mark's
// caller only once the part has stopped.
func TestMarkUncommittedPanicStopsParts(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 200)
	never := newHostPart(nil)
	never.endless = true
	parts := []*hostPart{newHostPart(keys[100:]), never}
	uncommitted := func(yield func(string, error) bool) {
		for _, k := range keys[:50] {
			if !yield(k, nil) {
				return
			}
		}
		if !waitOpened(never) {
			yield("", errors.New("the part was not read while the uncommitted keys were"))
			return
		}
		panic("input panicked")
	}
	tmp := t.TempDir()
	o := runMark(func() error {
		_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: uncommitted, Parts: hostParts(0, parts...), ExportStart: t0},
			WithClock(fixedClock), WithMemoryBudget(64<<10), WithTempDir(tmp))
		return err
	})
	require.Equal(t, "input panicked", o.panicked)
	require.Zero(t, partsRunning(parts), "a part still runs after Mark panicked")
	require.False(t, never.gaveUp.Load())
	requireNoSpill(t, tmp)
}
