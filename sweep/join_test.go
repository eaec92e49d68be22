package sweep

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	index        map[string]indexEntry
	carried      map[string]bool // the slices whose listed index keys are carried
	countsMode   bool            // the index's counts join
	wrongWant    bool            // the state's entry count of the index is wrong
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
	if w.countsMode && w.wrongWant {
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
			index: map[string]indexEntry{}, carried: map[string]bool{}, countsMode: r.IntN(2) == 0, wrongWant: r.IntN(20) == 0}
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
		wantCands, wantEntries, ok := w.model()

		// The previous index, in a file.
		name := filepath.Join(dir, fmt.Sprintf("index%d", trial))
		f, err := os.Create(name)
		require.NoError(t, err)
		bw := bufio.NewWriter(f)
		enc := keycount.NewEncoder(bw, indexFormat, 512)
		for _, k := range slices.Sorted(maps.Keys(w.index)) {
			e := w.index[k]
			require.NoError(t, enc.Add([]byte(k), e.count, e.aux))
		}
		require.NoError(t, enc.Finish())
		require.NoError(t, bw.Flush())
		require.NoError(t, f.Close())
		kf, err := keycount.OpenFile(name, indexFormat, 512)
		require.NoError(t, err)
		want := int64(len(w.index))
		if w.wrongWant {
			want++
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
		js := joinStreams{list: list, staged: staged, counts: counts,
			index: newIndexIter(&indexSource{f: kf, counts: w.countsMode, want: want, carry: w.carry})}

		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
		iw, err := newIndexWriter(ctx, bucket, m.dir+indexName, indexFormat, 512)
		require.NoError(t, err)
		m.rec = &recorder{index: iw, data: "data/", young: new(youngSlices)}
		n, err := m.writeCandidates(ctx, js)
		require.NoError(t, js.close())
		if !ok {
			require.Error(t, err, "trial %d", trial)
			iw.abort()
			require.NoError(t, bucket.Close())
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		require.NoError(t, iw.close())
		require.Equal(t, int64(len(wantCands)), n, "trial %d", trial)
		var got []string
		for k, err := range Candidates(ctx, bucket, DefaultStoragePrefix, "r") {
			require.NoError(t, err)
			got = append(got, k)
		}
		require.Equal(t, wantCands, got, "trial %d: candidates", trial)
		b, err := bucket.ReadAll(ctx, m.dir+indexName)
		require.NoError(t, err)
		gotEntries, err := decodeCounts(b, indexFormat)
		require.NoError(t, err)
		require.Equal(t, wantEntries, gotEntries, "trial %d: keep index", trial)
		require.NoError(t, bucket.Close())
	}
	require.Greater(t, failed, trials/60, "trials that must fail")
	require.Less(t, failed, trials/2, "trials that must fail")
	t.Logf("%d of %d trials failed", failed, trials)
}

// TestJoinIndexFailureLeavesNoCandidates: when the keep index cannot be
// written (here its encoder refuses a key out of order), writeCandidates
// fails and leaves no candidates part, though the join itself went well.
func TestJoinIndexFailureLeavesNoCandidates(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
	iw, err := newIndexWriter(ctx, bucket, m.dir+indexName, indexFormat, 512)
	require.NoError(t, err)
	require.NoError(t, iw.add([]byte("data/zzzz"), 1, 0))
	m.rec = &recorder{index: iw, data: "data/", young: new(youngSlices)}
	js := listKeep(&bufIter{keys: []string{"data/a", "data/b"}}, &bufIter{keys: []string{"data/b"}})
	js.counts = &bufCounts{keys: []string{"data/c"}, counts: []int64{1}}
	_, err = m.writeCandidates(ctx, js)
	require.ErrorIs(t, err, errBadIndex)
	require.NoError(t, js.close())
	iw.abort()
	ok, err := bucket.Exists(ctx, m.dir+"deleted/"+partName)
	require.NoError(t, err)
	require.False(t, ok, "candidates written by a run whose keep index failed")
}
