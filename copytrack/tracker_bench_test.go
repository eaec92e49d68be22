package copytrack

import (
	"context"
	"testing"
	"time"
)

var benchCopy = Copy{Repository: "repo1", Branch: "main", SrcPath: "tables/a/part-0001.parquet",
	DstPath: "tables/b/part-0001.parquet", PhysicalAddress: "data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0"}

func BenchmarkTrack(b *testing.B) {
	tr := mustNew(b, NewMemStore())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Track(ctx, benchCopy); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkExpire drops 1000 expired records per iteration, with 1000 live
// records behind them.
func BenchmarkExpire(b *testing.B) {
	const batch = 1000
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr := mustNew(b, NewMemStore(), WithTTL(time.Hour), WithClock(func() time.Time { return now }))
	track := func(created time.Time) {
		c := benchCopy
		c.CreatedAt = created
		if err := tr.Track(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	for range batch {
		track(now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for range batch {
			track(now.Add(-2 * time.Hour))
		}
		b.StartTimer()
		if n, err := tr.Expire(ctx, "repo1"); err != nil || n != batch {
			b.Fatalf("Expire = %d, %v; want %d", n, err, batch)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkList(b *testing.B) {
	const records = 1000
	ctx := context.Background()
	tr := mustNew(b, NewMemStore())
	for range records {
		if err := tr.Track(ctx, benchCopy); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range tr.List(ctx, "repo1") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}
