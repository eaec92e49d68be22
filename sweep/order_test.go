package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// This file holds the tests of the checks that moved where they cost one
// comparison per key: the merge's order check and repeat drop, the
// prefetch's order check of the join's streams, spill's repeat drop, the live
// encoder's order check, the recorder's slice decision, and the candidates'
// strings.

// bufIter yields the keys of a slice from one reused buffer.
type bufIter struct {
	keys []string
	buf  []byte
}

func (s *bufIter) next() ([]byte, bool, error) {
	if len(s.keys) == 0 {
		return nil, false, nil
	}
	s.buf = append(s.buf[:0], s.keys[0]...)
	s.keys = s.keys[1:]
	return s.buf, true, nil
}

func (s *bufIter) close() error { return nil }

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
// the result.
func TestMergeChecksOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	failed := 0
	for trial := range 2000 {
		streams := make([][]string, 1+r.IntN(4))
		var all []string
		for i := range streams {
			streams[i] = randSortedKeys(r, r.IntN(30), false)
			if len(streams[i]) >= 2 && r.IntN(4) == 0 {
				a, b := r.IntN(len(streams[i])), r.IntN(len(streams[i]))
				streams[i][a], streams[i][b] = streams[i][b], streams[i][a]
			}
			all = append(all, streams[i]...)
		}
		bad := slices.ContainsFunc(streams, descends)
		iters := make([]keyIter, len(streams))
		for i, s := range streams {
			iters[i] = &bufIter{keys: slices.Clone(s)}
		}
		m := newMerge(iters)
		var got []string
		var err error
		for {
			var k []byte
			var ok bool
			if k, ok, err = m.next(); err != nil || !ok {
				break
			}
			got = append(got, string(k))
		}
		require.NoError(t, m.close())
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
		p := newPrefetchSize(&bufIter{keys: slices.Clone(keys)}, 1+r.IntN(64), 1+r.IntN(8))
		it := strict(p, "keep set")
		require.Same(t, p, it, "a prefetchIter checks itself")
		for i := 0; ; i++ {
			k, ok, err := it.next()
			if i < bad {
				require.NoError(t, err, "trial %d key %d of %q", trial, i, keys)
				require.True(t, ok)
				require.Equal(t, keys[i], string(k))
				continue
			}
			require.False(t, ok)
			if bad < len(keys) {
				require.ErrorContains(t, err, "sweep: keep set out of order", "trial %d: %q", trial, keys)
				_, ok, again := it.next()
				require.False(t, ok)
				require.Equal(t, err, again, "the error is sticky")
				failed++
			} else {
				require.NoError(t, err)
			}
			break
		}
		require.NoError(t, it.close())
	}
	require.Greater(t, failed, 50, "too few streams out of order to test the check")
}

// TestJoinRefusesStreamsOutOfOrder gives the join its streams as Mark does
// (each through a prefetchIter) with one out of order: the run fails rather
// than mark a kept key the join skipped.
func TestJoinRefusesStreamsOutOfOrder(t *testing.T) {
	good := []string{"data/a", "data/b", "data/c", "data/d"}
	for name, c := range map[string]struct{ list, keep []string }{
		"keep set": {good, []string{"data/a", "data/d", "data/b"}},
		"listing":  {[]string{"data/a", "data/c", "data/b", "data/d"}, good},
		"repeat":   {[]string{"data/a", "data/b", "data/b"}, good},
	} {
		t.Run(name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: "report/", cnt: &counters{}}
			list := newPrefetchSize(&bufIter{keys: c.list}, 8, 2)
			keep := newPrefetchSize(&bufIter{keys: c.keep}, 8, 2)
			defer list.close()
			defer keep.close()
			_, err := m.writeCandidates(context.Background(), list, keep)
			require.ErrorContains(t, err, "out of order")
		})
	}
}

// TestSorterRunFileOutOfOrder: a run file whose keys go back (a spill file
// changed on disk, or a bug in the writer) fails the sorter's stream, which
// the keep set is.
func TestSorterRunFileOutOfOrder(t *testing.T) {
	dir, err := newSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.remove()
	s := newSorter(dir, 1<<10, 4)
	for _, k := range []string{"b", "d", "f"} {
		require.NoError(t, s.add([]byte(k)))
	}
	rw, err := dir.create()
	require.NoError(t, err)
	for _, k := range []string{"a", "e", "c"} {
		require.NoError(t, rw.add([]byte(k)))
	}
	name, err := rw.finish()
	require.NoError(t, err)
	s.runs = append(s.runs, name)
	it, err := s.finish()
	require.NoError(t, err)
	defer it.close()
	for {
		_, ok, err := it.next()
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
		dir, err := newSpillDir(t.TempDir(), 512)
		require.NoError(t, err)
		s := newSorter(dir, 64<<10, 4)
		keys := randSortedKeys(r, 1+r.IntN(300), false)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k := range keys {
			require.NoError(t, s.add([]byte(k)))
		}
		require.NoError(t, s.spill())
		require.Len(t, s.runs, 1)
		fr, err := openRun(s.runs[0], 512)
		require.NoError(t, err)
		got := drainKeys(t, fr)
		slices.Sort(keys)
		want := slices.Compact(keys)
		require.Equal(t, want, got, "trial %d", trial)
		require.NoError(t, dir.remove())
	}
}

// TestLiveEncoderOrder: the encoder takes a key only when it sorts strictly
// after the one before, whatever prefix they share.
func TestLiveEncoderOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for range 5000 {
		a, b := randSortedKeys(r, 1, false)[0], randSortedKeys(r, 1, false)[0]
		if a == "" || b == "" {
			continue
		}
		e, err := newLiveEncoder(io.Discard)
		require.NoError(t, err)
		require.NoError(t, e.add([]byte(a)))
		err = e.add([]byte(b))
		if a < b {
			require.NoError(t, err, "%q then %q", a, b)
		} else {
			require.ErrorIs(t, err, ErrInvalidInput, "%q then %q", a, b)
		}
	}
}

// TestRecorderSlices: the recorder records exactly the kept keys that are in
// a slice, as sliceOf says of each, over folders that are slices, folders
// that are not, keys outside the data folder and keys of the data folder
// itself, in order.
func TestRecorderSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	s1, s2 := descendingName(t0.Add(-100*3600e9)), descendingName(t0.Add(-200*3600e9))
	folders := []string{"data/" + s1 + "/", "data/" + s2 + "/", "data/" + s1 + "x/", "data/" + s1[:19] + "/",
		"data/notaslice/", "data/", "datax/", "", "data/" + s2 + "/sub/"}
	for trial := range 30 {
		var keys []string
		for range r.IntN(200) {
			keys = append(keys, folders[r.IntN(len(folders))]+fmt.Sprint(r.IntN(50)))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		var want []string
		for _, k := range keys {
			if _, _, ok := sliceOf([]byte(k), "data/"); ok {
				want = append(want, k)
			}
		}
		bucket := memblob.OpenBucket(nil)
		ctx := context.Background()
		lw, err := newLiveWriter(ctx, bucket, "live", 512)
		require.NoError(t, err)
		rec := &recorder{live: lw, data: "data/"}
		for _, k := range keys {
			require.NoError(t, rec.kept([]byte(k)))
		}
		require.NoError(t, lw.close())
		b, err := bucket.ReadAll(ctx, "live")
		require.NoError(t, err)
		got, err := decodeLive(b)
		require.NoError(t, err)
		require.Equal(t, want, got, "trial %d", trial)
		require.Equal(t, int64(len(want)), rec.n)
		require.NoError(t, bucket.Close())
	}
}

// TestStrArena: every string made stays as it was made while many more are
// made from the same reused buffer, long keys included.
func TestStrArena(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var a strArena
	var want, got []string
	var buf []byte
	for range 20000 {
		n := r.IntN(100)
		if r.IntN(1000) == 0 {
			n = strChunk + r.IntN(100)
		}
		buf = append(buf[:0], strings.Repeat(string(rune('a'+r.IntN(26))), n)...)
		want = append(want, string(buf))
		got = append(got, a.string(buf))
		for i := range buf {
			buf[i] = 0 // the caller's key changes after
		}
	}
	for i := range want {
		if !bytes.Equal([]byte(want[i]), []byte(got[i])) {
			t.Fatalf("string %d changed: %q, want %q", i, got[i][:min(len(got[i]), 20)], want[i][:min(len(want[i]), 20)])
		}
	}
}
