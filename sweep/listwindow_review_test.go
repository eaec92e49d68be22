package sweep

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/aimd"
)

// TestListWindowDoubles: the window every page of Mark's listing goes
// through doubles each round until its first throttled answer (doc.go,
// "Concurrency and retries"), from DefaultListConcurrency to
// DefaultMaxListConcurrency in two rounds, then halves on a throttled
// answer; WithListConcurrency's window stays where it is set.
func TestListWindowDoubles(t *testing.T) {
	ctx := context.Background()
	// round sends a window's worth of requests together and releases them
	// all with o, the caller idle between: it returns the window after.
	round := func(w *aimd.Window, o aimd.Outcome) int {
		ts := make([]aimd.Ticket, w.Limit())
		for i := range ts {
			var err error
			ts[i], err = w.Acquire(ctx)
			require.NoError(t, err)
		}
		for _, s := range ts {
			w.Release(s, o, 0)
		}
		return w.Limit()
	}
	window := func(opts ...MarkOption) *aimd.Window {
		l := &lister{cfg: newMarkConfig(opts)}
		require.NoError(t, l.cfg.err)
		l.pages(&blob.ListOptions{Prefix: "data/a/"})
		l.pages(&blob.ListOptions{Prefix: "data/", Delimiter: "/"})
		return l.win
	}
	w := window()
	require.Equal(t, DefaultListConcurrency, w.Limit())
	require.Equal(t, 2*DefaultListConcurrency, round(w, aimd.Answered))
	require.Equal(t, DefaultMaxListConcurrency, round(w, aimd.Answered))
	require.Equal(t, DefaultMaxListConcurrency/2, round(w, aimd.Throttled))
	// After a throttled answer it climbs by one request a round.
	require.Equal(t, DefaultMaxListConcurrency/2, round(w, aimd.Answered))
	require.Equal(t, DefaultMaxListConcurrency/2+1, round(w, aimd.Answered))

	w = window(WithListConcurrency(5))
	for range 3 {
		require.Equal(t, 5, round(w, aimd.Answered))
	}
	require.Equal(t, 5, round(w, aimd.Throttled))
}
