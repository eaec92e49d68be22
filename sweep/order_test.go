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

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// This file holds the tests of the checks that cost one comparison per key:
// the join's refusal of streams out of order, the live encoder's order
// check, the recorder's slice decision, and the candidates' strings (the
// sort engine's own are in internal/extsort).

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

// drainKeys reads it to its end, closes it, and returns its keys.
func drainKeys(t testing.TB, it extsort.Iter) []string {
	t.Helper()
	var got []string
	for {
		k, ok, err := it.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, string(k))
	}
	require.NoError(t, it.Close())
	return got
}

// TestJoinRefusesStreamsOutOfOrder gives the join its streams as Mark does
// (each through extsort.NewPrefetch) with one out of order: the run fails rather
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
			list := extsort.NewPrefetchSize(&bufIter{keys: c.list}, 8, 2)
			keep := extsort.NewPrefetchSize(&bufIter{keys: c.keep}, 8, 2)
			defer list.Close()
			defer keep.Close()
			_, err := m.writeCandidates(context.Background(), listKeep(list, keep))
			require.ErrorContains(t, err, "out of order")
		})
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
		require.NoError(t, e.Add([]byte(a)))
		err = e.Add([]byte(b))
		if a < b {
			require.NoError(t, err, "%q then %q", a, b)
		} else {
			require.ErrorIs(t, err, ErrInvalidInput, "%q then %q", a, b)
		}
	}
}

// TestRecorderSlices: the recorder records as listed exactly the kept keys
// that are in a slice, as sliceOf says of each, over folders that are slices, folders
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
		iw, err := newIndexWriter(ctx, bucket, "index", stagedFormat, 512)
		require.NoError(t, err)
		rec := &recorder{staged: iw, data: "data/"}
		for _, k := range keys {
			require.NoError(t, rec.entry([]byte(k), 0, true, true, true))
		}
		require.NoError(t, iw.close())
		b, err := bucket.ReadAll(ctx, "index")
		require.NoError(t, err)
		got, err := decodeCounts(b, stagedFormat)
		require.NoError(t, err)
		var gotKeys []string
		for _, e := range got {
			require.Equal(t, indexEntry{e.key, 0, idxListed}, e)
			gotKeys = append(gotKeys, e.key)
		}
		require.Equal(t, want, gotKeys, "trial %d", trial)
		require.Equal(t, int64(len(want)), iw.listed)
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
