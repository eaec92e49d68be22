package keycount

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
)

// countingParts are parts of generated keys whose Open counts the
// sequences running at once (between their start or a return from yield,
// and their next yield or end), the way a part behind a store waits for its
// read before its first key; bad names the parts that fail after their
// first keys.
type countingParts struct {
	running, most atomic.Int64
	keys          map[string][]string
	bad           map[string]bool
}

func (c *countingParts) enter() {
	n := c.running.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
}

func (c *countingParts) open(ctx context.Context, id string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		c.enter()
		defer c.running.Add(-1)
		time.Sleep(2 * time.Millisecond) // the part's read
		for i, k := range c.keys[id] {
			if c.bad[id] && i == len(c.keys[id])/2 {
				yield("", fmt.Errorf("part %s: %w", id, errBadRead))
				return
			}
			c.running.Add(-1)
			ok := yield(k, nil)
			c.enter()
			if !ok {
				return
			}
		}
	}
}

var errBadRead = errors.New("a read failed")

func newCountingParts(n, keys int) (*countingParts, []string) {
	c := &countingParts{keys: map[string][]string{}, bad: map[string]bool{}}
	var ids []string
	for p := range n {
		id := fmt.Sprintf("p%03d", p)
		ids = append(ids, id)
		for k := range keys {
			// Parts overlap: key k of part p is shared with the parts of
			// the same p mod 3.
			c.keys[id] = append(c.keys[id], fmt.Sprintf("k%05d-%d", k, p%3))
		}
	}
	return c, ids
}

// TestReadAheadBounded: Count never has more than ReadAhead parts reading at
// once (and, with more than one allowed, does read several at once), and
// its counts are those of one part at a time.
func TestReadAheadBounded(t *testing.T) {
	for _, ahead := range []int{0, 1, 3, 8} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			d, err := extsort.NewSpillDir(t.TempDir(), 4096)
			require.NoError(t, err)
			defer d.Remove()
			c, ids := newCountingParts(23, 2500) // more than one batch a part
			p := &Parts{Open: c.open, Invalid: errors.New("invalid"), ReadAhead: ahead}
			names, stats, err := p.Count(context.Background(), d, ids, 1, nil, 10)
			require.NoError(t, err)
			require.Len(t, names, 3)
			require.Len(t, stats, len(ids))
			got := map[string]int64{}
			for _, name := range names {
				f, err := OpenFile(name, spillFormat, 4096)
				require.NoError(t, err)
				for {
					k, n, ok, err := f.Next()
					require.NoError(t, err)
					if !ok {
						break
					}
					got[string(k)] += n
				}
				f.Close()
			}
			want := map[string]int64{}
			for _, id := range ids {
				for _, k := range c.keys[id] {
					want[k]++
				}
			}
			require.Equal(t, want, got)
			most := c.most.Load()
			require.LessOrEqual(t, most, int64(max(ahead, 1)), "parts read at once")
			if ahead > 1 {
				require.Greater(t, most, int64(1), "read-ahead read one part at a time")
			}
			require.Zero(t, c.running.Load())
		})
	}
}

// TestReadAheadFailure: a part that fails, among parts read ahead, fails
// Count, whichever its place in its group: never read as a shorter part.
func TestReadAheadFailure(t *testing.T) {
	for _, keys := range []int{100, 2500} { // failing in the batch read ahead, or after it
		for _, bad := range []int{0, 4, 9, 12} {
			d, err := extsort.NewSpillDir(t.TempDir(), 4096)
			require.NoError(t, err)
			c, ids := newCountingParts(13, keys)
			p := &Parts{Open: c.open, Invalid: errors.New("invalid"), ReadAhead: 4}
			_, stats, err := p.Count(context.Background(), d, ids, 1, nil, 5)
			require.NoError(t, err)
			c.bad[ids[bad]] = true
			_, _, err = p.Count(context.Background(), d, ids, 1, nil, 5)
			require.ErrorIs(t, err, errBadRead, "part %d of %d keys", bad, keys)
			// A part read again, when it left the set, that fails is a
			// changed part.
			want := map[string]Stat{}
			for _, s := range stats {
				want[s.ID] = s
			}
			_, _, err = p.Count(context.Background(), d, ids, -1, want, 5)
			require.ErrorIs(t, err, ErrChanged, "part %d of %d keys", bad, keys)
			require.ErrorIs(t, err, errBadRead)
			require.NoError(t, d.Remove())
		}
	}
}
