package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"
)

// BenchmarkCandidates reads a deleted/ folder of 200 000 addresses from
// memory, as Mark writes it (one part, Snappy, v1 pages, PLAIN values) and
// as lakeFS's Spark client does (two parts, Snappy, dictionary-encoded
// nullable addresses). Bytes are the parts' sizes; cpu-ns is the process's
// CPU time, which other processes on a busy machine change less than wall
// time.
func BenchmarkCandidates(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	addrs := make([]string, 200000)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("data/%020x/%020x", r.Uint64()>>44, r.Uint64())
	}
	for _, layout := range []string{"mark", "spark"} {
		b.Run(layout, func(b *testing.B) {
			ctx := context.Background()
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			dir := reportDir(DefaultStoragePrefix, "r") + "deleted/"
			var size int64
			if layout == "mark" {
				w, err := newPartWriter[addressRow](ctx, bucket, dir+partName)
				if err != nil {
					b.Fatal(err)
				}
				for _, a := range addrs {
					if err := w.Write(addressRow{Address: a}); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				attrs, err := bucket.Attributes(ctx, dir+partName)
				if err != nil {
					b.Fatal(err)
				}
				size = attrs.Size
			} else {
				for part := range 2 {
					rows := make([]dictRow, len(addrs)/2)
					for i := range rows {
						rows[i].Address = &addrs[part*len(rows)+i]
					}
					var buf bytes.Buffer
					if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy), parquet.DataPageVersion(1)); err != nil {
						b.Fatal(err)
					}
					size += int64(buf.Len())
					if err := bucket.WriteAll(ctx, fmt.Sprintf("%spart-%05d-c000.snappy.parquet", dir, part), buf.Bytes(), nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(size)
			b.ReportAllocs()
			cpu := guardtest.CPUTime()
			for b.Loop() {
				n := 0
				for _, err := range Candidates(ctx, bucket, DefaultStoragePrefix, "r") {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != len(addrs) {
					b.Fatalf("%d addresses", n)
				}
			}
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
