package copytrackpg

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/copytrack/sqlstore"
	"github.com/lakegc/lakegc/copytrack/storetest"
)

var tables atomic.Int64

// newStore returns a sqlstore over a new table, dropped when tb ends.
func newStore(tb testing.TB, opts ...sqlstore.Option) *sqlstore.Store {
	tb.Helper()
	db := requireDB(tb)
	ctx := context.Background()
	table := fmt.Sprintf("copytrack_test_%d_%d", os.Getpid(), tables.Add(1))
	s, err := sqlstore.New(ctx, db, table, append(opts, sqlstore.WithCreateTable())...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if _, err := db.ExecContext(ctx, "DROP TABLE "+table); err != nil {
			tb.Errorf("dropping %s: %v", table, err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) copytrack.Store { return newStore(t) })
}

// TestConformanceSmallPages makes every Scan of the suite span many pages.
func TestConformanceSmallPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) copytrack.Store { return newStore(t, sqlstore.WithPageSize(7)) })
}

func TestTrackerOnPostgres(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr := must(copytrack.New(newStore(t, sqlstore.WithPageSize(3)), copytrack.WithTTL(time.Hour), copytrack.WithClock(func() time.Time { return now })))
	for i := range 10 {
		c := copytrack.Copy{Repository: "repo\x00" + fmt.Sprint(i%2), Branch: fmt.Sprint("b", i%3), PhysicalAddress: fmt.Sprint("addr", i),
			CreatedAt: now.Add(time.Duration(i-5) * 20 * time.Minute)} // i < 2 are more than an hour old
		if err := tr.Track(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tr.Expire(ctx, "repo\x000"); err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want 1 (addr0)", n, err)
	}
	if n, err := tr.ForgetBranch(ctx, "repo\x001", "b1", now.Add(time.Hour)); err != nil || n != 2 { // after every copy
		t.Errorf("ForgetBranch = %d, %v; want 2 (addr1, addr7)", n, err)
	}
	for repo, want := range map[string][]string{
		"repo\x000": {"addr2", "addr4", "addr6", "addr8"},
		"repo\x001": {"addr3", "addr5", "addr9"},
		"repo":      nil,
	} {
		var got []string
		for a, err := range tr.Addresses(ctx, repo) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Addresses(%q) = %v, want %v", repo, got, want)
		}
	}
}

func BenchmarkTrack(b *testing.B) {
	tr := must(copytrack.New(newStore(b)))
	ctx := context.Background()
	c := copytrack.Copy{Repository: "repo1", Branch: "main", SrcPath: "tables/a/part-0001.parquet",
		DstPath: "tables/b/part-0001.parquet", PhysicalAddress: "data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0"}
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Track(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkExpire drops 1000 expired records per iteration, with 1000 live
// records behind them.
func BenchmarkExpire(b *testing.B) {
	benchmarkExpire(b, newStore(b), 1000)
}

func benchmarkExpire(b *testing.B, store copytrack.Store, batch int) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tr := must(copytrack.New(store, copytrack.WithTTL(time.Hour), copytrack.WithClock(func() time.Time { return now })))
	track := func(created time.Time) {
		if err := tr.Track(ctx, copytrack.Copy{Repository: "repo1", Branch: "main", PhysicalAddress: "data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0", CreatedAt: created}); err != nil {
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
		n, err := tr.Expire(ctx, "repo1")
		if err != nil || n != batch {
			b.Fatalf("Expire = %d, %v; want %d", n, err, batch)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
}

// TestHugePageSize scans with a page size far beyond any table: the page
// size bounds the query, not what Scan allocates up front.
func TestHugePageSize(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, sqlstore.WithPageSize(math.MaxInt))
	for _, k := range []string{"a", "b"} {
		if err := s.Set(ctx, []byte(k), []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for kv, err := range s.Scan(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(kv.Key))
	}
	if fmt.Sprint(got) != "[a b]" {
		t.Errorf("Scan = %v, want [a b]", got)
	}
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
