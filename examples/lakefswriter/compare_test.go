package lakefswriter_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

const namespace = "s3://bench/repo"

func runFolder(runID string) string {
	return "_lakefs/retention/gc/uncommitted/" + runID + "/uncommitted"
}

// prepareAll exports src with a Preparer into bucket and returns the run.
func prepareAll(tb testing.TB, bucket *blob.Bucket, src uncommitted.Source, opts ...uncommitted.Option) (runID string, rows int64) {
	p := must(uncommitted.NewPreparer(bucket, opts...))
	repo := uncommitted.Repository{ID: "bench", StorageNamespace: namespace}
	var mark *uncommitted.Checkpoint
	for {
		res, err := p.Prepare(context.Background(), repo, src, mark)
		if err != nil {
			tb.Fatal(err)
		}
		runID, rows = res.RunID, rows+res.Rows
		if mark = res.Checkpoint; mark == nil {
			return runID, rows
		}
	}
}

// readRun reads a run; opts is AllowUnverified for a run lakeFS's writer
// made, which has no manifest.
func readRun(tb testing.TB, bucket *blob.Bucket, runID string, opts ...uncommitted.ReadOption) []uncommitted.Row {
	var rows []uncommitted.Row
	for r, err := range uncommitted.ReadRun(context.Background(), bucket, "_lakefs", runID, opts...) {
		if err != nil {
			tb.Fatal(err)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b uncommitted.Row) int {
		if a.PhysicalAddress < b.PhysicalAddress {
			return -1
		}
		if a.PhysicalAddress > b.PhysicalAddress {
			return 1
		}
		return 0
	})
	return rows
}

// TestSameRows: both writers export the same rows, and ReadRun reads the
// files lakeFS's writer makes (PLAIN_DICTIONARY strings, GZIP).
func TestSameRows(t *testing.T) {
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	src := genSource{branches: 8, perBranch: 1000}
	runID, n := prepareAll(t, bucket, src, uncommitted.WithMaxFileSize(16<<10))
	ours := readRun(t, bucket, runID)

	lakeFSRows, _, err := writeLakeFSStyle(dir, runFolder("lakefs"), namespace, src)
	if err != nil {
		t.Fatal(err)
	}
	theirs := readRun(t, bucket, "lakefs", uncommitted.AllowUnverified())
	if n != 8000 || lakeFSRows != n || !slices.Equal(ours, theirs) {
		t.Fatalf("ours: %d rows (%d read), lakeFS-style: %d rows (%d read), equal: %v",
			n, len(ours), lakeFSRows, len(theirs), slices.Equal(ours, theirs))
	}
}

// BenchmarkWriters exports 1 000 branches x 1 000 entries both ways, in the
// same run: /writer=lakefs is xitongsys/parquet-go as lakeFS uses it,
// /writer=lakegc is uncommitted.Preparer with its defaults.
func BenchmarkWriters(b *testing.B) {
	src := genSource{branches: 1000, perBranch: 1000}
	b.Run("writer=lakefs", func(b *testing.B) {
		measure(b, func(dir string) (int64, int64) {
			rows, bytes, err := writeLakeFSStyle(dir, runFolder("lakefs"), namespace, src)
			if err != nil {
				b.Fatal(err)
			}
			return rows, bytes
		})
	})
	b.Run("writer=lakegc", func(b *testing.B) {
		measure(b, func(dir string) (int64, int64) {
			bucket, err := fileblob.OpenBucket(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bucket.Close()
			runID, rows := prepareAll(b, bucket, src)
			var bytes int64
			entries, _ := os.ReadDir(filepath.Join(dir, runFolder(runID)))
			for _, e := range entries {
				if fi, err := e.Info(); err == nil && e.Name() != uncommitted.ManifestName {
					bytes += fi.Size()
				}
			}
			return rows, bytes
		})
	})
}

func measure(b *testing.B, export func(dir string) (rows, bytes int64)) {
	b.ReportAllocs()
	var rows, bytes int64
	start := time.Now()
	for b.Loop() {
		dir := b.TempDir()
		r, n := export(dir)
		rows, bytes = rows+r, bytes+n
		os.RemoveAll(dir)
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/float64(rows), "bytes/row")
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
