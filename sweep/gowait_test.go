package sweep

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoWaitAndCloseAllEnd: goWait and closeAll give back, on the caller's
// goroutine, how their functions ended: an error, a panic, or a
// runtime.Goexit (which must not read as a nil error: the caller would go
// on with what the function never set).
func TestGoWaitAndCloseAllEnd(t *testing.T) {
	boom := errors.New("boom")
	// on runs call on a goroutine of its own and says how it ended.
	on := func(call func()) (returned bool, panicked any) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { panicked = recover() }()
			call()
			returned = true
		}()
		<-done
		return returned, panicked
	}
	for _, c := range []struct {
		name     string
		f        func() error
		returned bool
		panicked any
	}{
		{"error", func() error { return boom }, true, nil},
		{"panic", func() error { panic("p") }, false, "p"},
		{"goexit", func() error { runtime.Goexit(); return nil }, false, nil},
	} {
		t.Run("goWait/"+c.name, func(t *testing.T) {
			var err error
			returned, panicked := on(func() { err = goWait(c.f)() })
			require.Equal(t, c.returned, returned)
			require.Equal(t, c.panicked, panicked)
			if returned {
				require.ErrorIs(t, err, boom)
			}
		})
		t.Run("closeAll/"+c.name, func(t *testing.T) {
			var others atomic.Int64
			other := func() error { others.Add(1); return nil }
			var err error
			returned, panicked := on(func() { err = closeAll(func() {}, other, c.f, other) })
			require.Equal(t, c.returned, returned)
			require.Equal(t, c.panicked, panicked)
			require.Equal(t, int64(2), others.Load(), "every function ended before closeAll did")
			if returned {
				require.ErrorIs(t, err, boom)
			}
		})
	}
}
