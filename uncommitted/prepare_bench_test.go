package uncommitted_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/rs/xid"
	"gocloud.dev/blob/fileblob"
)

// genSource generates a staging area of branches x perBranch entries
// shaped like lakeFS's: keys "k0000042", addresses data/<slice>/<object>
// with a new slice every 50 000 objects. Strings are cut from 64 KiB
// arenas, so the source costs no allocation per row and holds no rows:
// what the benchmark measures is the Preparer.
type genSource struct {
	branches, perBranch int
}

func (g genSource) branchID(i int) string { return fmt.Sprintf("branch%04d", i) }

func (g genSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for i := range g.branches {
			if id := g.branchID(i); id >= from && !yield(id, nil) {
				return
			}
		}
	}
}

// benchID is a deterministic xid: the lakeFS writer benchmark in
// examples/lakefswriter generates the same IDs.
func benchID(t uint32, counter uint32) xid.ID {
	var id xid.ID
	binary.BigEndian.PutUint32(id[0:4], t)
	copy(id[4:9], "lkgc1")
	id[9], id[10], id[11] = byte(counter>>16), byte(counter>>8), byte(counter)
	return id
}

type arena struct{ buf []byte }

func (a *arena) string(parts ...[]byte) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if len(a.buf)+n > cap(a.buf) {
		a.buf = make([]byte, 0, 64<<10)
	}
	start := len(a.buf)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return unsafe.String(&a.buf[start], n)
}

func (g genSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		var b int
		if _, err := fmt.Sscanf(branch, "branch%04d", &b); err != nil {
			yield(uncommitted.Entry{}, err)
			return
		}
		var a arena
		key := [8]byte{'k'}
		var slice, name [20]byte
		for i := range g.perBranch {
			n := b*g.perBranch + i
			for j, v := 7, i; j > 0; j, v = j-1, v/10 {
				key[j] = byte('0' + v%10)
			}
			k := a.string(key[:])
			if k < from {
				continue
			}
			benchID(uint32(4e9-n/50000), 0).Encode(slice[:])
			benchID(uint32(1.7e9+n/1000), uint32(n)).Encode(name[:])
			e := uncommitted.Entry{
				Key:             k,
				PhysicalAddress: a.string([]byte("data/"), slice[:], []byte("/"), name[:]),
				CreationDate:    time.Unix(int64(1.7e9+n/1000), 0),
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// heapSampler records the peak of the live heap while it runs.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	s := &heapSampler{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			s.peak = max(s.peak, sample[0].Value.Uint64())
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) peakMiB() float64 {
	close(s.stop)
	s.done.Wait()
	return float64(s.peak) / (1 << 20)
}

// prepareRun exports src completely into a fresh fileblob bucket in dir and
// returns the rows and bytes written.
func prepareRun(b *testing.B, dir string, src uncommitted.Source, opts ...uncommitted.Option) (rows, bytes int64) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	p := newPreparer(b, bucket, opts...)
	repo := uncommitted.Repository{ID: "bench", StorageNamespace: "s3://bench/repo"}
	var mark *uncommitted.Checkpoint
	for {
		res, err := p.Prepare(context.Background(), repo, src, mark)
		if err != nil {
			b.Fatal(err)
		}
		rows += res.Rows
		if res.Filename != "" {
			fi, err := os.Stat(filepath.Join(dir, "_lakefs/retention/gc/uncommitted", res.RunID, "uncommitted", res.Filename))
			if err != nil {
				b.Fatal(err)
			}
			bytes += fi.Size()
		}
		if mark = res.Checkpoint; mark == nil {
			return rows, bytes
		}
	}
}

func benchmarkPrepare(b *testing.B, src genSource, opts ...uncommitted.Option) {
	b.ReportAllocs()
	var rows, bytes int64
	heap := startHeapSampler()
	start := time.Now()
	i := 0
	for b.Loop() {
		r, n := prepareRun(b, filepath.Join(b.TempDir(), fmt.Sprint(i)), src, opts...)
		if want := int64(src.branches * src.perBranch); r != want {
			b.Fatalf("run exported %d rows, want %d", r, want)
		}
		rows, bytes = rows+r, bytes+n
		i++
	}
	elapsed := time.Since(start)
	b.ReportMetric(heap.peakMiB(), "peak-heap-MiB")
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/float64(rows), "bytes/row")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkPrepare exports 1 000 branches x 1 000 entries (1 M rows) with
// the default budgets (20 MiB files), per codec.
func BenchmarkPrepare(b *testing.B) {
	src := genSource{branches: 1000, perBranch: 1000}
	for _, c := range []struct {
		name  string
		codec compress.Codec
	}{
		{"default", nil},                 // GZIP at DefaultGzipLevel (BestSpeed)
		{"own-zstd", uncommitted.Zstd()}, // fastest level, 1 MiB window
		{"gzip-6", &gzip.Codec{Level: gzip.DefaultCompression}},
		{"snappy", &snappy.Codec{}},
		{"zstd", &zstd.Codec{Level: zstd.SpeedFastest}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var opts []uncommitted.Option
			if c.codec != nil {
				opts = append(opts, uncommitted.WithCompression(c.codec))
			}
			benchmarkPrepare(b, src, opts...)
		})
	}
}

// BenchmarkPrepare5M is the target scale's case: 5 M uncommitted
// objects on 1 K branches, default options. Its sec/op is the wall time.
func BenchmarkPrepare5M(b *testing.B) {
	benchmarkPrepare(b, genSource{branches: 1000, perBranch: 5000})
}
