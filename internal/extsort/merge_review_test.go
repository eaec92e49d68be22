package extsort

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// closeCount is a bufIter that counts its closes.
type closeCount struct {
	bufIter
	closes *int
}

func (c *closeCount) Close() error {
	*c.closes++
	return nil
}

// TestMergeRepeatsAndAbsorbModel compares merges with a model on random
// streams with repeats within and across streams, long runs of one stream
// and some streams that go back: a merge that keeps repeats (a
// NewRepeatSorter's) yields every key of every stream in order, NewMerge
// each distinct key once, and both fail when a stream goes back. Some of
// NewMerge's streams are merges themselves, repeat merges too, some of them
// read a few keys before (those are not absorbed, and yield the rest); every
// stream is closed exactly once, by whoever ends up holding it.
func TestMergeRepeatsAndAbsorbModel(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 77))
	failed := 0
	for trial := range 3000 {
		streams := make([][]string, r.IntN(6))
		for i := range streams {
			n := r.IntN(20)
			if r.IntN(3) == 0 {
				n = 50 + r.IntN(200)
			}
			streams[i] = randSortedKeys(r, n, false)
			if len(streams[i]) >= 2 && r.IntN(5) == 0 {
				a, b := r.IntN(len(streams[i])), r.IntN(len(streams[i]))
				streams[i][a], streams[i][b] = streams[i][b], streams[i][a]
			}
		}
		bad := slices.ContainsFunc(streams, descends)
		closes := make([]int, len(streams))
		var iters []Iter
		for i, s := range streams {
			iters = append(iters, &closeCount{bufIter: bufIter{keys: slices.Clone(s)}, closes: &closes[i]})
		}
		repeats := r.IntN(2) == 0
		var inner []Iter // merges given to the outer one: closed too, harmlessly
		var pre []string // keys read from inner merges before the outer merge
		preBad := false
		if !repeats {
			for len(iters) > 1 && r.IntN(2) == 0 {
				i := r.IntN(len(iters))
				j := i + 1 + r.IntN(len(iters)-i)
				m := &merge{all: slices.Clone(iters[i:j]), repeats: r.IntN(2) == 0}
				if r.IntN(3) == 0 {
					// Read ahead: not absorbed; its keys read count.
					k, ok, err := m.Next()
					if err != nil {
						preBad = true
					} else if ok {
						pre = append(pre, string(k))
					}
				}
				inner = append(inner, m)
				iters = slices.Replace(iters, i, j, Iter(m))
			}
		}
		var m Iter
		if repeats {
			m = &merge{all: iters, repeats: true}
		} else {
			m = NewMerge(iters)
		}
		got := pre
		var err error
		for !preBad {
			var k []byte
			var ok bool
			if k, ok, err = m.Next(); err != nil || !ok {
				break
			}
			got = append(got, string(k))
		}
		require.NoError(t, m.Close())
		for _, in := range inner {
			require.NoError(t, in.Close())
		}
		for i, n := range closes {
			// A stream under a merge read ahead is closed by that merge and
			// by nothing else; every other stream by the outer merge.
			require.Equal(t, 1, n, "trial %d: stream %d closed %d times", trial, i, n)
		}
		if bad {
			require.True(t, preBad || err != nil, "trial %d: streams %q merged into %q", trial, streams, got)
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		var want []string
		for _, s := range streams {
			want = append(want, s...)
		}
		slices.Sort(want)
		if !repeats {
			want = slices.Compact(want)
			slices.Sort(got) // keys read ahead come first
			got = slices.Compact(got)
		}
		require.Equal(t, len(want), len(got), "trial %d", trial)
		if len(want) > 0 {
			require.Equal(t, want, got, "trial %d: streams %q", trial, streams)
		}
	}
	require.Greater(t, failed, 100)
}
