package metarange

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gocloud.dev/blob/fileblob"
)

// benchRepo is a repository of 1,000,000 objects on local disk, written as
// lakeFS writes it, under one of two histories.
type benchRepo struct {
	dir        string
	metaRanges []string
	entries    int64
}

var (
	benchMu    sync.Mutex
	benchRepos = map[string]*benchRepo{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range benchRepos {
		os.RemoveAll(r.dir)
	}
	os.Exit(code)
}

// writeBenchRepo writes, once per process, ranges of entries with
// lakeFS-like paths and addresses, and metaranges over them as metaRanges
// picks them.
func writeBenchRepo(t testing.TB, name string, numRanges, perRange int, metaRanges func(ranges []fixtureRange) [][]fixtureRange) *benchRepo {
	benchMu.Lock()
	defer benchMu.Unlock()
	if r := benchRepos[name]; r != nil {
		return r
	}
	dir, err := os.MkdirTemp("", "metarange-bench-")
	if err != nil {
		t.Fatal(err)
	}
	repo := &benchRepo{dir: dir}
	benchRepos[name] = repo
	if err := os.MkdirAll(filepath.Join(dir, "_lakefs"), 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) string {
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(dir, "_lakefs", id), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var ranges []fixtureRange
	for r := range numRanges {
		entries := make([]fixtureEntry, perRange)
		for i := range entries {
			n := r*perRange + i
			entries[i] = fixtureEntry{
				path:    fmt.Sprintf("tables/events/batch=%05d/part-%05d-%08x.parquet", r, i/200, i),
				address: fmt.Sprintf("data/gc5ftg2d4d2gdp2b%04x/cv9hsj2d4d2gdp%08x", r, n),
				typ:     relative,
			}
		}
		id := put(writeTable(t, typeRanges, rangeRecords(entries), lakeFSOptions))
		ranges = append(ranges, fixtureRange{id: id, maxKey: entries[len(entries)-1].path})
		repo.entries += int64(perRange)
	}
	for _, picked := range metaRanges(ranges) {
		repo.metaRanges = append(repo.metaRanges, put(writeTable(t, typeMetaRanges, metaRangeRecords(picked), lakeFSOptions)))
	}
	return repo
}

// oneCommit is 20 ranges of 50,000 entries (lakeFS cuts a range at about
// that many) in one metarange: a measure of reading ranges.
func oneCommit(t testing.TB) *benchRepo {
	return writeBenchRepo(t, "one commit", 20, 50_000, func(ranges []fixtureRange) [][]fixtureRange {
		return [][]fixtureRange{ranges}
	})
}

// appendOnly is 1,000 commits, each adding a range of 1,000 objects: commit
// i's metarange lists ranges 0 to i, so 500,500 range references resolve to
// 1,000 distinct ranges.
func appendOnly(t testing.TB) *benchRepo {
	return writeBenchRepo(t, "append only", 1000, 1000, func(ranges []fixtureRange) [][]fixtureRange {
		var commits [][]fixtureRange
		for i := range ranges {
			commits = append(commits, ranges[:i+1])
		}
		return commits
	})
}

func benchAddresses(b *testing.B, repo *benchRepo, opts ...Option) {
	bucket, err := fileblob.OpenBucket(repo.dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	cpu0 := cpuTime()
	for b.Loop() {
		n := int64(0)
		for _, err := range Addresses(context.Background(), bucket, testNamespace, repo.metaRanges, opts...) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != repo.entries {
			b.Fatalf("%d addresses, want %d", n, repo.entries)
		}
	}
	entries := float64(repo.entries) * float64(b.N)
	b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		// CPU time of the whole process, GC included: on a shared
		// machine, a steadier measure than the wall clock.
		b.ReportMetric(float64(cpu)/1e9/float64(b.N), "cpu-s/op")
		b.ReportMetric(entries/(float64(cpu)/1e9), "entries/cpu-s")
	}
}

// BenchmarkRanges reads 1,000,000 entries in 20 ranges of one metarange
// from local files. Run with -cpu 1 for the figure on one core.
func BenchmarkRanges(b *testing.B) {
	benchAddresses(b, oneCommit(b))
}

// BenchmarkAppendOnlyHistory reads the committed set of 1,000 commits
// sharing 1,000 ranges of 1,000 entries, from local files.
func BenchmarkAppendOnlyHistory(b *testing.B) {
	benchAddresses(b, appendOnly(b))
}
