package sweep

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// refLiveEncode is the live record's encoder as it was before entries were
// batched: one write, and one checksum update, per entry. The record's bytes
// must not depend on how the encoder groups its writes.
func refLiveEncode(keys [][]byte) []byte {
	var out bytes.Buffer
	var crc uint32
	write := func(p []byte) {
		crc = crc32.Update(crc, castagnoli, p)
		out.Write(p)
	}
	write([]byte(liveMagic))
	var prev, buf []byte
	for _, k := range keys {
		shared := extsort.CommonPrefix(k, prev)
		buf = binary.AppendUvarint(buf[:0], uint64(shared))
		buf = binary.AppendUvarint(buf, uint64(len(k)-shared))
		buf = append(buf, k[shared:]...)
		prev = append(prev[:0], k...)
		write(buf)
	}
	write(binary.AppendUvarint([]byte{0, 0}, uint64(len(keys))))
	out.Write(binary.BigEndian.AppendUint32(nil, crc))
	return out.Bytes()
}

// TestLiveEncoderMatchesUnbatched: for random ascending keys, from none to
// enough for several flushes, of lengths that put flushes at every offset,
// the encoder writes the very bytes the unbatched encoder wrote, and the
// decoder reads the keys back. 60 seeds; 20 under the race detector, which
// makes generating and encoding keys of up to maxRecordKey bytes slow.
func TestLiveEncoderMatchesUnbatched(t *testing.T) {
	seeds := uint64(60)
	if raceEnabled {
		seeds = 20
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 11))
		set := map[string]bool{}
		n := r.IntN(3000)
		if seed < 5 {
			n = int(seed) // none, one, a few
		}
		for len(set) < n {
			k := make([]byte, 1+r.IntN(40))
			if r.IntN(50) == 0 {
				k = make([]byte, 1+r.IntN(maxRecordKey))
			}
			for i := range k {
				k[i] = "ab/\x00\xff"[r.IntN(5)]
			}
			set[string(k)] = true
		}
		strs := make([]string, 0, len(set))
		for k := range set {
			strs = append(strs, k)
		}
		slices.Sort(strs)
		keys := make([][]byte, len(strs))
		for i, k := range strs {
			keys[i] = []byte(k)
		}
		got := encodeLive(t, strs)
		require.Equal(t, refLiveEncode(keys), got, "seed %d", seed)
		back, err := decodeLive(got)
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, len(strs), len(back), "seed %d", seed)
		if len(strs) > 0 {
			require.Equal(t, strs, back, "seed %d", seed)
		}
	}
}

// failAfter accepts n bytes, fails one write, then accepts again: an error
// swallowed anywhere lets the encoder finish.
type failAfter struct {
	n      int
	failed bool
}

var errWriteFailed = errors.New("write failed")

func (f *failAfter) Write(p []byte) (int, error) {
	if !f.failed && len(p) > f.n {
		f.failed = true
		return f.n, errWriteFailed
	}
	f.n -= min(f.n, len(p))
	return len(p), nil
}

// TestLiveEncoderWriteFails: when the writer fails at any point, some add
// or finish reports it: a record is never finished as if complete.
func TestLiveEncoderWriteFails(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var keys [][]byte
	for i := range 4000 {
		keys = append(keys, fmt.Appendf(nil, "data/slice-%03d/object-%08d-%x", i/100, i, r.Uint64()))
	}
	total := len(refLiveEncode(keys))
	for _, n := range []int{0, 1, len(liveMagic), 100, liveFlush, liveFlush + 1, total / 2, total - 5, total - 1} {
		e, err := newLiveEncoder(&failAfter{n: n})
		failed := err != nil
		for _, k := range keys {
			if failed {
				break
			}
			failed = e.Add(k) != nil
		}
		if !failed {
			failed = e.Finish() != nil
		}
		require.True(t, failed, "writer failing after %d of %d bytes", n, total)
	}
}

// TestJoinModel runs the join on random streams, some with a key swapped
// out of place or repeated, read plainly or through prefetch batches of a
// few keys: it either fails, or both streams strictly ascended and it marked
// exactly the listed keys the keep set lacks and kept the others.
func TestJoinModel(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	strictly := func(keys []string) bool {
		for i := 1; i < len(keys); i++ {
			if keys[i] <= keys[i-1] {
				return false
			}
		}
		return true
	}
	spoil := func(keys []string) {
		if len(keys) >= 2 && r.IntN(4) == 0 {
			a, b := r.IntN(len(keys)), r.IntN(len(keys))
			keys[a] = keys[b]
		}
	}
	failed := 0
	for trial := range 1500 {
		list := randSortedKeys(r, r.IntN(40), true)
		keep := randSortedKeys(r, r.IntN(40), true)
		spoil(list)
		spoil(keep)
		var listIt, keepIt extsort.Iter = &bufIter{keys: slices.Clone(list)}, &bufIter{keys: slices.Clone(keep)}
		if trial%2 == 0 {
			pl := extsort.NewPrefetchSize(listIt, 8, 1+r.IntN(3))
			pk := extsort.NewPrefetchSize(keepIt, 8, 1+r.IntN(3))
			listIt, keepIt = pl, pk
		}
		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: "report/", cnt: &counters{}}
		n, err := m.writeCandidates(context.Background(), listKeep(listIt, keepIt))
		require.NoError(t, listIt.Close())
		require.NoError(t, keepIt.Close())
		require.NoError(t, bucket.Close())
		ok := strictly(list) && strictly(keep)
		if !ok {
			require.Error(t, err, "trial %d: list %q keep %q", trial, list, keep)
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		var marked int64
		for _, k := range list {
			if !slices.Contains(keep, k) {
				marked++
			}
		}
		require.Equal(t, marked, n, "trial %d: list %q keep %q", trial, list, keep)
		require.Equal(t, int64(len(list))-marked, m.cnt.snapshot().Kept, "trial %d", trial)
	}
	require.Greater(t, failed, 100)
}
