package extsort

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file holds the tests of the order checks and repeat drops of the
// streams: the merge's, a checked prefetch's, spill's.

// bufIter yields the keys of a slice from one reused buffer.
type bufIter struct {
	keys []string
	buf  []byte
}

func (s *bufIter) Next() ([]byte, bool, error) {
	if len(s.keys) == 0 {
		return nil, false, nil
	}
	s.buf = append(s.buf[:0], s.keys[0]...)
	s.keys = s.keys[1:]
	return s.buf, true, nil
}

func (s *bufIter) Close() error { return nil }

// randSortedKeys returns n keys over a small alphabet, sorted, with repeats
// unless distinct.
func randSortedKeys(r *rand.Rand, n int, distinct bool) []string {
	keys := make([]string, n)
	for i := range keys {
		b := make([]byte, r.IntN(6))
		for j := range b {
			b[j] = "ab\x00\xff"[r.IntN(4)]
		}
		keys[i] = string(b)
	}
	slices.Sort(keys)
	if distinct {
		keys = slices.Compact(keys)
	}
	return keys
}

// descends reports whether a key of keys sorts below the one before it.
func descends(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if keys[i] < keys[i-1] {
			return true
		}
	}
	return false
}

// TestMergeChecksOrder compares the merge with a model on random streams,
// some of which go back: the merge yields the distinct keys of all in order
// when every stream ascends (repeats allowed), and fails otherwise — a stream
// that goes back can no longer be merged in order, and the join would trust
// the result. Some streams are long (long runs of one stream between the
// others' keys), and some are merges of streams themselves.
func TestMergeChecksOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	failed := 0
	for trial := range 2000 {
		streams := make([][]string, 1+r.IntN(5))
		var all []string
		for i := range streams {
			n := r.IntN(30)
			if r.IntN(3) == 0 {
				n = 100 + r.IntN(300)
			}
			streams[i] = randSortedKeys(r, n, false)
			if len(streams[i]) >= 2 && r.IntN(4) == 0 {
				a, b := r.IntN(len(streams[i])), r.IntN(len(streams[i]))
				streams[i][a], streams[i][b] = streams[i][b], streams[i][a]
			}
			all = append(all, streams[i]...)
		}
		bad := slices.ContainsFunc(streams, descends)
		var iters []Iter
		for _, s := range streams {
			iters = append(iters, &bufIter{keys: slices.Clone(s)})
		}
		// Streams that are merges: of some of the streams, or of one.
		for len(iters) > 1 && r.IntN(2) == 0 {
			i := r.IntN(len(iters))
			j := i + 1 + r.IntN(len(iters)-i)
			iters = slices.Replace(iters, i, j, NewMerge(slices.Clone(iters[i:j])))
		}
		m := NewMerge(iters)
		var got []string
		var err error
		for {
			var k []byte
			var ok bool
			if k, ok, err = m.Next(); err != nil || !ok {
				break
			}
			got = append(got, string(k))
		}
		require.NoError(t, m.Close())
		if bad {
			require.Error(t, err, "trial %d: streams %q merged into %q", trial, streams, got)
			require.Contains(t, err.Error(), "out of order")
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		slices.Sort(all)
		want := slices.Compact(all)
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, got, "trial %d: streams %q", trial, streams)
	}
	require.Greater(t, failed, 100, "too few streams out of order to test the check")
}

// TestPrefetchStrict compares a checked prefetchIter with a model on random
// streams and batch sizes: it yields the keys up to the first that does not
// sort after the one before it (within a batch or across two), then fails,
// and keeps failing. Unchecked, it passes on whatever it reads.
func TestPrefetchStrict(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	failed := 0
	for trial := range 400 {
		keys := randSortedKeys(r, r.IntN(200), trial%2 == 0)
		if len(keys) >= 2 && r.IntN(3) == 0 {
			a, b := r.IntN(len(keys)), r.IntN(len(keys))
			keys[a], keys[b] = keys[b], keys[a]
		}
		bad := len(keys)
		for i := 1; i < len(keys); i++ {
			if keys[i] <= keys[i-1] {
				bad = i
				break
			}
		}
		p := newPrefetch(&bufIter{keys: slices.Clone(keys)}, 1+r.IntN(64), 1+r.IntN(8))
		it := Strict(p, "keep set")
		require.Same(t, p, it, "a prefetchIter checks itself")
		for i := 0; ; i++ {
			k, ok, err := it.Next()
			if i < bad {
				require.NoError(t, err, "trial %d key %d of %q", trial, i, keys)
				require.True(t, ok)
				require.Equal(t, keys[i], string(k))
				continue
			}
			require.False(t, ok)
			if bad < len(keys) {
				require.ErrorContains(t, err, "extsort: keep set out of order", "trial %d: %q", trial, keys)
				_, ok, again := it.Next()
				require.False(t, ok)
				require.Equal(t, err, again, "the error is sticky")
				failed++
			} else {
				require.NoError(t, err)
			}
			break
		}
		require.NoError(t, it.Close())
	}
	require.Greater(t, failed, 50, "too few streams out of order to test the check")
}

// TestSorterRunFileOutOfOrder: a run file whose keys go back (a spill file
// changed on disk, or a bug in the writer) fails the sorter's stream, which
// the keep set is.
func TestSorterRunFileOutOfOrder(t *testing.T) {
	dir, err := NewSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.Remove()
	s := NewSorter(dir, 1<<10, 4)
	for _, k := range []string{"b", "d", "f"} {
		require.NoError(t, s.Add([]byte(k)))
	}
	rw, err := dir.Create()
	require.NoError(t, err)
	for _, k := range []string{"a", "e", "c"} {
		require.NoError(t, rw.Add([]byte(k)))
	}
	name, err := rw.Finish()
	require.NoError(t, err)
	s.runs = append(s.runs, name)
	it, err := s.Finish()
	require.NoError(t, err)
	defer it.Close()
	for {
		_, ok, err := it.Next()
		if err != nil {
			require.ErrorContains(t, err, "out of order")
			return
		}
		require.True(t, ok, "the stream ended without noticing the run out of order")
	}
}

// TestSpillDropsRepeats: each spilled run holds the block's keys once each,
// in strict order, including keys that are prefixes of their neighbours.
func TestSpillDropsRepeats(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for trial := range 50 {
		dir, err := NewSpillDir(t.TempDir(), 512)
		require.NoError(t, err)
		s := NewSorter(dir, 64<<10, 4)
		keys := randSortedKeys(r, 1+r.IntN(300), false)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k := range keys {
			require.NoError(t, s.Add([]byte(k)))
		}
		require.NoError(t, s.spill())
		require.Len(t, s.runs, 1)
		fr, err := OpenRun(s.runs[0], 512)
		require.NoError(t, err)
		got := drainKeys(t, fr)
		slices.Sort(keys)
		want := slices.Compact(keys)
		require.Equal(t, want, got, "trial %d", trial)
		require.NoError(t, dir.Remove())
	}
}

// TestFailedMergeLeavesNoFile: a merge of runs that fails midway (a run
// file cut short) fails Finish and leaves no run file behind, its own
// output included.
func TestFailedMergeLeavesNoFile(t *testing.T) {
	parent := t.TempDir()
	dir, err := NewSpillDir(parent, 512)
	require.NoError(t, err)
	defer dir.Remove()
	s := NewSorter(dir, 1<<10, 2)
	for i := range 3 {
		rw, err := dir.Create()
		require.NoError(t, err)
		for j := range 100 {
			require.NoError(t, rw.Add(fmt.Appendf(nil, "key-%d-%04d", i, j)))
		}
		name, err := rw.Finish()
		require.NoError(t, err)
		if i == 0 {
			info, err := os.Stat(name)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(name, info.Size()/2))
		}
		s.runs = append(s.runs, name)
	}
	_, err = s.Finish()
	require.Error(t, err)
	left, err := filepath.Glob(filepath.Join(dir.dir, "run-*"))
	require.NoError(t, err)
	require.Empty(t, left, "run files left after a failed merge")
}
