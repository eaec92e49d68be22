package sweep

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/keycount"
)

// newTestRecorder returns a recorder writing a committed index of blocks of
// at most blockN entries and a staged index under dir in bucket.
func newTestRecorder(t testing.TB, ctx context.Context, bucket *blob.Bucket, dir string, blockN int, young *youngSlices) *recorder {
	t.Helper()
	cfg := newMarkConfig(nil)
	cw, err := newSinkWriter(ctx, bucket, dir+indexName, 512, func(w io.Writer) entrySink {
		e := newCindexEncoder(w, "data/", cfg.recognizer(), true, cblockBytes)
		e.blockEntries = int64(blockN)
		return e
	})
	require.NoError(t, err)
	uw, err := newIndexWriter(ctx, bucket, dir+stagedName, stagedFormat, 512)
	require.NoError(t, err)
	if young == nil {
		young = new(youngSlices)
	}
	return &recorder{index: cw, staged: uw, data: "data/", young: young}
}

func (r *recorder) abort() {
	r.index.abort()
	r.staged.abort()
}

func (r *recorder) close() error {
	if err := r.index.close(); err != nil {
		r.staged.abort()
		return err
	}
	return r.staged.close()
}

// readRecords returns the committed and staged indexes under dir.
func readRecords(t testing.TB, ctx context.Context, bucket *blob.Bucket, dir string) (committed, staged []indexEntry) {
	t.Helper()
	b, err := bucket.ReadAll(ctx, dir+indexName)
	require.NoError(t, err)
	committed, _, err = decodeCindex(t, b)
	require.NoError(t, err)
	b, err = bucket.ReadAll(ctx, dir+stagedName)
	require.NoError(t, err)
	staged, err = decodeCounts(b, stagedFormat)
	require.NoError(t, err)
	return committed, staged
}

// decodeCindex returns the entries and the headers of a committed index in
// b, through a file as a run reads it, checking every block against its
// header; the checksum first, as the copy does.
func decodeCindex(t testing.TB, b []byte) ([]indexEntry, []blockHeader, error) {
	t.Helper()
	if err := keycount.CopyChecked(io.Discard, bytes.NewReader(b), cindexFormat); err != nil {
		return nil, nil, err
	}
	name := filepath.Join(t.TempDir(), "cindex")
	require.NoError(t, os.WriteFile(name, b, 0o600))
	r, err := openCindex(name, 512, -1)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []indexEntry
	var hdrs []blockHeader
	for {
		h, ok, err := r.next()
		if err != nil {
			return out, hdrs, err
		}
		if !ok {
			return out, hdrs, nil
		}
		hc := *h
		hc.first, hc.last = slices.Clone(h.first), slices.Clone(h.last)
		hdrs = append(hdrs, hc)
		if err := r.decode(); err != nil {
			return out, hdrs, err
		}
		for {
			k, c, listed, ok, err := r.entry()
			if err != nil {
				return out, hdrs, err
			}
			if !ok {
				break
			}
			var aux uint64
			if listed {
				aux = idxListed
			}
			out = append(out, indexEntry{string(k), c, aux})
		}
	}
}

// writePrevIndex writes a previous run's committed index (index's entries
// counted above 0, in blocks of at most blockN) and staged index (index's
// entries that prevStaged names or that are counted 0) to files in dir, and
// returns their names and entry counts.
func writePrevIndex(t testing.TB, dir string, index map[string]indexEntry, prevStaged map[string]bool, blockN int) (cname, uname string, cn, un int64) {
	t.Helper()
	f, err := os.CreateTemp(dir, "cindex")
	require.NoError(t, err)
	e := newCindexEncoder(f, "data/", newMarkConfig(nil).recognizer(), true, cblockBytes)
	e.blockEntries = int64(blockN)
	u, err := os.CreateTemp(dir, "staged")
	require.NoError(t, err)
	ue := keycount.NewEncoder(u, stagedFormat, 512)
	for _, k := range slices.Sorted(maps.Keys(index)) {
		x := index[k]
		if x.count > 0 {
			require.NoError(t, e.Add([]byte(k), x.count, x.aux))
			cn++
		}
		if x.count == 0 || prevStaged[k] {
			require.NoError(t, ue.Add([]byte(k), x.count, x.aux))
			un++
		}
	}
	require.NoError(t, e.Finish())
	require.NoError(t, ue.Finish())
	require.NoError(t, f.Close())
	require.NoError(t, u.Close())
	return f.Name(), u.Name(), cn, un
}

// TestCindexRoundTrip: entries added, and blocks of another index copied
// whole between them, come back in order with headers that say what their
// blocks hold (first and last keys, entries, listed, the in-slices flag);
// the reader checks each decoded block against its header.
func TestCindexRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	rec := newMarkConfig(nil).recognizer()
	for trial := range 60 {
		at := t0.Add(-time.Duration(10+trial) * time.Hour)
		var keys []string
		for range r.IntN(200) {
			keys = append(keys, "data/"+randDescendingName(r, at)+"/"+randXID(r, at))
		}
		if r.IntN(3) == 0 {
			keys = append(keys, "data/not-a-slice/x", "top")
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		var want []indexEntry
		for _, k := range keys {
			x := indexEntry{k, 1 + r.Int64N(3), 0}
			if r.IntN(2) == 0 {
				x.aux = idxListed
			}
			want = append(want, x)
		}
		// A first index of all of them.
		var src bytes.Buffer
		e := newCindexEncoder(&src, "data/", rec, true, cblockBytes)
		e.blockEntries = int64(1 + r.IntN(9))
		for _, x := range want {
			require.NoError(t, e.Add([]byte(x.key), x.count, x.aux))
		}
		require.NoError(t, e.Finish())
		got, hdrs, err := decodeCindex(t, src.Bytes())
		require.NoError(t, err, "trial %d", trial)
		require.Equal(t, want, append([]indexEntry(nil), got...), "trial %d", trial)
		for _, h := range hdrs {
			require.LessOrEqual(t, h.n, e.blockEntries)
			var listed, recognized int64
			inSlices := true
			for _, x := range want {
				if x.key < string(h.first) || x.key > string(h.last) {
					continue
				}
				if x.aux == idxListed {
					listed++
				}
				if x.aux == idxListed || rec.OK(x.key) {
					recognized++
				}
				if _, _, ok := sliceOf([]byte(x.key), "data/"); !ok {
					inSlices = false
				}
			}
			require.Equal(t, listed, h.listed)
			require.Equal(t, recognized, h.recognized)
			require.Equal(t, inSlices, h.flags&blockInSlices != 0)
			require.NotZero(t, h.flags&blockRecognized)
		}

		// A second index: some blocks copied, the others' entries added.
		name := filepath.Join(t.TempDir(), "src")
		require.NoError(t, os.WriteFile(name, src.Bytes(), 0o600))
		cr, err := openCindex(name, 512, int64(len(want)))
		require.NoError(t, err)
		var dst bytes.Buffer
		e2 := newCindexEncoder(&dst, "data/", rec, true, cblockBytes)
		e2.blockEntries = int64(1 + r.IntN(9))
		for {
			h, ok, err := cr.next()
			require.NoError(t, err)
			if !ok {
				break
			}
			if r.IntN(2) == 0 {
				require.NoError(t, e2.Raw(h, cr.raw()))
				continue
			}
			require.NoError(t, cr.decode())
			for {
				k, c, listed, ok, err := cr.entry()
				require.NoError(t, err)
				if !ok {
					break
				}
				var aux uint64
				if listed {
					aux = idxListed
				}
				require.NoError(t, e2.Add(k, c, aux))
			}
		}
		require.NoError(t, cr.Close())
		require.NoError(t, e2.Finish())
		got, _, err = decodeCindex(t, dst.Bytes())
		require.NoError(t, err, "trial %d", trial)
		require.Equal(t, want, append([]indexEntry(nil), got...), "trial %d: copied", trial)
	}
}

// TestCindexRefusesOutOfOrder: an entry or a block copied at or below the
// last key written fails the encoder with errBadIndex.
func TestCindexRefusesOutOfOrder(t *testing.T) {
	rec := newMarkConfig(nil).recognizer()
	var buf bytes.Buffer
	e := newCindexEncoder(&buf, "data/", rec, true, cblockBytes)
	e.blockEntries = 2
	require.NoError(t, e.Add([]byte("data/b"), 1, 0))
	require.NoError(t, e.Add([]byte("data/c"), 1, 0)) // closes the block
	require.ErrorIs(t, e.Add([]byte("data/c"), 1, 0), errBadIndex)

	e = newCindexEncoder(&buf, "data/", rec, true, cblockBytes)
	require.NoError(t, e.Add([]byte("data/b"), 1, 0))
	require.ErrorIs(t, e.Raw(&blockHeader{first: []byte("data/a"), last: []byte("data/a"), n: 1}, nil), errBadIndex)
}

// cindexOf encodes entries (keys ascending) in blocks of n.
func cindexOf(t testing.TB, n int, entries []indexEntry) []byte {
	var buf bytes.Buffer
	e := newCindexEncoder(&buf, "data/", newMarkConfig(nil).recognizer(), true, cblockBytes)
	e.blockEntries = int64(n)
	for _, x := range entries {
		require.NoError(t, e.Add([]byte(x.key), x.count, x.aux))
	}
	require.NoError(t, e.Finish())
	return buf.Bytes()
}

// reseal replaces the checksum of b with the right one.
func reseal(b []byte) []byte {
	b = slices.Clone(b[:len(b)-4])
	return binary.BigEndian.AppendUint32(b, crc32c(b))
}

// TestCindexCorrupt: an index whose checksum holds but whose blocks break
// the format (headers that contradict their bodies, blocks out of order,
// numbers that do not add up, bytes after the end) is refused with
// errBadIndex, never read as fewer entries.
func TestCindexCorrupt(t *testing.T) {
	entries := []indexEntry{{"data/a/1", 1, 0}, {"data/a/2", 2, 1}, {"data/b/1", 1, 1}, {"data/c/1", 3, 0}}
	good := cindexOf(t, 2, entries)
	_, _, err := decodeCindex(t, good)
	require.NoError(t, err)
	// Every byte changed, the checksum made right again: refused, or
	// read as exactly the same entries (a change the format cannot see,
	// such as a flag the header holds only for copies).
	for i := len(cindexMagic); i < len(good)-4; i++ {
		for _, d := range []byte{1, 0x80, 0xff} {
			b := slices.Clone(good)
			b[i] ^= d
			got, _, err := decodeCindex(t, reseal(b))
			if err == nil {
				require.Equal(t, entries, got, "byte %d ^ %#x read as other entries", i, d)
				continue
			}
			require.ErrorIs(t, err, errBadIndex, "byte %d ^ %#x", i, d)
		}
	}
	for cut := range len(good) - 4 {
		_, _, err := decodeCindex(t, reseal(append(slices.Clone(good[:cut]), 0, 0, 0, 0)))
		require.Error(t, err, "cut at %d", cut)
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// FuzzCindex: any bytes read as a committed index (through a file, as a
// run reads it) give an error or entries in order, never a panic; what
// decodes is what an encoder of those entries would accept.
func FuzzCindex(f *testing.F) {
	f.Add(cindexOf(f, 2, []indexEntry{{"data/a/1", 1, 0}, {"data/a/2", 2, 1}, {"data/b/1", 1, 1}}))
	f.Add(cindexOf(f, 1, []indexEntry{{"a", 1, 0}}))
	f.Add(cindexOf(f, 4, nil))
	f.Add([]byte(cindexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 4 {
			return
		}
		got, _, err := decodeCindex(t, reseal(b))
		if err != nil {
			return
		}
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1].key, got[i].key)
		}
		for _, x := range got {
			require.Positive(t, x.count)
		}
	})
}

// TestCopyable: Mark copies a block of the previous committed index only
// when every key of it is in a slice the run does not list (older than the
// previous run's boundary, not young) and older than the run's cutoff,
// under no wall, with the header's flags set; the block's first key is in
// its newest slice.
func TestCopyable(t *testing.T) {
	hours := func(h int) time.Time { return t0.Add(-time.Duration(h) * time.Hour) }
	names := map[int]string{} // descendingName draws its name's other bytes
	name := func(h int) string {
		if _, ok := names[h]; !ok {
			names[h] = descendingName(hours(h))
		}
		return names[h]
	}
	key := func(h int, obj string) []byte { return []byte("data/" + name(h) + "/" + obj) }
	prev := &previous{boundary: hours(10), young: map[string]struct{}{name(30): {}}}
	m := &marker{cfg: newMarkConfig(nil), walls: []string{"data/" + name(50) + "/nested/"}}
	m.sum.CutoffTime = hours(20)
	copyable := m.copyable(prev)
	block := func(first, last []byte) *blockHeader {
		return &blockHeader{first: first, last: last, n: 2, flags: blockFlags}
	}
	for _, c := range []struct {
		name string
		h    *blockHeader
		want bool
	}{
		{"old slices", block(key(21, "a"), key(29, "b")), true},
		{"one old slice", block(key(40, "a"), key(40, "b")), true},
		{"newer than the cutoff", block(key(15, "a"), key(25, "b")), false},
		{"listed by age", block(key(5, "a"), key(25, "b")), false},
		{"a young slice inside", block(key(25, "a"), key(35, "b")), false},
		{"the young slice first", block(key(30, "a"), key(35, "b")), false},
		{"the young slice last", block(key(25, "a"), key(30, "b")), false},
		{"a wall inside", block(key(45, "a"), key(55, "b")), false},
		{"in the walled slice, before the wall", block(key(50, "a"), key(50, "b")), true},
		{"in the walled slice, over the wall", block(key(50, "a"), key(50, "z")), false},
		{"starting under the wall", block(key(50, "nested/x"), key(60, "b")), false},
		{"not all in slices", &blockHeader{first: key(21, "a"), last: key(29, "b"), n: 2, flags: blockRecognized}, false},
		{"recognized not counted", &blockHeader{first: key(21, "a"), last: key(29, "b"), n: 2, flags: blockInSlices}, false},
		{"first key not in a slice", block([]byte("data/legacy/x"), key(29, "b")), false},
		{"last key not in a slice", block(key(21, "a"), []byte("data/zz")), false},
	} {
		require.Equal(t, c.want, copyable(c.h), c.name)
	}
	// A boundary older than the cutoff: the slices between them are
	// listed.
	copyable = m.copyable(&previous{boundary: hours(40)})
	require.False(t, copyable(block(key(25, "a"), key(28, "b"))), "listed by age, older than the cutoff")
	require.True(t, copyable(block(key(41, "a"), key(45, "b"))), "older than the boundary")
}

// TestPeeked: a stream read ahead gives, through Next, exactly its entries
// in order, whatever is read ahead between (at); a key Next returned stays
// as it was while the stream is read ahead; at gives the entries after the
// last one Next returned, false past the end, and errPeekFull past its
// bounds, after which Next still gives every entry.
func TestPeeked(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 2))
	for trial := range 200 {
		n := r.IntN(60)
		if trial%50 == 0 {
			n = peekKeys + 100
		}
		type ent struct {
			k []byte
			c int64
			f bool
		}
		var want []ent
		for i := range n {
			want = append(want, ent{fmt.Appendf(nil, "k%08d%s", i, strings.Repeat("x", r.IntN(20))), int64(i), i%3 == 0})
		}
		i := 0
		buf := make([]byte, 0, 64)
		p := &peeked{next: func() ([]byte, int64, bool, bool, error) {
			if i == len(want) {
				return nil, 0, false, false, nil
			}
			e := want[i]
			i++
			buf = append(buf[:0], e.k...) // one buffer, reused, as a stream's
			return buf, e.c, e.f, true, nil
		}}
		for got := 0; ; got++ {
			k, c, f, ok, err := p.Next()
			require.NoError(t, err)
			if got == len(want) {
				require.False(t, ok)
				break
			}
			require.True(t, ok)
			require.Equal(t, want[got], ent{slices.Clone(k), c, f}, "trial %d entry %d", trial, got)
			held := slices.Clone(k)
			ahead := r.IntN(5)
			if trial%50 == 0 && got == 3 {
				ahead = peekKeys + 50
			}
			for a := range ahead {
				ak, aok, err := p.at(a)
				if errors.Is(err, errPeekFull) {
					require.GreaterOrEqual(t, a, peekKeys-5, "trial %d: full early", trial) // a few read ahead before
					break
				}
				require.NoError(t, err)
				if got+1+a >= len(want) {
					require.False(t, aok, "trial %d: past the end", trial)
					break
				}
				require.True(t, aok)
				require.Equal(t, string(want[got+1+a].k), string(ak), "trial %d: ahead %d of %d", trial, a, got)
			}
			require.Equal(t, held, k, "trial %d: the key Next returned changed", trial)
		}
	}
}
