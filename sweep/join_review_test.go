package sweep

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
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

// TestIndexWriterSurfacesEncoderError: the keep index is encoded on a
// goroutine of its own, and an entry its encoder refuses (a key out of
// order, or a repeat: a join that judged a key twice) must fail the run
// before its state is written. The encoder does not remember such an error
// itself, so a writer that dropped it would finish a shorter index whose
// entry count matches what it holds — one the next optimized run would
// trust, judging the keys after the bad one with no count. close must fail,
// leave nothing under the index's name, and stop the goroutine; add must
// fail soon after the bad entry (within the batches in flight) rather than
// take the rest of the join; abort after a failure must not hang.
func TestIndexWriterSurfacesEncoderError(t *testing.T) {
	ctx := context.Background()
	key := func(i int) []byte { return fmt.Appendf(nil, "data/k%08d", i) }
	for _, c := range []struct {
		name  string
		bad   int  // the entry before which the bad one comes
		total int  // entries in order besides the bad one
		abort bool // abort instead of close
	}{
		{"first batch", 3, 10, false},
		{"repeat at a batch boundary", entryBatchKeys, entryBatchKeys + 10, false},
		{"late, many batches after", 2*entryBatchKeys + 7, 12 * entryBatchKeys, false},
		{"last entry", 500, 500, false},
		{"abort", entryBatchKeys + 1, 10 * entryBatchKeys, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			iw, err := newIndexWriter(ctx, bucket, "index", stagedFormat, 512)
			require.NoError(t, err)
			var addErr error
			added := 0
			for i := 0; i < c.total && addErr == nil; i++ {
				if i == c.bad && i > 0 {
					// The previous key again: a repeat the encoder refuses.
					addErr = iw.add(key(i-1), 1, 0)
				}
				if addErr == nil {
					addErr = iw.add(key(i), 1, 0)
					added++
				}
			}
			if c.bad == c.total {
				addErr = iw.add(key(0), 1, idxListed) // out of order, last
			}
			if addErr != nil {
				require.ErrorIs(t, addErr, errBadIndex)
				// It came within the batches in flight after the bad one.
				require.LessOrEqual(t, added-c.bad, (entryBatches+1)*entryBatchKeys)
			} else {
				// Never reported by add: only when nothing followed for
				// long (every add after the bad entry fits the batches
				// in flight).
				require.LessOrEqual(t, c.total-c.bad, (entryBatches+1)*entryBatchKeys, "add went on %d entries after the bad one", c.total-c.bad)
			}
			if c.abort {
				iw.abort()
			} else {
				err = iw.close()
				require.ErrorIs(t, err, errBadIndex)
			}
			select {
			case <-iw.done:
			default:
				t.Fatal("the encoding goroutine is still running")
			}
			ok, err := bucket.Exists(ctx, "index")
			require.NoError(t, err)
			require.False(t, ok, "a keep index is visible after its encoder failed")
		})
	}
}

// TestIndexWriterMany: entries across many batches, with keys of every
// length up to the format's bound, come out of the goroutine as added, in
// order and whole (the batches are reused: a key must not be overwritten
// before it is encoded).
func TestIndexWriterMany(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 33))
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	iw, err := newIndexWriter(ctx, bucket, "index", stagedFormat, 512)
	require.NoError(t, err)
	var want []indexEntry
	for i := range 3*entryBatchKeys + 77 {
		k := fmt.Sprintf("data/k%08d/", i)
		if r.IntN(500) == 0 {
			k += strings.Repeat("x", keycount.MaxKey-len(k)) // a batch of few keys
		} else {
			k += strings.Repeat("y", r.IntN(40))
		}
		e := indexEntry{k, r.Int64N(4), 0}
		if e.count == 0 || r.IntN(2) == 0 {
			e.aux = idxListed
		}
		want = append(want, e)
		require.NoError(t, iw.add([]byte(e.key), e.count, e.aux))
	}
	require.NoError(t, iw.close())
	b, err := bucket.ReadAll(ctx, "index")
	require.NoError(t, err)
	got, err := decodeCounts(b, stagedFormat)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// reviewWorld is one trial of TestJoinWalkWallsCheckCanary: the join's
// streams as maps, with walls, a candidate check, and the canary's view.
type reviewWorld struct {
	joinWorld
	walls []string
	spare map[string]bool // the keys the candidate check spares
	check bool
	shard bool // m.rec nil: no index written
}

func (w *reviewWorld) walled(k string) bool {
	for _, p := range w.walls {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// model returns the candidates, the index entries, the slices the check's
// spared keys add to the young ones, and the keys the canary counts as
// kept and as matched, in order; false when the join must fail.
func (w *reviewWorld) model() (cands []string, entries []indexEntry, young []string, kept, matched []string, ok bool) {
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
	if w.wrongWant {
		return nil, nil, nil, nil, nil, false
	}
	ys := map[string]bool{}
	record := func(k string, count int64, listed bool) {
		_, _, inSlice := sliceOf([]byte(k), "data/")
		switch {
		case listed && inSlice:
			entries = append(entries, indexEntry{k, count, idxListed})
		case count > 0:
			entries = append(entries, indexEntry{k, count, 0})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		count := w.counts[k]
		e, inIndex := w.index[k]
		if inIndex && w.countsMode {
			count += e.count
		}
		if count < 0 {
			return nil, nil, nil, nil, nil, false
		}
		carried := inIndex && e.aux == idxListed && w.carry([]byte(k))
		listed := w.list[k] || carried
		isKept := w.staged[k] || count > 0
		if isKept {
			kept = append(kept, k)
		}
		switch {
		case !listed:
			if isKept {
				record(k, count, false)
			}
		case isKept:
			matched = append(matched, k)
			record(k, count, !w.walled(k))
		case w.walled(k):
		case w.check && w.spare[k]:
			if name, _, ok := sliceOf([]byte(k), "data/"); ok && !w.shard {
				ys[name] = true
			}
		default:
			cands = append(cands, k)
		}
	}
	if w.shard {
		entries = nil
	}
	return cands, entries, slices.Sorted(maps.Keys(ys)), kept, matched, true
}

// TestJoinWalkWallsCheckCanary is TestJoinWalkModel with what that model
// leaves out: walls (a walled key is never a candidate, and is recorded
// unlisted, so no later run carries it), the candidate check (called in
// ascending batches of at most checkBatch; a spared key is no candidate,
// is not recorded, and its slice is listed again next time), a sharded run
// (no recorder), and the canary: its counts, with carried keys taken as
// recognized, are those of a canary that asks the recognizer about every
// kept key (the previous run's index marks listed only keys the recognizer
// accepted). Some trials' indexes mark listed keys the recognizer refuses
// or a wall holds (a custom recognizer's; a wall the previous run did not
// see): a walled key is never a candidate, carried or not.
func TestJoinWalkWallsCheckCanary(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	ctx := context.Background()
	dir := t.TempDir()
	cutoff := t0
	failed := 0
	var copied int64
	for trial := range 400 {
		var univ, names []string
		w := &reviewWorld{joinWorld: joinWorld{list: map[string]bool{}, staged: map[string]bool{}, counts: map[string]int64{},
			index: map[string]indexEntry{}, prevStaged: map[string]bool{}, carried: map[string]bool{}, countsMode: r.IntN(2) == 0,
			wrongWant: r.IntN(25) == 0, blockN: 1 + r.IntN(5)},
			spare: map[string]bool{}, check: r.IntN(2) == 0, shard: r.IntN(6) == 0}
		for i := range 1 + r.IntN(4) {
			at := t0.Add(-time.Duration(10+i) * time.Hour)
			if i == 3 {
				at = t0.Add(time.Hour) // a slice after the cutoff
			}
			name := randDescendingName(r, at)
			names = append(names, name)
			w.carried[name] = i != 3 && r.IntN(2) == 0
			for range r.IntN(15) {
				univ = append(univ, "data/"+name+"/"+randXID(r, at))
			}
			if r.IntN(2) == 0 {
				// Another repository's folder in the slice: a wall.
				wall := "data/" + name + "/" + randXID(r, at) + "/"
				if r.IntN(3) != 0 {
					w.walls = append(w.walls, wall)
				}
				for range 1 + r.IntN(4) {
					univ = append(univ, wall+randXID(r, at))
				}
			}
		}
		slices.Sort(w.walls)
		univ = append(univ, "data/not-a-slice", "top-level", "data/"+names[0]+"x/y", "zz/outside")
		rec := newMarkConfig(nil).recognizer()
		foreign := r.IntN(3) == 0
		for _, k := range univ {
			if r.IntN(3) == 0 {
				w.list[k] = true
			}
			if r.IntN(4) == 0 {
				w.staged[k] = true
			}
			if r.IntN(2) == 0 {
				e := indexEntry{key: k, count: r.Int64N(3)}
				// A keep index marks listed only keys in a slice the
				// recognizer accepted, and none under a wall — but for
				// a custom recognizer's, or a wall the previous run
				// did not see (foreign trials).
				if (e.count == 0 || r.IntN(2) == 0) && (foreign || rec.OK(k) && !w.walled(k)) {
					e.aux = idxListed
				}
				if e.count > 0 || e.aux == idxListed {
					w.index[k] = e
					w.prevStaged[k] = w.staged[k] && r.IntN(6) != 0 || r.IntN(5) == 0
				}
			}
			if r.IntN(3) == 0 {
				c := r.Int64N(5) - 1
				if r.IntN(8) != 0 {
					c = max(c, 1-w.index[k].count)
				}
				if c != 0 {
					w.counts[k] = c
				}
			}
			if r.IntN(2) == 0 {
				w.spare[k] = true
			}
		}
		wantCands, wantEntries, wantYoung, wantKept, wantMatched, ok := w.model()

		cname, uname, cn, un := writePrevIndex(t, dir, w.index, w.prevStaged, w.blockN)
		wrongC := r.IntN(2) == 0
		// streams builds the join's streams afresh: the join runs twice,
		// once through writeCandidates and once by hand for the canary.
		streams := func() joinStreams {
			cKeys := slices.Sorted(maps.Keys(w.counts))
			var cCounts []int64
			for _, k := range cKeys {
				cCounts = append(cCounts, w.counts[k])
			}
			js := joinStreams{
				list:   extsort.NewPrefetchSize(&bufIter{keys: slices.Sorted(maps.Keys(w.list))}, 8, 1+r.IntN(3)),
				staged: extsort.NewPrefetchSize(&bufIter{keys: slices.Sorted(maps.Keys(w.staged))}, 8, 1+r.IntN(3)),
				counts: keycount.Prefetch(&bufCounts{keys: cKeys, counts: cCounts}),
			}
			w.prevStreams(t, &js, cname, uname, cn, un, wrongC)
			if js.copyable != nil {
				// Mark's rule: no block with a wall in its range.
				js.copyable = func(h *blockHeader) bool { return w.copyable(h) && !wallsMeet(w.walls, h.first, h.last) }
			}
			return js
		}
		var opts []MarkOption
		var asked []string
		if w.check {
			opts = append(opts, WithCandidateCheck(func(_ context.Context, keys []string, keep []bool) error {
				require.LessOrEqual(t, len(keys), checkBatch)
				for i, k := range keys {
					keep[i] = w.spare[k]
				}
				asked = append(asked, keys...)
				return nil
			}))
		}
		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(opts), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}, walls: w.walls}
		m.sum.CutoffTime = cutoff
		var records *recorder
		young := new(youngSlices)
		if !w.shard {
			records = newTestRecorder(t, ctx, bucket, m.dir, 1+r.IntN(5), young)
			m.rec = records
		}
		js := streams()
		n, err := m.writeCandidates(ctx, js)
		require.NoError(t, js.close())
		if !ok {
			require.Error(t, err, "trial %d", trial)
			if records != nil {
				records.abort()
			}
			require.NoError(t, bucket.Close())
			failed++
			continue
		}
		require.NoError(t, err, "trial %d", trial)
		if records != nil {
			require.NoError(t, records.close())
		}
		copied += m.sum.IndexBlocksCopied
		require.Equal(t, int64(len(wantCands)), n, "trial %d", trial)
		var got []string
		for k, err := range Candidates(ctx, bucket, DefaultStoragePrefix, "r") {
			require.NoError(t, err)
			got = append(got, k)
		}
		require.Equal(t, wantCands, got, "trial %d: candidates", trial)
		require.True(t, slices.IsSorted(asked), "trial %d: the check's keys out of order", trial)
		if !w.shard {
			wantC, wantU := w.split(wantEntries)
			gotC, gotU := readRecords(t, ctx, bucket, m.dir)
			require.Equal(t, wantC, gotC, "trial %d: committed index", trial)
			require.Equal(t, wantU, gotU, "trial %d: staged index", trial)
			require.Equal(t, wantYoung, slices.Sorted(maps.Keys(young.names)), "trial %d: young slices", trial)
		}
		require.NoError(t, bucket.Close())

		if foreign {
			// The canary takes a carried key as recognized: one the
			// recognizer refuses counts in scope (the canary is
			// stricter, never laxer), so its counts differ.
			continue
		}
		// The canary's counts: those of one that asks the recognizer
		// about every kept key.
		js = streams()
		pw, err := newPartWriter[addressRow](ctx, memblob.OpenBucket(nil), "x/"+partName)
		require.NoError(t, err)
		b2 := memblob.OpenBucket(nil)
		m2 := &marker{bucket: b2, cfg: newMarkConfig(opts), dir: "y/", cnt: &counters{}, walls: w.walls}
		m2.rec = newTestRecorder(t, ctx, b2, m2.dir, 3, nil)
		j := &joiner{m: m2, ctx: ctx, w: pw, can: newCanaryCount(m2.cfg, cutoff), walls: layout.NewWallCursor(w.walls)}
		require.NoError(t, j.walk(&js), "trial %d", trial)
		require.NoError(t, js.close())
		pw.Abort()
		m2.rec.abort()
		require.NoError(t, b2.Close())
		ref := newCanaryCount(m2.cfg, cutoff)
		for _, k := range wantKept {
			ref.keepKey([]byte(k), false)
		}
		ref.matched = int64(len(wantMatched))
		require.Equal(t, [4]int64{ref.keep, ref.inScope, ref.outside, ref.matched},
			[4]int64{j.can.keep, j.can.inScope, j.can.outside, j.can.matched}, "trial %d: canary (keep, in scope, outside, matched)", trial)
	}
	require.Greater(t, failed, 5, "trials that must fail")
	require.Less(t, failed, 200, "trials that must fail")
	require.Greater(t, copied, int64(25), "blocks copied whole")
}
