package s3sim

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"fmt"
	"io"
	"testing"
	"time"
)

// benchFile is a data file of n objects of one slice of lakeFS-like keys.
func benchFile(b *testing.B, n int, format InventoryFormat) *invFile {
	b.Helper()
	sl, err := newSlice(Slice{Prefix: "repo/data/gb7vt0ka0jj0q9fq7jqg/", Count: n, ModTime: time.Unix(1.7e9, 0), Size: 1 << 10}, 0)
	if err != nil {
		b.Fatal(err)
	}
	return &invFile{rep: &report{bucket: "source-bucket", format: format}, segs: []segment{{sl: sl, a: 0, b: n, etag: "0f343b0931126a20f133d67c2b018a3b"}}}
}

// BenchmarkInventoryGenerate measures a data file's generation with its
// MD5 (what AddInventory does once a file and a read does again), per row:
// CSV at gzip's BestSpeed (what the store writes), CSV in stored blocks
// (what it does not), and Parquet.
func BenchmarkInventoryGenerate(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name  string
		level int
	}{{"csv-bestspeed", gzip.BestSpeed}, {"csv-stored", gzip.NoCompression}} {
		b.Run(c.name, func(b *testing.B) {
			f := benchFile(b, n, InventoryCSV)
			for b.Loop() {
				w := &countingHash{h: md5.New()}
				zw, _ := gzip.NewWriterLevel(w, c.level)
				if _, err := f.csvRows(func(p []byte) error { _, err := zw.Write(p); return err }); err != nil {
					b.Fatal(err)
				}
				zw.Close()
				b.ReportMetric(float64(w.n)/n, "bytes/row")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
		})
	}
	b.Run("parquet", func(b *testing.B) {
		f := benchFile(b, n, InventoryParquet)
		for b.Loop() {
			w := &countingHash{h: md5.New()}
			if _, err := f.generate(w); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(w.n)/n, "bytes/row")
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
	})
}

// BenchmarkInventoryInflate measures what a reader pays to inflate a CSV
// file, per row: stored blocks against BestSpeed's.
func BenchmarkInventoryInflate(b *testing.B) {
	const n = 100_000
	f := benchFile(b, n, InventoryCSV)
	var stored, fast bytes.Buffer
	if _, err := f.generate(&fast); err != nil {
		b.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(&stored, gzip.NoCompression)
	f.csvRows(func(p []byte) error { _, err := zw.Write(p); return err })
	zw.Close()
	for _, c := range []struct {
		name string
		data []byte
	}{{"stored", stored.Bytes()}, {"bestspeed", fast.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				zr, err := gzip.NewReader(bytes.NewReader(c.data))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, zr); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
		})
	}
}

// BenchmarkAddInventory publishes a report of 2 M objects in 200 slices
// (files of 1 M positions) on all processors: the once-a-report cost of
// learning the files' sizes and MD5s.
func BenchmarkAddInventory(b *testing.B) {
	var desc []Slice
	old := time.Unix(1.7e9, 0)
	for i := range 200 {
		desc = append(desc, Slice{Prefix: fmt.Sprintf("repo/data/s%03d/", i), Count: 10_000, ModTime: old, Size: 1 << 10})
	}
	for _, format := range []InventoryFormat{InventoryCSV, InventoryParquet} {
		b.Run([]string{"csv", "parquet"}[format], func(b *testing.B) {
			store, err := New(desc, WithLatency(NoLatency))
			if err != nil {
				b.Fatal(err)
			}
			var inv *Inventory
			for b.Loop() {
				if inv, err = store.AddInventory(InventoryConfig{SourceBucket: "b", ConfigID: "c", Format: format}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(inv.Rows), "ns/row")
			var size int64
			for _, f := range inv.Files {
				size += f.Size
			}
			b.ReportMetric(float64(size)/float64(inv.Rows), "bytes/row")
		})
	}
}
