package uncommitted_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// benchRun writes a run of 4 files of 50 000 rows each, laid out as
// lakeFS writes them (GZIP, v1 pages, PLAIN values), into
// bucket, and returns the files' bytes.
func benchRun(b *testing.B, bucket *blob.Bucket) int64 {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	var size int64
	for f := range 4 {
		rows := make([]uncommitted.Row, 50000)
		for i := range rows {
			rows[i] = uncommitted.Row{PhysicalAddress: fmt.Sprintf("data/%020x/%020x", r.Uint64()>>44, r.Uint64()), CreationDate: 1.7e9 + r.Int64N(1e7)}
		}
		var buf bytes.Buffer
		if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Gzip), parquet.DataPageVersion(1),
			parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain), parquet.PageBufferSize(256<<10)); err != nil {
			b.Fatal(err)
		}
		size += int64(buf.Len())
		if err := bucket.WriteAll(ctx, fmt.Sprintf("_lakefs/retention/gc/uncommitted/r/uncommitted/f%d", f), buf.Bytes(), nil); err != nil {
			b.Fatal(err)
		}
	}
	return size
}

// readWhole reads run runID whole, its rows with ReadRun or its addresses
// with Addresses, and returns how many.
func readWhole(b *testing.B, bucket *blob.Bucket, runID string, rows bool, opts ...uncommitted.ReadOption) int {
	ctx := context.Background()
	n := 0
	if rows {
		for _, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", runID, opts...) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	for _, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID, opts...) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// BenchmarkReadRun reads a run of 4 files of 50 000 rows each (benchRun)
// from memory: its rows with ReadRun, and its addresses with Addresses.
// Bytes are the files' sizes; cpu-ns is the process's CPU time, which
// other processes on a busy machine change less than wall time.
func BenchmarkReadRun(b *testing.B) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	size := benchRun(b, bucket)
	for _, rows := range []bool{true, false} {
		b.Run(map[bool]string{true: "rows", false: "addresses"}[rows], func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			cpu := guardtest.CPUTime()
			for b.Loop() {
				if n := readWhole(b, bucket, "r", rows, uncommitted.AllowUnverified()); n != 200000 {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/200000, "cpu-ns/row")
		})
	}
}

// BenchmarkReadLatency reads a run Prepare wrote (1 M rows of addresses
// that compress little, data/b<branch>/<16 hex digits>, about 14 bytes a
// row, in files of 20 MiB at most) from a bucket that answers each
// read after 20 to 50 ms, as a store across a network does: rows with
// ReadRun, addresses with Addresses, with read-aheads of 0 (each window
// waited for in turn, as before issue 28) to 16 windows. sec/op is the
// wall time; gets/op the range reads.
func BenchmarkReadLatency(b *testing.B) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	p := newPreparer(b, mem)
	src := bigSource(20, 50000)
	repo := uncommitted.Repository{ID: "bench", StorageNamespace: "s3://bench/repo"}
	var runID string
	var size int64
	for mark := (*uncommitted.Checkpoint)(nil); ; {
		res, err := p.Prepare(ctx, repo, src, mark)
		if err != nil {
			b.Fatal(err)
		}
		runID = res.RunID
		if res.Filename != "" {
			a, err := mem.Attributes(ctx, "_lakefs/retention/gc/uncommitted/"+runID+"/uncommitted/"+res.Filename)
			if err != nil {
				b.Fatal(err)
			}
			size += a.Size
		}
		if mark = res.Checkpoint; mark == nil {
			break
		}
	}
	fb, err := faultblob.New(mem, faultblob.WithLatency(faultblob.Read, func(string) time.Duration {
		return 20*time.Millisecond + time.Duration(rand.Int64N(int64(30*time.Millisecond)))
	}))
	if err != nil {
		b.Fatal(err)
	}
	bucket := fb.Bucket()
	for _, c := range []struct {
		rows  bool
		ahead int
	}{{true, 0}, {true, 8}, {false, 0}, {false, 4}, {false, 8}, {false, 16}} {
		b.Run(fmt.Sprintf("%s/ahead-%d", map[bool]string{true: "rows", false: "addresses"}[c.rows], c.ahead), func(b *testing.B) {
			defer uncommitted.SetReadAhead(c.ahead)()
			b.SetBytes(size)
			gets := fb.Calls(faultblob.Read)
			cpu := guardtest.CPUTime()
			for b.Loop() {
				if n := readWhole(b, bucket, runID, c.rows); n != 1000000 {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(fb.Calls(faultblob.Read)-gets)/float64(b.N), "gets/op")
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ns/row")
		})
	}
}
