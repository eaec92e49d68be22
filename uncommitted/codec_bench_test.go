package uncommitted_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"iter"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/rs/xid"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// slicedSource is a staging area shaped as the bottom line's
// (tests/bottomline): objects in slices of 10 000, each slice
// data/<xid>/ with objects named by the slice's xid base and a counter,
// one object in 4 staged, staged object k on branch k mod branches.
type slicedSource struct {
	branches, rows int
}

func (s slicedSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for b := range s.branches {
			if id := fmt.Sprintf("b%04d", b); id >= from && !yield(id, nil) {
				return
			}
		}
	}
}

func (s slicedSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		var b int
		if _, err := fmt.Sscanf(branch, "b%04d", &b); err != nil {
			yield(uncommitted.Entry{}, err)
			return
		}
		const perSlice = 10000
		mod := time.Unix(1.7e9, 0)
		var a arena
		key := []byte("p/0000000000")
		var prefix []byte
		var name xid.ID
		var text [20]byte
		lastSlice := -1
		for k := b; k < s.rows; k += s.branches {
			for j, v := len(key)-1, k; j > 1; j, v = j-1, v/10 {
				key[j] = byte('0' + v%10)
			}
			g := k*4 + 1 // one object in 4
			if slice := g / perSlice; slice != lastSlice {
				lastSlice = slice
				var sid xid.ID
				binary.BigEndian.PutUint32(sid[0:4], uint32(4e9)-uint32(slice)*3600)
				prefix = append(append([]byte("data/"), sid.String()...), '/')
				h := fnv.New32a()
				h.Write(prefix)
				sum := h.Sum32()
				binary.BigEndian.PutUint32(name[0:4], uint32(mod.Unix()))
				name[4], name[5], name[6] = byte(sum>>16), byte(sum>>8), byte(sum)
			}
			if string(key) < from {
				continue
			}
			v := uint64(g % perSlice)
			for j := 11; j >= 7; j-- {
				name[j] = byte(v)
				v >>= 8
			}
			name.Encode(text[:])
			e := uncommitted.Entry{Key: a.string(key), PhysicalAddress: a.string(prefix, text[:]), CreationDate: mod}
			if !yield(e, nil) {
				return
			}
		}
	}
}

var benchCodecs = []struct {
	name  string
	codec compress.Codec
}{
	{"gzip-1", &gzip.Codec{Level: gzip.BestSpeed}},
	{"snappy", &snappy.Codec{}},
	{"zstd-1", &zstd.Codec{Level: zstd.SpeedFastest}},
	{"zstd-1-w1m", uncommitted.Zstd()},
}

// writeRun exports src whole into bucket and returns its run ID, rows and
// bytes.
func writeRun(b *testing.B, bucket *blob.Bucket, src uncommitted.Source, opts ...uncommitted.Option) (runID string, rows, size int64) {
	ctx := context.Background()
	p := newPreparer(b, bucket, opts...)
	repo := uncommitted.Repository{ID: "bench", StorageNamespace: "s3://bench/repo"}
	for mark := (*uncommitted.Checkpoint)(nil); ; {
		res, err := p.Prepare(ctx, repo, src, mark)
		if err != nil {
			b.Fatal(err)
		}
		runID, rows = res.RunID, rows+res.Rows
		if res.Filename != "" {
			a, err := bucket.Attributes(ctx, "_lakefs/retention/gc/uncommitted/"+runID+"/uncommitted/"+res.Filename)
			if err != nil {
				b.Fatal(err)
			}
			size += a.Size
		}
		if mark = res.Checkpoint; mark == nil {
			return runID, rows, size
		}
	}
}

// BenchmarkCodec writes and reads back, per codec, an export of 1 M rows
// on 100 branches shaped as the bottom line's (slicedSource): write is
// Prepare into memory, read is Addresses from memory, latency is
// Addresses behind 20 to 50 ms a request. cpu-ns/row is the process's
// CPU time, bytes/row the files' sizes, gets/op the range reads,
// peak-heap-MiB the live heap's peak (with the run held in memory); source
// is the CPU of generating the rows, which write includes.
func BenchmarkCodec(b *testing.B) {
	const rows = 1000000
	src := slicedSource{branches: 100, rows: rows}
	b.Run("source", func(b *testing.B) {
		cpu := guardtest.CPUTime()
		for b.Loop() {
			n := 0
			for br := range src.Branches(context.Background(), "") {
				for range src.Uncommitted(context.Background(), br, "") {
					n++
				}
			}
			if n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/rows, "cpu-ns/row")
	})
	for _, c := range benchCodecs {
		opt := uncommitted.WithCompression(c.codec)
		b.Run(c.name+"/write", func(b *testing.B) {
			var size int64
			heap := startHeapSampler()
			cpu := guardtest.CPUTime()
			for b.Loop() {
				mem := memblob.OpenBucket(nil)
				_, n, s := writeRun(b, mem, src, opt)
				if n != rows {
					b.Fatalf("%d rows", n)
				}
				size = s
				mem.Close()
			}
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/rows, "cpu-ns/row")
			b.ReportMetric(float64(size)/rows, "bytes/row")
			b.ReportMetric(heap.peakMiB(), "peak-heap-MiB")
		})
		mem := memblob.OpenBucket(nil)
		runID, _, size := writeRun(b, mem, src, opt)
		fb, err := faultblob.New(mem, faultblob.WithLatency(faultblob.Read, func(string) time.Duration {
			return 20*time.Millisecond + time.Duration(rand.Int64N(int64(30*time.Millisecond)))
		}))
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range []struct {
			name   string
			bucket *blob.Bucket
		}{{"read", mem}, {"latency", fb.Bucket()}} {
			b.Run(c.name+"/"+r.name, func(b *testing.B) {
				b.SetBytes(size)
				gets := fb.Calls(faultblob.Read)
				heap := startHeapSampler()
				cpu := guardtest.CPUTime()
				for b.Loop() {
					if n := readWhole(b, r.bucket, runID, false); n != rows {
						b.Fatalf("%d rows", n)
					}
				}
				b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/rows, "cpu-ns/row")
				b.ReportMetric(float64(size)/rows, "bytes/row")
				b.ReportMetric(heap.peakMiB(), "peak-heap-MiB")
				if r.name == "latency" {
					b.ReportMetric(float64(fb.Calls(faultblob.Read)-gets)/float64(b.N), "gets/op")
				}
			})
		}
		mem.Close()
	}
}
