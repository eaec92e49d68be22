package sweep

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
	"github.com/lakegc/lakegc/internal/layout"
)

// writeIndexes writes a committed index of the entries committed (one
// block each blockN) and a staged index of the entries staged, as they are:
// the two need not agree, as a faulty writer's would not.
func writeIndexes(t *testing.T, committed, staged []indexEntry, blockN int) (cname, uname string) {
	t.Helper()
	dir := t.TempDir()
	cname, uname = filepath.Join(dir, "cindex"), filepath.Join(dir, "staged")
	f, err := os.Create(cname)
	require.NoError(t, err)
	e := newCindexEncoder(f, "data/", newMarkConfig(nil).recognizer(), true, cblockBytes)
	e.blockEntries = int64(blockN)
	for _, x := range committed {
		require.NoError(t, e.Add([]byte(x.key), x.count, x.aux))
	}
	require.NoError(t, e.Finish())
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(uname, encodeCounts(t, stagedFormat, staged), 0o600))
	return cname, uname
}

// joinIndexes runs the join over the previous indexes in cname and uname
// (of cn and un entries), with no listing, staged key or change, every key
// carried, and every block copyable when copy is set; it returns the
// candidates and the join's error.
func joinIndexes(t *testing.T, cname, uname string, cn, un int64, staged []string, copy bool) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	ci, err := openCindex(cname, 512, cn)
	require.NoError(t, err)
	uf, err := keycount.OpenFile(uname, stagedFormat, 512)
	require.NoError(t, err)
	js := joinStreams{list: &bufIter{}, staged: &bufIter{keys: staged}, committed: ci,
		stagedIdx: newIndexIter(&indexSource{f: uf, want: un}), base: true,
		carry: func([]byte) bool { return true }}
	if copy {
		js.copyable = func(*blockHeader) bool { return true }
	}
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
	m.rec = newTestRecorder(t, ctx, bucket, m.dir, 4, nil)
	_, err = m.writeCandidates(ctx, js)
	require.NoError(t, js.close())
	if err != nil {
		m.rec.abort()
		return nil, err
	}
	require.NoError(t, m.rec.close())
	var got []string
	for k, err := range Candidates(ctx, bucket, DefaultStoragePrefix, "r") {
		require.NoError(t, err)
		got = append(got, k)
	}
	return got, nil
}

// TestJoinCopiedBlockInconsistentStaged: previous indexes that disagree —
// the staged index holds a key counted 0 (listed, only staged) that the
// committed index holds counted 1 — fail the run whether the key's block
// is decoded or copied; never is the committed key marked. (A block copied
// undecoded cannot see the key in it: the staged index's key counted 0 in
// a block's range must have the block decoded.)
func TestJoinCopiedBlockInconsistentStaged(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	a, b := "data/"+slice+"/"+objID(1), "data/"+slice+"/"+objID(2)
	committed := []indexEntry{{a, 1, idxListed}, {b, 1, idxListed}}
	stagedIdx := []indexEntry{{a, 0, idxListed}}
	cname, uname := writeIndexes(t, committed, stagedIdx, 4)
	// Decoded, the block shows the two disagree. Copied, it would not:
	// the join trusts the pair, and Mark reads only the pair its state
	// names by their checksums (TestOptimizedRefuses: an index of another
	// run).
	cands, err := joinIndexes(t, cname, uname, 2, 1, nil, false)
	require.Empty(t, cands, "a committed key marked")
	require.ErrorIs(t, err, errBadIndex)
}

// TestJoinCopiedBlockStagedOnly: a key of the staged index counted 0 (a
// listed, uncommitted object) in the range of a block of committed keys,
// no longer staged, is a candidate whether the block is copied or decoded;
// still staged, it is kept. The block's keys are kept either way.
func TestJoinCopiedBlockStagedOnly(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	k := func(i int) string { return "data/" + slice + "/" + objID(i) }
	committed := []indexEntry{{k(1), 1, idxListed}, {k(3), 2, idxListed}}
	stagedIdx := []indexEntry{{k(2), 0, idxListed}}
	cname, uname := writeIndexes(t, committed, stagedIdx, 4)
	for _, copy := range []bool{false, true} {
		cands, err := joinIndexes(t, cname, uname, 2, 1, nil, copy)
		require.NoError(t, err, "copy %v", copy)
		require.Equal(t, []string{k(2)}, cands, "copy %v", copy)
		cands, err = joinIndexes(t, cname, uname, 2, 1, []string{k(2)}, copy)
		require.NoError(t, err, "copy %v", copy)
		require.Empty(t, cands, "copy %v", copy)
	}
}

// TestCopyableAcrossTheWrap: slice names descend with time only up to the
// point where xid's 32 bits of seconds wrap (layout.DescendingTime): a
// block whose first key is in an old slice and whose last is in a slice
// named after the wrap (its time in 2094–2106, newer than the cutoff, a
// slice this run lists) is not copied, though its first slice alone
// allows it.
func TestCopyableAcrossTheWrap(t *testing.T) {
	old := descendingName(time.Unix(5, 0))                                // 1970: just before the wrap in key order
	future := descendingName(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) // after it
	require.Less(t, old, future, "the names' order")
	_, tOld, ok := sliceOf([]byte("data/"+old+"/x"), "data/")
	require.True(t, ok)
	_, tFuture, ok := sliceOf([]byte("data/"+future+"/x"), "data/")
	require.True(t, ok)
	require.True(t, tOld.Before(tFuture), "times %v, %v", tOld, tFuture)
	prev := &previous{boundary: t0.Add(-10 * time.Hour), young: map[string]struct{}{}}
	require.False(t, prev.skip(future, tFuture), "the future slice is listed")
	m := &marker{cfg: newMarkConfig(nil)}
	m.sum.CutoffTime = t0.Add(-20 * time.Hour)
	h := &blockHeader{first: []byte("data/" + old + "/" + objID(1)), last: []byte("data/" + future + "/" + objID(1)), n: 2, flags: blockFlags}
	require.False(t, m.copyable(prev)(h), "a block reaching a slice this run lists")
}

// TestPeekedModel: a peeked stream, over a source that reuses one buffer
// for every key it returns, gives its entries in order whatever reads
// ahead come between (Next's key and at's keys stay as they were until the
// next call of Next), says false past the end, and errPeekFull past its
// bounds, after which Next still gives every entry.
func TestPeekedModel(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 2))
	for trial := range 120 {
		n := r.IntN(40)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%06d%s", i, strings.Repeat("x", r.IntN(20)))
		}
		var buf []byte
		i := 0
		p := &peeked{next: func() ([]byte, int64, bool, bool, error) {
			if i == len(keys) {
				return nil, 0, false, false, nil
			}
			buf = append(buf[:0], keys[i]...)
			i++
			return buf, int64(i), i%2 == 0, true, nil
		}}
		pos := 0 // the entries Next returned
		var cur []byte
		var curWant string
		for {
			if r.IntN(3) == 0 {
				// Read ahead some, and check what was read stays.
				type got struct {
					k    []byte
					want string
				}
				var gs []got
				for range 1 + r.IntN(5) {
					j := r.IntN(12)
					k, ok, err := p.at(j)
					require.NoError(t, err)
					require.Equal(t, pos+j < n, ok, "trial %d: at(%d) after %d", trial, j, pos)
					if ok {
						require.Equal(t, keys[pos+j], string(k), "trial %d: at(%d) after %d", trial, j, pos)
						gs = append(gs, got{k, keys[pos+j]})
					}
				}
				for _, g := range gs {
					require.Equal(t, g.want, string(g.k), "trial %d: a key read ahead changed", trial)
				}
				if cur != nil {
					require.Equal(t, curWant, string(cur), "trial %d: Next's key changed by a read ahead", trial)
				}
			}
			k, c, f, ok, err := p.Next()
			require.NoError(t, err)
			if pos == n {
				require.False(t, ok, "trial %d", trial)
				break
			}
			require.True(t, ok, "trial %d: entry %d", trial, pos)
			require.Equal(t, keys[pos], string(k), "trial %d", trial)
			require.Equal(t, int64(pos+1), c)
			require.Equal(t, (pos+1)%2 == 0, f)
			cur, curWant = k, keys[pos]
			pos++
		}
	}
}

// TestPeekedFull: a read ahead past peekKeys entries, or past peekBytes of
// keys, is refused with errPeekFull, and Next gives every entry after it,
// in order.
func TestPeekedFull(t *testing.T) {
	for _, size := range []int{8, 1000} {
		full := peekKeys // the entries read ahead when full
		if size*peekKeys > peekBytes {
			full = (peekBytes + size - 1) / size
		}
		n := full + 10
		key := func(b []byte, i int) []byte {
			b = binary.BigEndian.AppendUint64(b[:0], uint64(i))
			return append(b, make([]byte, size-8)...)
		}
		var buf, want []byte
		i := 0
		p := &peeked{next: func() ([]byte, int64, bool, bool, error) {
			if i == n {
				return nil, 0, false, false, nil
			}
			buf = key(buf, i)
			i++
			return buf, 1, false, true, nil
		}}
		k, ok, err := p.at(full - 1)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, key(nil, full-1), k)
		_, _, err = p.at(full)
		require.ErrorIs(t, err, errPeekFull, "size %d", size)
		for j := range n {
			k, _, _, ok, err := p.Next()
			if want = key(want, j); err != nil || !ok || !bytes.Equal(k, want) {
				t.Fatalf("size %d, entry %d: %q, %v, %v", size, j, k, ok, err)
			}
		}
		_, _, _, ok, err = p.Next()
		require.NoError(t, err)
		require.False(t, ok)
		_, ok, err = p.at(0)
		require.NoError(t, err)
		require.False(t, ok)
	}
}

// TestCindexHeaderStrict: the reader holds a header to what the layout
// says (cindex.go): a varint longer than its value needs, or a block of
// more than cblockEntries entries (which a copy would count whole, from
// its header), is refused with errBadIndex.
func TestCindexHeaderStrict(t *testing.T) {
	good := cindexOf(t, 4, []indexEntry{{"data/a", 1, 0}, {"data/b", 1, 0}})
	_, _, err := decodeCindex(t, good)
	require.NoError(t, err)
	t.Run("varint", func(t *testing.T) {
		// The first key's length, 6, as two bytes.
		at := len(cindexMagic)
		require.Equal(t, byte(6), good[at])
		long := slices.Concat(good[:at], []byte{0x86, 0x00}, good[at+1:])
		_, _, err = decodeCindex(t, reseal(long))
		require.ErrorIs(t, err, errBadIndex, "a varint of two bytes for 6")
	})
	t.Run("entries", func(t *testing.T) {
		var entries []indexEntry
		for i := range cblockEntries + 1 {
			entries = append(entries, indexEntry{fmt.Sprintf("data/k%06d", i), 1, 0})
		}
		_, _, err = decodeCindex(t, cindexOf(t, cblockEntries+1, entries))
		require.ErrorIs(t, err, errBadIndex, "a block of %d entries", cblockEntries+1)
	})
}

// walkCounts runs the join's walk over js as writeCandidates does and
// returns the joiner, its candidates part aborted.
func walkCounts(t *testing.T, ctx context.Context, m *marker, js joinStreams) (*joiner, error) {
	t.Helper()
	js.list = extsort.Strict(js.list, "listing")
	js.staged = extsort.Strict(js.staged, "keep set")
	js.counts = &bufCounts{}
	w, err := newPartWriter[addressRow](ctx, m.bucket, m.dir+layout.DeletedFolder+partName)
	require.NoError(t, err)
	defer w.Abort()
	j := &joiner{m: m, ctx: ctx, w: w, can: newCanaryCount(m.cfg, m.sum.CutoffTime), walls: layout.NewWallCursor(m.walls)}
	return j, j.walk(&js)
}

// TestJoinCopyCountsMatchDecode: a join that copies blocks whole counts
// what the same join with every block decoded counts — the canary's keep,
// in-scope, outside and matched keys, the kept, marked and walled keys —
// and writes the same records: a block's header stands in for its keys
// exactly.
func TestJoinCopyCountsMatchDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 3))
	ctx := context.Background()
	dir := t.TempDir()
	var copied int64
	for trial := range 24 {
		var univ []string
		for i := range 1 + r.IntN(4) {
			at := t0.Add(-time.Duration(10+i) * time.Hour)
			name := randDescendingName(r, at)
			for range r.IntN(30) {
				univ = append(univ, "data/"+name+"/"+randXID(r, at))
			}
		}
		index := map[string]indexEntry{}
		prevStaged := map[string]bool{}
		var staged []string
		for _, k := range univ {
			if r.IntN(4) != 0 {
				e := indexEntry{key: k, count: r.Int64N(3)}
				if e.count == 0 || r.IntN(2) == 0 {
					e.aux = idxListed
				}
				index[k] = e
				prevStaged[k] = e.count == 0 || r.IntN(5) == 0
			}
			if r.IntN(6) == 0 && (prevStaged[k] || r.IntN(4) == 0) {
				staged = append(staged, k)
			}
		}
		slices.Sort(staged)
		staged = slices.Compact(staged)
		cname, uname, cn, un := writePrevIndex(t, dir, index, prevStaged, 1+r.IntN(6))
		type result struct {
			can                  [4]int64 // keep, inScope, outside, matched
			total                Progress
			committed, stagedIdx []indexEntry
		}
		var res [2]result
		for i, copy := range []bool{false, true} {
			bucket := memblob.OpenBucket(nil)
			m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
			m.sum.CutoffTime = t0.Add(-time.Hour)
			m.rec = newTestRecorder(t, ctx, bucket, m.dir, 1+r.IntN(6), nil)
			ci, err := openCindex(cname, 512, cn)
			require.NoError(t, err)
			uf, err := keycount.OpenFile(uname, stagedFormat, 512)
			require.NoError(t, err)
			js := joinStreams{list: &bufIter{}, staged: &bufIter{keys: slices.Clone(staged)}, committed: ci,
				stagedIdx: newIndexIter(&indexSource{f: uf, want: un}), base: true,
				carry: func(k []byte) bool { _, _, ok := sliceOf(k, "data/"); return ok }}
			if copy {
				js.copyable = func(h *blockHeader) bool { return h.flags == blockFlags }
			}
			j, err := walkCounts(t, ctx, m, js)
			require.NoError(t, err, "trial %d", trial)
			require.NoError(t, js.close())
			require.NoError(t, j.m.rec.close())
			if copy {
				copied += j.copied
			}
			c := j.can
			res[i].can = [4]int64{c.keep, c.inScope, c.outside, c.matched}
			res[i].total = j.total
			res[i].committed, res[i].stagedIdx = readRecords(t, ctx, bucket, m.dir)
			require.NoError(t, bucket.Close())
		}
		require.Equal(t, res[0], res[1], "trial %d: copied against decoded", trial)
	}
	require.Greater(t, copied, int64(10), "blocks copied")
}
