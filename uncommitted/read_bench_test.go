package uncommitted_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"
)

// BenchmarkReadRun reads a run of 4 files of 50 000 rows each, laid out as
// Prepare and lakeFS write them (GZIP, v1 pages, PLAIN values), from
// memory. Bytes are the files' sizes; cpu-ns is the process's CPU time,
// which other processes on a busy machine change less than wall time.
func BenchmarkReadRun(b *testing.B) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
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
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := guardtest.CPUTime()
	for b.Loop() {
		n := 0
		for _, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 200000 {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
