package sweep

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
)

// BenchmarkJoinWalk is the join of an optimized run alone, shaped as the
// bottom line's after 1 % churn: LAKEGC_JOIN_BENCH_KEYS keys (default
// 1,000,000) in 100 old slices, a fifth of them staged (in the previous
// staged index too, counted 0) and the rest committed (counted 1, listed by
// the previous run, in blocks of 4,096); the counts change in one slice (as
// a commit's objects were uploaded together): half of its committed keys
// drop to 0, and half a slice's worth of new keys are committed; two young
// slices are listed
// (LAKEGC_JOIN_BENCH_KEYS/100 keys, half of them garbage). Every old slice
// is carried, so the committed blocks no change reaches are copied. It
// reports the time and the process's CPU time (every goroutine of the join:
// the walk, the streams' read-ahead, the indexes' encoders; not the
// uploads' tail after it, nor what the read-ahead did before it started)
// per staged key, the walk's largest stream:
//
//	go test -run XXX -bench JoinWalk -benchtime 5x ./sweep/
func BenchmarkJoinWalk(b *testing.B) {
	n := envInt(b, "LAKEGC_JOIN_BENCH_KEYS", 1_000_000)
	r := rand.New(rand.NewPCG(36, 1))
	ctx := context.Background()
	dir := b.TempDir()
	w := &joinWorld{list: map[string]bool{}, staged: map[string]bool{}, counts: map[string]int64{},
		index: map[string]indexEntry{}, prevStaged: map[string]bool{}, carried: map[string]bool{}, countsMode: true}
	const old = 100
	for i := range old {
		at := t0.Add(-time.Duration(48+i) * time.Hour)
		name := randDescendingName(r, at)
		w.carried[name] = true
		for range n / old {
			k := "data/" + name + "/" + randXID(r, at)
			switch {
			case r.IntN(5) == 0:
				w.staged[k], w.prevStaged[k] = true, true
				w.index[k] = indexEntry{key: k, count: 0, aux: idxListed}
			case i == old/2 && r.IntN(2) == 0:
				w.index[k] = indexEntry{key: k, count: 1, aux: idxListed}
				w.counts[k] = -1
			default:
				w.index[k] = indexEntry{key: k, count: 1, aux: idxListed}
			}
		}
		if i == old/2 {
			for range n / old / 2 {
				w.counts["data/"+name+"/"+randXID(r, at)] = 1
			}
		}
	}
	for i := range 2 {
		at := t0.Add(-time.Duration(i) * time.Hour)
		name := randDescendingName(r, at)
		for j := range n / 200 {
			k := "data/" + name + "/" + randXID(r, at)
			w.list[k] = true
			if j%2 == 0 {
				w.counts[k] = 1
			}
		}
	}
	cname, uname, cn, un := writePrevIndex(b, dir, w.index, w.prevStaged, cblockEntries)
	listKeys, stagedKeys := slices.Sorted(mapKeys(w.list)), slices.Sorted(mapKeys(w.staged))
	cKeys := slices.Sorted(mapKeys(w.counts))
	cCounts := make([]int64, len(cKeys))
	for i, k := range cKeys {
		cCounts[i] = w.counts[k]
	}
	*w = joinWorld{carried: w.carried}
	runtime.GC()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		js := joinStreams{
			list:   extsort.NewPrefetch(&bufIter{keys: listKeys}),
			staged: extsort.NewPrefetch(&bufIter{keys: stagedKeys}),
			counts: keycount.Prefetch(&bufCounts{keys: cKeys, counts: cCounts}),
		}
		bucket := memblob.OpenBucket(nil)
		m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
		// The files and buffers of a run's default budget.
		ioBuf := m.budgets().ioBuf
		ci, err := openCindex(cname, ioBuf, cn)
		require.NoError(b, err)
		uf, err := keycount.OpenFile(uname, stagedFormat, ioBuf)
		require.NoError(b, err)
		js.committed, js.stagedIdx = ci, newIndexIter(&indexSource{f: uf, want: un})
		// Every old slice is carried (Mark's carryFilter caches the
		// folder of the last key; so does this).
		var folder []byte
		js.base, js.copyable = true, w.copyable
		js.carry = func(k []byte) bool {
			if folder != nil && bytes.HasPrefix(k, folder) {
				return true
			}
			if !w.carry(k) {
				return false
			}
			folder = append(folder[:0], k[:bytes.LastIndexByte(k, '/')+1]...)
			return true
		}
		index, err := newSinkWriter(ctx, bucket, m.dir+indexName, ioBuf, func(iw io.Writer) entrySink {
			return newCindexEncoder(iw, "data/", m.cfg.recognizer(), true, ioBuf)
		})
		require.NoError(b, err)
		staged, err := newIndexWriter(ctx, bucket, m.dir+stagedName, stagedFormat, ioBuf)
		require.NoError(b, err)
		m.rec = &recorder{index: index, staged: staged, data: "data/", young: new(youngSlices)}
		b.StartTimer()
		before := cpuTime()
		_, err = m.writeCandidates(ctx, js)
		cpu += cpuTime() - before
		b.StopTimer()
		require.NoError(b, err)
		require.NoError(b, js.close())
		require.NoError(b, m.rec.close())
		require.Greater(b, m.sum.IndexBlocksCopied, m.sum.IndexBlocksDecoded)
		require.NoError(b, bucket.Close())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(stagedKeys)), "ns/staged-key")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(stagedKeys)), "cpu-ns/staged-key")
}
