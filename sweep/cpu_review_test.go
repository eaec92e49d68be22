package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
		shared := commonPrefix(k, prev)
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
// decoder reads the keys back.
func TestLiveEncoderMatchesUnbatched(t *testing.T) {
	for seed := range uint64(60) {
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
			failed = e.add(k) != nil
		}
		if !failed {
			failed = e.finish() != nil
		}
		require.True(t, failed, "writer failing after %d of %d bytes", n, total)
	}
}

// refRunNext reads the next key of a run file the way fileRun did before it
// decoded keys in its read buffer: varint by varint, byte by byte.
type refRun struct {
	r   *bufio.Reader
	buf []byte
	n   uint64
}

func (fr *refRun) next() ([]byte, bool, error) {
	shared, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, noEOF(err)
	}
	if shared == 0 {
		n, err := binary.ReadUvarint(fr.r)
		if err != nil {
			return nil, false, noEOF(err)
		}
		if n != fr.n {
			return nil, false, errors.New("count")
		}
		if _, err := fr.r.ReadByte(); err != io.EOF {
			return nil, false, errors.New("bytes after the end")
		}
		return nil, false, nil
	}
	shared--
	rest, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, noEOF(err)
	}
	if shared > uint64(len(fr.buf)) || rest > maxKeyLen-shared {
		return nil, false, errors.New("lengths")
	}
	k := make([]byte, shared+rest)
	copy(k, fr.buf[:shared])
	if _, err := io.ReadFull(fr.r, k[shared:]); err != nil {
		return nil, false, noEOF(err)
	}
	fr.buf = k
	fr.n++
	return k, true, nil
}

// readAll reads every key of it up to its end or first error.
func readAll(it interface {
	next() ([]byte, bool, error)
}, limit int) ([]string, error) {
	var keys []string
	for range limit {
		k, ok, err := it.next()
		if err != nil || !ok {
			return keys, err
		}
		keys = append(keys, string(k))
	}
	return keys, errors.New("too many keys")
}

// TestRunFileMatchesReference writes run files, damages them (a flipped
// byte, a cut, bytes added), and reads each with fileRun through read
// buffers from the smallest up, and with the byte-by-byte reference: the
// same keys, and an error in both or in neither.
func TestRunFileMatchesReference(t *testing.T) {
	dir, err := newSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.remove()
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 17))
		rw, err := dir.create()
		require.NoError(t, err)
		for range r.IntN(200) {
			k := bytes.Repeat([]byte{'k'}, r.IntN(40))
			for range r.IntN(30) {
				k = append(k, "ab\x00\x80\xff"[r.IntN(5)])
			}
			require.NoError(t, rw.add(k))
		}
		name, err := rw.finish()
		require.NoError(t, err)
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.Remove(name))
		switch r.IntN(4) {
		case 0:
			data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
		case 1:
			data = data[:r.IntN(len(data))]
		case 2:
			i := r.IntN(len(data))
			data = slices.Insert(data, i, byte(r.IntN(256)))
		}
		want, wantErr := readAll(&refRun{r: bufio.NewReader(bytes.NewReader(data))}, len(data)+1)
		for _, size := range []int{16, 33, 4096} {
			file := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.WriteFile(file, data, 0o600))
			fr, err := openRun(file, size)
			require.NoError(t, err)
			got, gotErr := readAll(fr, len(data)+1)
			require.NoError(t, fr.close())
			require.Equal(t, want, got, "seed %d buffer %d", seed, size)
			require.Equal(t, wantErr != nil, gotErr != nil, "seed %d buffer %d: %v, %v", seed, size, wantErr, gotErr)
		}
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
		var listIt, keepIt keyIter = &bufIter{keys: slices.Clone(list)}, &bufIter{keys: slices.Clone(keep)}
		if trial%2 == 0 {
			pl := newPrefetchSize(listIt, 8, 1+r.IntN(3))
			pk := newPrefetchSize(keepIt, 8, 1+r.IntN(3))
			listIt, keepIt = pl, pk
		}
		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: "report/", cnt: &counters{}}
		n, err := m.writeCandidates(context.Background(), listIt, keepIt)
		require.NoError(t, listIt.close())
		require.NoError(t, keepIt.close())
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
