package sweep

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
)

// joinWorld is one trial of TestJoinWalkModel: the streams of a join and
// the previous keep index, as maps.
type joinWorld struct {
	list, staged map[string]bool
	counts       map[string]int64 // the counts stream (changes when countsMode)
	// index is the previous keep index: its entries counted above 0 are
	// the committed index, those counted 0 or in prevStaged the staged
	// index.
	index      map[string]indexEntry
	prevStaged map[string]bool
	carried    map[string]bool // the slices whose listed index keys are carried
	countsMode bool            // the index's counts join
	wrongWant  bool            // the state's entry count of an index is wrong
	// badStaged is a committed key whose count in the staged index is
	// wrong ("": none).
	badStaged string
	blockN    int  // entries of a block of the previous committed index
	noCopy    bool // no block may be copied
}

// copyable is the world's rule for copying a block whole: every slice from
// its first key's to its last's is carried, as Mark's rule ensures.
func (w *joinWorld) copyable(h *blockHeader) bool {
	if w.noCopy || h.flags&blockInSlices == 0 {
		return false
	}
	first, _, ok1 := sliceOf(h.first, "data/")
	last, _, ok2 := sliceOf(h.last, "data/")
	if !ok1 || !ok2 {
		return false
	}
	for name, c := range w.carried {
		if name >= first && name <= last && !c {
			return false
		}
	}
	return true
}

// prevStreams opens the previous index's files (written by writePrevIndex)
// as the join reads them.
func (w *joinWorld) prevStreams(t testing.TB, js *joinStreams, cname, uname string, cn, un int64, wrongC bool) {
	t.Helper()
	if w.wrongWant {
		if wrongC {
			cn++
		} else {
			un++
		}
	}
	ci, err := openCindex(cname, 512, cn)
	require.NoError(t, err)
	uf, err := keycount.OpenFile(uname, stagedFormat, 512)
	require.NoError(t, err)
	js.committed, js.stagedIdx = ci, newIndexIter(&indexSource{f: uf, want: un})
	js.base, js.carry = w.countsMode, w.carry
	if w.countsMode {
		js.copyable = w.copyable
	}
}

// split returns the records a run writes of the keep index's entries:
// those counted above 0 in the committed index, those staged in the staged
// index.
func (w *joinWorld) split(entries []indexEntry) (committed, staged []indexEntry) {
	for _, x := range entries {
		if x.count > 0 {
			committed = append(committed, x)
		}
		if w.staged[x.key] {
			staged = append(staged, x)
		}
	}
	return committed, staged
}

func (w *joinWorld) carry(k []byte) bool {
	name, _, ok := sliceOf(k, "data/")
	return ok && w.carried[name]
}

// model returns what the join must write (candidates and index entries),
// or false when it must fail.
func (w *joinWorld) model() ([]string, []indexEntry, bool) {
	keys := map[string]bool{}
	for _, m := range []map[string]bool{w.list, w.staged} {
		for k := range m {
			keys[k] = true
		}
	}
	for k := range w.counts {
		keys[k] = true
	}
	for k := range w.index {
		keys[k] = true
	}
	if w.wrongWant || w.badStaged != "" {
		return nil, nil, false
	}
	var cands []string
	var entries []indexEntry
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		count := w.counts[k]
		e, inIndex := w.index[k]
		if inIndex && w.countsMode {
			count += e.count
		}
		if count < 0 {
			return nil, nil, false
		}
		carried := inIndex && e.aux == idxListed && w.carry([]byte(k))
		listed := w.list[k] || carried
		kept := w.staged[k] || count > 0
		_, _, inSlice := sliceOf([]byte(k), "data/")
		switch {
		case listed && !kept:
			cands = append(cands, k)
		case listed && inSlice:
			entries = append(entries, indexEntry{k, count, idxListed})
		case count > 0:
			entries = append(entries, indexEntry{k, count, 0})
		}
	}
	return cands, entries, true
}

// TestJoinWalkModel: the join's one walk over the listing, the staged keys,
// the counts and the previous keep index (each read ahead in small batches
// or read plainly, from buffers their streams reuse) marks exactly the
// listed keys (by the listing, or carried by the index) that are neither
// staged nor counted above 0, records exactly the keep index a model
// computes, and fails on a count below 0 or an index whose size its state
// contradicts. 600 trials; 200 under the race detector.
func TestJoinWalkModel(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	ctx := context.Background()
	dir := t.TempDir()
	failed := 0
	var copied int64
	trials := 600
	if raceEnabled {
		trials = 200
	}
	for trial := range trials {
		var univ []string
		var names []string
		for i := range 1 + r.IntN(4) {
			at := t0.Add(-time.Duration(10+i) * time.Hour)
			name := randDescendingName(r, at)
			names = append(names, name)
			for range r.IntN(15) {
				univ = append(univ, "data/"+name+"/"+randXID(r, at))
			}
		}
		univ = append(univ, "data/not-a-slice", "top-level", "data/"+names[0]+"x/y")
		w := &joinWorld{list: map[string]bool{}, staged: map[string]bool{}, counts: map[string]int64{},
			index: map[string]indexEntry{}, prevStaged: map[string]bool{}, carried: map[string]bool{}, countsMode: r.IntN(2) == 0,
			wrongWant: r.IntN(20) == 0, blockN: 1 + r.IntN(6)}
		for _, name := range names {
			w.carried[name] = r.IntN(2) == 0
		}
		for _, k := range univ {
			if r.IntN(3) == 0 {
				w.list[k] = true
			}
			if r.IntN(4) == 0 {
				w.staged[k] = true
			}
			if r.IntN(2) == 0 {
				e := indexEntry{key: k, count: r.Int64N(3)}
				if e.count == 0 || r.IntN(2) == 0 {
					e.aux = idxListed
				}
				w.index[k] = e
				// Mostly, a key staged now was staged then (the staged
				// index holds it): else its block is decoded.
				w.prevStaged[k] = w.staged[k] && r.IntN(6) != 0 || r.IntN(5) == 0
			}
			if r.IntN(4) != 0 {
				continue // most keys unchanged, so that blocks are copied
			}
			if r.IntN(3) == 0 {
				c := r.Int64N(5) - 1
				if r.IntN(8) != 0 {
					c = max(c, 1-w.index[k].count) // mostly a valid change
				}
				if c != 0 {
					w.counts[k] = c
				}
			}
		}
		if r.IntN(15) == 0 {
			// A committed key of the staged index with another count:
			// found when its block is decoded (never copied here).
			for _, k := range slices.Sorted(maps.Keys(w.index)) {
				if w.index[k].count > 0 && w.prevStaged[k] {
					w.badStaged, w.noCopy = k, true
					break
				}
			}
		}
		wantCands, wantEntries, ok := w.model()

		// The previous index, in files.
		index := maps.Clone(w.index)
		cname, uname, cn, un := writePrevIndex(t, dir, index, w.prevStaged, w.blockN)
		if w.badStaged != "" {
			// Write the staged index again, that key's count one more.
			e := index[w.badStaged]
			e.count++
			index[w.badStaged] = e
			var cn2 int64
			_, uname, cn2, un = writePrevIndex(t, dir, index, w.prevStaged, w.blockN)
			require.Equal(t, cn, cn2)
		}

		var list, staged extsort.Iter = &bufIter{keys: slices.Sorted(maps.Keys(w.list))}, &bufIter{keys: slices.Sorted(maps.Keys(w.staged))}
		cKeys := slices.Sorted(maps.Keys(w.counts))
		var cCounts []int64
		for _, k := range cKeys {
			cCounts = append(cCounts, w.counts[k])
		}
		var counts keycount.Iter = &bufCounts{keys: cKeys, counts: cCounts}
		if trial%2 == 0 {
			list = extsort.NewPrefetchSize(list, 8, 1+r.IntN(3))
			staged = extsort.NewPrefetchSize(staged, 8, 1+r.IntN(3))
			counts = keycount.Prefetch(counts)
		}
		js := joinStreams{list: list, staged: staged, counts: counts}
		w.prevStreams(t, &js, cname, uname, cn, un, r.IntN(2) == 0)

		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
		rec := newTestRecorder(t, ctx, bucket, m.dir, 1+r.IntN(6), nil)
		m.rec = rec
		n, err := m.writeCandidates(ctx, js)
		require.NoError(t, js.close())
		if !ok {
			require.Error(t, err, "trial %d", trial)
			rec.abort()
			require.NoError(t, bucket.Close())
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		require.NoError(t, rec.close())
		copied += m.sum.IndexBlocksCopied
		require.Equal(t, int64(len(wantCands)), n, "trial %d", trial)
		var got []string
		for k, err := range Candidates(ctx, bucket, DefaultStoragePrefix, "r") {
			require.NoError(t, err)
			got = append(got, k)
		}
		require.Equal(t, wantCands, got, "trial %d: candidates", trial)
		wantC, wantU := w.split(wantEntries)
		gotC, gotU := readRecords(t, ctx, bucket, m.dir)
		require.Equal(t, wantC, gotC, "trial %d: committed index", trial)
		require.Equal(t, wantU, gotU, "trial %d: staged index", trial)
		require.NoError(t, bucket.Close())
	}
	require.Greater(t, failed, trials/60, "trials that must fail")
	require.Less(t, failed, trials/2, "trials that must fail")
	require.Greater(t, copied, int64(trials/12), "blocks copied whole")
	t.Logf("%d of %d trials failed, %d blocks copied", failed, trials, copied)
}

// TestJoinIndexFailureLeavesNoCandidates: when the keep index cannot be
// written (here its encoder refuses a key out of order), writeCandidates
// fails and leaves no candidates part, though the join itself went well.
func TestJoinIndexFailureLeavesNoCandidates(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
	rec := newTestRecorder(t, ctx, bucket, m.dir, 4, nil)
	require.NoError(t, rec.index.add([]byte("data/zzzz"), 1, 0))
	m.rec = rec
	js := listKeep(&bufIter{keys: []string{"data/a", "data/b"}}, &bufIter{keys: []string{"data/b"}})
	js.counts = &bufCounts{keys: []string{"data/c"}, counts: []int64{1}}
	_, err := m.writeCandidates(ctx, js)
	require.ErrorIs(t, err, errBadIndex)
	require.NoError(t, js.close())
	rec.abort()
	ok, err := bucket.Exists(ctx, m.dir+"deleted/"+partName)
	require.NoError(t, err)
	require.False(t, ok, "candidates written by a run whose keep index failed")
}
