package s3sim

import (
	"bytes"
	stdgzip "compress/gzip"
	"crypto/md5"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far: on a machine
// others share, the benchmarks report it a row beside the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perRow reports the wall and CPU time a row of a benchmark that made
// rows rows each iteration, since cpu0.
func perRow(b *testing.B, cpu0 time.Duration, rows int64) {
	n := float64(b.N) * float64(rows)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/row")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/n, "cpu-ns/row")
}

// benchFile is a data file of n objects of one slice of lakeFS-like keys
// (the store's default names).
func benchFile(b *testing.B, n int, format InventoryFormat) *invFile {
	b.Helper()
	sl, err := newSlice(Slice{Prefix: "repo/data/gb7vt0ka0jj0q9fq7jqg/", Count: n, ModTime: time.Unix(1.7e9, 0), Size: 1 << 10}, 0)
	if err != nil {
		b.Fatal(err)
	}
	return &invFile{rep: &report{bucket: "source-bucket", format: format}, segs: []segment{{sl: sl, a: 0, b: n, etag: "0f343b0931126a20f133d67c2b018a3b"}}}
}

// BenchmarkInventoryGenerate measures a data file's generation with its
// MD5 (what AddInventory does once a file and a first read does again),
// per row: CSV as the store writes it (klauspost's gzip at BestSpeed), CSV
// through the standard library's gzip at BestSpeed and in stored blocks
// (what it does not), and Parquet.
func BenchmarkInventoryGenerate(b *testing.B) {
	const n = 100_000
	gen := func(b *testing.B, f *invFile, level int) {
		cpu0 := cpuTime()
		for b.Loop() {
			w := &countingHash{h: md5.New()}
			if level < -1 {
				if _, err := f.generate(w); err != nil {
					b.Fatal(err)
				}
			} else {
				zw, _ := stdgzip.NewWriterLevel(w, level)
				if _, err := f.csvRows(func(p []byte) error { _, err := zw.Write(p); return err }); err != nil {
					b.Fatal(err)
				}
				zw.Close()
			}
			b.ReportMetric(float64(w.n)/n, "bytes/row")
		}
		perRow(b, cpu0, n)
	}
	b.Run("csv", func(b *testing.B) { gen(b, benchFile(b, n, InventoryCSV), -2) })
	b.Run("csv-std-bestspeed", func(b *testing.B) { gen(b, benchFile(b, n, InventoryCSV), stdgzip.BestSpeed) })
	b.Run("csv-std-stored", func(b *testing.B) { gen(b, benchFile(b, n, InventoryCSV), stdgzip.NoCompression) })
	b.Run("parquet", func(b *testing.B) { gen(b, benchFile(b, n, InventoryParquet), -2) })
}

// BenchmarkInventoryInflate measures what a reader pays to inflate a CSV
// file with the standard library, per row: the store's file against the
// same rows in stored blocks.
func BenchmarkInventoryInflate(b *testing.B) {
	const n = 100_000
	f := benchFile(b, n, InventoryCSV)
	var stored, fast bytes.Buffer
	if _, err := f.generate(&fast); err != nil {
		b.Fatal(err)
	}
	zw, _ := stdgzip.NewWriterLevel(&stored, stdgzip.NoCompression)
	f.csvRows(func(p []byte) error { _, err := zw.Write(p); return err })
	zw.Close()
	for _, c := range []struct {
		name string
		data []byte
	}{{"store", fast.Bytes()}, {"stored", stored.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				zr, err := stdgzip.NewReader(bytes.NewReader(c.data))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, zr); err != nil {
					b.Fatal(err)
				}
			}
			perRow(b, cpu0, n)
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
			cpu0 := cpuTime()
			for b.Loop() {
				if inv, err = store.AddInventory(InventoryConfig{SourceBucket: "b", ConfigID: "c", Format: format}); err != nil {
					b.Fatal(err)
				}
			}
			perRow(b, cpu0, inv.Rows)
			var size int64
			for _, f := range inv.Files {
				size += f.Size
			}
			b.ReportMetric(float64(size)/float64(inv.Rows), "bytes/row")
		})
	}
}
