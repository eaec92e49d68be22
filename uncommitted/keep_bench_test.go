package uncommitted_test

import (
	"context"
	"sync"
	"testing"
	"unsafe"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// stagedRows is the staged set of the 20 M-object bottom line: 5 M
// objects on 1 000 branches.
const stagedRows = 5_000_000

var staged struct {
	once   sync.Once
	bucket *blob.Bucket
	runID  string
	size   int64
}

// stagedRun exports stagedRows rows shaped as the bottom line's
// (slicedSource) with the codec Collect writes (Zstd), once per process,
// into memory.
func stagedRun(b *testing.B) (*blob.Bucket, string, int64) {
	staged.once.Do(func() {
		staged.bucket = memblob.OpenBucket(nil)
		var rows int64
		staged.runID, rows, staged.size = writeRun(b, staged.bucket, slicedSource{branches: 1000, rows: stagedRows}, uncommitted.WithCompression(uncommitted.Zstd()))
		if rows != stagedRows {
			b.Fatalf("exported %d rows", rows)
		}
	})
	if staged.bucket == nil {
		b.Fatal("no staged run")
	}
	return staged.bucket, staged.runID, staged.size
}

// BenchmarkStagedKeep is the keep phase's path for the staged set at the
// 20 M-object bottom line's scale: 5 M addresses (data/<xid>/<xid>) read
// from the export with Addresses (read), and also added to an
// extsort.Sorter with the block the mark gives it under a 256 MiB budget
// (80 MiB, fan-in 64, 64 KiB buffers), finished and read back in order
// (sorted), as sweep's readKeep and the join do. cpu-ns/row is the
// process's CPU time a row, which other processes on a busy machine
// change less than wall time.
func BenchmarkStagedKeep(b *testing.B) {
	bucket, runID, size := stagedRun(b)
	ctx := context.Background()
	b.Run("read", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		cpu := guardtest.CPUTime()
		for b.Loop() {
			n := 0
			for _, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != stagedRows {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/stagedRows, "cpu-ns/row")
	})
	b.Run("sorted", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		cpu := guardtest.CPUTime()
		for b.Loop() {
			dir, err := extsort.NewSpillDir(b.TempDir(), 64<<10)
			if err != nil {
				b.Fatal(err)
			}
			s := extsort.NewSorter(dir, 80<<20, 64)
			for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Add(unsafe.Slice(unsafe.StringData(a), len(a))); err != nil {
					b.Fatal(err)
				}
			}
			it, err := s.Finish()
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				_, ok, err := it.Next()
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				n++
			}
			it.Close()
			s.Release()
			dir.Remove()
			if n != stagedRows {
				b.Fatalf("%d distinct keys, want %d", n, stagedRows)
			}
		}
		b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/stagedRows, "cpu-ns/row")
	})
}
