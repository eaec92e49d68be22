package metarange

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/fileblob"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
)

// cacheRepo is 40 ranges of 5,000 entries in one metarange, on local disk.
func cacheRepo(t testing.TB) *benchRepo {
	return writeBenchRepo(t, "range cache", 40, 5_000, func(ranges []fixtureRange) [][]fixtureRange {
		return [][]fixtureRange{ranges}
	})
}

// BenchmarkRangeCache reads 200,000 entries of 40 ranges: from their
// tables without the cache ("tables"), from their tables writing their
// caches ("miss"), and from their caches ("hit"), reporting the CPU time
// per key:
//
//	go test -run XXX -bench RangeCache -benchtime 5x ./lakefs/metarange/
func BenchmarkRangeCache(b *testing.B) {
	repo := cacheRepo(b)
	bucket, err := fileblob.OpenBucket(repo.dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	dropCaches := func() {
		if err := os.RemoveAll(filepath.Join(repo.dir, filepath.FromSlash(lakefslayout.RangeCache("_lakefs")))); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, before func(), opts ...Option) {
		var cpu, keys int64
		var last Stats
		opts = append(opts, WithStats(func(s Stats) { last = s }))
		for b.Loop() {
			b.StopTimer()
			before()
			b.StartTimer()
			cpu0 := cpuTime()
			n := int64(0)
			for _, err := range Addresses(ctx, bucket, testNamespace, repo.metaRanges, opts...) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			cpu += cpuTime() - cpu0
			if n != repo.entries {
				b.Fatalf("%d keys, want %d", n, repo.entries)
			}
			keys += n
		}
		if cpu > 0 {
			b.ReportMetric(float64(cpu)/float64(keys), "cpu-ns/key")
		}
		b.ReportMetric(float64(last.Bytes), "table-bytes/op")
		b.ReportMetric(float64(last.Cache.Bytes), "cache-bytes/op")
		b.ReportMetric(float64(last.Cache.Hits), "hits/op")
	}
	b.Run("tables", func(b *testing.B) { run(b, func() {}) })
	b.Run("miss", func(b *testing.B) { run(b, dropCaches, WithRangeCache()) })
	b.Run("hit", func(b *testing.B) { run(b, func() {}, WithRangeCache()) })
	dropCaches()
}
