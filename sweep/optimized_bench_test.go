package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// BenchmarkOptimizedRun compares a clean and an optimized mark of a
// synthetic namespace with 1 % churn since the previous (clean, swept) run:
// LAKEGC_OPT_BENCH_SLICES hourly slices (default 400, 17 days) of
// LAKEGC_OPT_BENCH_PER_SLICE objects (default 100), three quarters kept; since
// the previous run, 1 % of the objects were uploaded into new slices and 1 %
// of the kept ones dropped from the keep set. It reports the LIST requests
// (driver ListPaged calls, pages of 1,000 keys), and the peak heap in use
// (sampled every 10 ms, less the heap in use before, which holds the
// in-memory store) of each run:
//
//	go test -run XXX -bench OptimizedRun -benchtime 1x ./sweep/
//
// The store is memblob, which sorts every key it holds on each LIST call,
// so the times grow with the square of the namespace and say little about
// a real store; the LIST counts do not depend on it.
func BenchmarkOptimizedRun(b *testing.B) {
	nSlices, perSlice := envInt(b, "LAKEGC_OPT_BENCH_SLICES", 400), envInt(b, "LAKEGC_OPT_BENCH_PER_SLICE", 100)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	base := memblob.OpenBucket(nil)
	mods := map[string]time.Time{}
	var lists atomic.Int64
	d := &testDriver{
		modTime: func(key string) time.Time { return mods[key] },
		listErr: func(string) error { lists.Add(1); return nil },
	}
	bucket := newTestBucket(base, d)
	prevAt := t0.Add(-48 * time.Hour)
	put := func(slice time.Time, name string) string {
		key := "data/" + name + "/" + randXID(r, slice)
		require.NoError(b, base.WriteAll(ctx, key, nil, nil))
		mods[key] = slice.Add(time.Minute)
		return key
	}
	var keep []string
	for i := range nSlices {
		at := prevAt.Add(-26*time.Hour - time.Duration(i)*time.Hour)
		name := randDescendingName(r, at)
		for j := range perSlice {
			k := put(at, name)
			if j%4 != 0 {
				keep = append(keep, k)
			}
		}
	}
	total := nSlices * perSlice
	opts := func(now time.Time, extra ...MarkOption) []MarkOption {
		return append([]MarkOption{WithClock(func() time.Time { return now }), WithTempDir(b.TempDir())}, extra...)
	}
	mark := func(runID string, now time.Time, keep []string, extra ...MarkOption) *Summary {
		slices.Sort(keep)
		sum, err := Mark(ctx, bucket, runID, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(keep), ExportStart: now}, opts(now, extra...)...)
		require.NoError(b, err)
		return sum
	}
	prev := mark("prev", prevAt, keep)
	_, err := Sweep(ctx, bucket, "prev", sweepOpts(opts(prevAt))...)
	require.NoError(b, err)
	// 1 % churn: new objects in the slices since, half of them kept, and 1 %
	// of the kept ones dropped.
	for i := range total / 100 {
		at := prevAt.Add(time.Duration(i%20) * time.Hour)
		k := put(at, randDescendingName(rand.New(rand.NewPCG(uint64(i%20), 3)), at))
		if i%2 == 0 {
			keep = append(keep, k)
		}
	}
	r.Shuffle(len(keep), func(i, j int) { keep[i], keep[j] = keep[j], keep[i] })
	keep = keep[total/100:]
	for _, kind := range []string{RunClean, RunOptimized} {
		b.Run(kind, func(b *testing.B) {
			for i := range b.N {
				var extra []MarkOption
				if kind == RunOptimized {
					extra = append(extra, WithPrevious("prev"))
				}
				lists.Store(0)
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				stop := samplePeak()
				start := time.Now()
				sum := mark(fmt.Sprintf("%s-%d", kind, i), t0, slices.Clone(keep), extra...)
				elapsed := time.Since(start)
				peak := stop() - min(stop(), ms.HeapInuse) // the run's own, above the store's
				require.Equal(b, kind, sum.RunKind, sum.CleanReason)
				b.ReportMetric(float64(lists.Load()), "lists/op")
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(sum.SlicesSkipped), "skipped-slices")
				b.Logf("%s run of %d objects (%d slices), previous %s (%d candidates): %d LIST requests, %v, peak heap %.1f MiB, %d candidates, %d slices listed, %d skipped",
					kind, len(mods), nSlices+20, prev.RunID, prev.NumDeletedObjects, lists.Load(), elapsed.Round(time.Millisecond), float64(peak)/(1<<20), sum.NumDeletedObjects, sum.SlicesListed, sum.SlicesSkipped)
			}
		})
	}
}

func envInt(b *testing.B, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		return n
	}
	return def
}

// samplePeak samples the heap in use until the returned function is called,
// which returns the peak.
func samplePeak() func() uint64 {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() uint64 {
		once.Do(func() {
			close(done)
			wg.Wait()
			sample()
		})
		return peak
	}
}
