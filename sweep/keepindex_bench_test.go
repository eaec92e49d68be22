package sweep

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// BenchmarkKeepIndex compares, after 1 % churn since the previous run, a
// clean run given the flat keep set, a clean run given parts, an optimized
// run given the flat keep set (read and sorted in full), one given the
// changes since the previous run, and one given parts (reading only the
// parts that changed). The namespace is LAKEGC_KEEP_BENCH_SLICES hourly
// slices (default 40) of LAKEGC_KEEP_BENCH_PER_SLICE objects (default 250),
// three quarters kept; the committed keep set also names
// LAKEGC_KEEP_BENCH_KEYS keys (default 400,000) of those slices whose
// objects are not in the store, so that the keep set is large and the
// listing small (memblob sorts every key it holds on each LIST call); the
// canary is off. It is committed in parts of LAKEGC_KEEP_BENCH_PART keys
// (default 1,000); since the previous (swept) runs, 1 % of the parts were
// replaced by changed copies (a tenth of their keys dropped, new keys
// added) and new objects were uploaded into 20 new slices:
//
//	go test -run XXX -bench KeepIndex -benchtime 3x ./sweep/
//
// It reports the LIST requests and the parts read.
func BenchmarkKeepIndex(b *testing.B) {
	nSlices, perSlice := envInt(b, "LAKEGC_KEEP_BENCH_SLICES", 40), envInt(b, "LAKEGC_KEEP_BENCH_PER_SLICE", 250)
	partSize := envInt(b, "LAKEGC_KEEP_BENCH_PART", 1000)
	extraKeys := envInt(b, "LAKEGC_KEEP_BENCH_KEYS", 400_000)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	base := memblob.OpenBucket(nil)
	mods := map[string]time.Time{}
	var lists atomic.Int64
	bucket := newTestBucket(base, &testDriver{
		modTime: func(key string) time.Time { return mods[key] },
		listErr: func(string) error { lists.Add(1); return nil },
	})
	prevAt := t0.Add(-48 * time.Hour)
	put := func(at time.Time, name string) string {
		key := "data/" + name + "/" + randXID(r, at)
		require.NoError(b, base.WriteAll(ctx, key, nil, nil))
		mods[key] = at.Add(time.Minute)
		return key
	}
	var kept []string
	for i := range nSlices {
		at := prevAt.Add(-26*time.Hour - time.Duration(i)*time.Hour)
		name := randDescendingName(r, at)
		for j := range perSlice {
			if k := put(at, name); j%4 != 0 {
				kept = append(kept, k)
			}
		}
		// Committed keys whose objects are not in the store (the canary is
		// off): a keep set far larger than what memblob lists quickly.
		for range extraKeys / nSlices {
			kept = append(kept, "data/"+name+"/"+randXID(r, at))
		}
	}
	// Parts of random keys, as ranges hold addresses of any slice.
	r.Shuffle(len(kept), func(i, j int) { kept[i], kept[j] = kept[j], kept[i] })
	parts := map[string][]string{}
	var ids []string
	newPart := func(keys []string) string {
		id := fmt.Sprintf("range-%06d", len(parts))
		keys = slices.Clone(keys)
		slices.Sort(keys)
		parts[id] = keys
		return id
	}
	for i := 0; i < len(kept); i += partSize {
		ids = append(ids, newPart(kept[i:min(i+partSize, len(kept))]))
	}
	flat := func(ids []string) []string {
		var all []string
		for _, id := range ids {
			all = append(all, parts[id]...)
		}
		slices.Sort(all)
		return slices.Compact(all)
	}
	opts := func(now time.Time, extra ...MarkOption) []MarkOption {
		return append([]MarkOption{WithClock(func() time.Time { return now }), WithTempDir(b.TempDir()), WithCanary(Canary{Off: true})}, extra...)
	}
	var opened atomic.Int64
	host := func(ids []string) *Parts {
		p := partsOf(parts, ids, nil)
		open := p.Open
		p.Open = func(ctx context.Context, id string) iter.Seq2[string, error] {
			opened.Add(1)
			return open(ctx, id)
		}
		return p
	}
	var runs atomic.Int64
	prevKeys := flat(ids)
	for _, run := range []struct {
		id string
		in Inputs
	}{{"prev-parts", Inputs{Parts: host(ids)}}, {"prev-set", Inputs{Committed: seqOf(prevKeys)}}} {
		run.in.Uncommitted, run.in.ExportStart = seqOf(nil), prevAt
		_, err := Mark(ctx, bucket, run.id, run.in, opts(prevAt)...)
		require.NoError(b, err)
		_, err = Sweep(ctx, bucket, run.id, sweepOpts(opts(prevAt))...)
		require.NoError(b, err)
	}
	// 1 % churn: new objects in 20 new slices, half of them committed into
	// changed copies of 1 % of the parts, which drop a tenth of their keys.
	var fresh []string
	total := nSlices * perSlice
	for i := range total / 100 {
		at := prevAt.Add(time.Duration(i%20) * time.Hour)
		if k := put(at, randDescendingName(rand.New(rand.NewPCG(uint64(i%20), 3)), at)); i%2 == 0 {
			fresh = append(fresh, k)
		}
	}
	cur := slices.Clone(ids)
	changed := max(len(ids)/100, 1)
	for i := range changed {
		j := r.IntN(len(cur))
		old := parts[cur[j]]
		var keys []string
		for n, k := range old {
			if n%10 != 0 {
				keys = append(keys, k)
			}
		}
		lo, hi := i*len(fresh)/changed, (i+1)*len(fresh)/changed
		cur[j] = newPart(append(keys, fresh[lo:hi]...))
	}
	curKeys := flat(cur)
	added, removed := diff(curKeys, prevKeys), diff(prevKeys, curKeys)
	for _, v := range []struct {
		name, prev string
		in         func() Inputs
	}{
		{"clean-flat", "", func() Inputs { return Inputs{Committed: seqOf(curKeys)} }},
		{"clean-parts", "", func() Inputs { return Inputs{Parts: host(cur)} }},
		{"optimized-flat", "prev-set", func() Inputs { return Inputs{Committed: seqOf(curKeys)} }},
		{"optimized-changes", "prev-set", func() Inputs {
			return Inputs{Committed: seqOf(curKeys), Changes: &Changes{Since: "prev-set", Added: seqOf(added), Removed: seqOf(removed)}}
		}},
		{"optimized-parts", "prev-parts", func() Inputs { return Inputs{Parts: host(cur)} }},
	} {
		b.Run(v.name, func(b *testing.B) {
			for i := range b.N {
				in := v.in()
				in.Uncommitted, in.ExportStart = seqOf(nil), t0
				lists.Store(0)
				opened.Store(0)
				cpu0 := cpuTime()
				start := time.Now()
				sum, err := Mark(ctx, bucket, fmt.Sprintf("%s-%d", v.name, runs.Add(1)), in, opts(t0, WithPrevious(v.prev))...)
				elapsed := time.Since(start)
				cpu := cpuTime() - cpu0
				require.NoError(b, err)
				b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms/op")
				b.ReportMetric(float64(lists.Load()), "lists/op")
				b.ReportMetric(float64(opened.Load()), "parts-read/op")
				if i == 0 {
					b.Logf("%s: %s run (%s) of %d objects, %d committed keys in %d parts (%d changed): %v (CPU %v), %d LIST requests, %d parts read, %d candidates",
						v.name, sum.RunKind, sum.KeepSource, len(mods), len(curKeys), len(cur), changed, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond), lists.Load(), opened.Load(), sum.NumDeletedObjects)
				}
			}
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
