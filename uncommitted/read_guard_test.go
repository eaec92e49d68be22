package uncommitted_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// hostileAllocBound is what refusing a hostile file may cost: the page
// checks' buffers (a header window, the largest page read, a decoder).
const hostileAllocBound = 32 << 20

// limitsPeakBound is what reading a file may cost at most, whatever it
// holds: the peak heap (garbage included) reading the files that cost the
// most within parquetguard's limits.
const limitsPeakBound = 320 << 20

// firstError reads a run to its end and returns its first error.
func firstError(read func(yield func(uncommitted.Row, error) bool)) error {
	var first error
	for _, err := range read {
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// TestReadRunHostileFiles reads files that claim, or uncompress to, far more
// than they hold — a page header claiming 1 GiB, compression bombs with
// honest and lying headers, levels, delta and dictionary runs, footers and
// schemas that make parquet-go allocate before it checks them, an LZ4 block
// that makes it grow a buffer forever: each is refused with ErrInvalidFile,
// having allocated at most hostileAllocBound.
func TestReadRunHostileFiles(t *testing.T) {
	ctx := context.Background()
	for _, c := range guardtest.Hostile("physical_address", "creation_date") {
		t.Run(c.Name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", c.Data, nil); err != nil {
				t.Fatal(err)
			}
			use, err := guardtest.Measure(func() error {
				return firstError(uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()))
			})
			t.Logf("%d-byte file: %d KiB allocated: %v", len(c.Data), use.Allocated>>10, err)
			if !errors.Is(err, uncommitted.ErrInvalidFile) {
				t.Errorf("error %v, want ErrInvalidFile", err)
			}
			if use.Allocated > hostileAllocBound {
				t.Errorf("allocated %d MiB reading a %d-byte file, more than %d MiB", use.Allocated>>20, len(c.Data), hostileAllocBound>>20)
			}
		})
	}
}

// TestReadRunMemoryAtLimits reads the files that cost the most within
// parquetguard's limits (pages of 16 MiB from a few KiB, of 2^20 values,
// but 2^16 under the race detector, which takes minutes per million rows):
// each reads whole with a peak heap under limitsPeakBound.
func TestReadRunMemoryAtLimits(t *testing.T) {
	values := 1 << 20
	if guardtest.Race {
		values = 1 << 16
	}
	for _, c := range guardtest.AtLimits("physical_address", "creation_date", values) {
		t.Run(c.Name, func(t *testing.T) {
			var rows int
			use, err := guardtest.Measure(func() error {
				got, err := readFile(t, c.Data)
				rows = len(got)
				return err
			})
			t.Logf("%d-byte file, %d rows: %d MiB allocated, peak heap %d MiB", len(c.Data), rows, use.Allocated>>20, use.PeakHeap>>20)
			if err != nil || rows == 0 {
				t.Fatalf("%d rows: %v", rows, err)
			}
			if use.PeakHeap > limitsPeakBound {
				t.Errorf("peak heap of %d MiB, more than %d MiB", use.PeakHeap>>20, limitsPeakBound>>20)
			}
		})
	}
}

// dictRow is Row with a dictionary-encoded address, as Spark and lakeFS's
// writer store repeated strings.
type dictRow struct {
	PhysicalAddress string `parquet:"physical_address,dict"`
	CreationDate    int64  `parquet:"creation_date"`
}

// codecs are parquet-go's codecs.
var codecs = []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Lz4Raw, &parquet.Brotli}

// layouts write rows as writers do: v1 pages of PLAIN values (ours,
// lakeFS's), parquet-go's defaults (v2 pages, delta-encoded strings), and
// dictionaries; in small pages and row groups.
var layouts = map[string]func(io.Writer, []uncommitted.Row, compress.Codec) error{
	"v1 plain": func(w io.Writer, rows []uncommitted.Row, c compress.Codec) error {
		return parquet.Write(w, rows, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000),
			parquet.DataPageVersion(1), parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain))
	},
	"defaults": func(w io.Writer, rows []uncommitted.Row, c compress.Codec) error {
		return parquet.Write(w, rows, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000))
	},
	"dictionary": func(w io.Writer, rows []uncommitted.Row, c compress.Codec) error {
		dict := make([]dictRow, len(rows))
		for i, r := range rows {
			dict[i] = dictRow(r)
		}
		return parquet.Write(w, dict, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000))
	},
}

// readFile writes data as a run's only file and reads the run back.
func readFile(t *testing.T, data []byte) ([]uncommitted.Row, error) {
	t.Helper()
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	var rows []uncommitted.Row
	for row, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()) {
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// TestReadRunCodecs reads files written with every codec parquet-go
// writes, in every layout, of addresses that compress well and of random
// ones: each reads as the rows written. The exception is LZ4_RAW pages that
// compress less than 3:1, such as random addresses or dictionary indexes:
// parquet-go v0.32 reads them wrong without an error (it uncompresses them
// into a buffer it then ignores, parquet-go/parquet-go#608), so they fail.
// No file reads as other rows.
func TestReadRunCodecs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var compressible, random []uncommitted.Row
	for i := range 3000 {
		compressible = append(compressible, uncommitted.Row{PhysicalAddress: fmt.Sprintf("data/g%03d/object-%08d", i%17, i), CreationDate: int64(1e9 + i%5)})
		random = append(random, uncommitted.Row{PhysicalAddress: fmt.Sprintf("data/%016x%016x", r.Uint64(), r.Uint64()), CreationDate: r.Int64()})
	}
	for _, codec := range codecs {
		for name, write := range layouts {
			for data, want := range map[string][]uncommitted.Row{"compressible": compressible, "random": random} {
				t.Run(codec.String()+" "+name+" "+data, func(t *testing.T) {
					var buf bytes.Buffer
					if err := write(&buf, want, codec); err != nil {
						t.Fatal(err)
					}
					got, err := readFile(t, buf.Bytes())
					misread := codec == &parquet.Lz4Raw && (data == "random" || name == "dictionary")
					switch {
					case err == nil && !slices.Equal(got, want):
						t.Fatalf("read %d other rows (first %q), and no error", len(got), got[0].PhysicalAddress)
					case err != nil && !(misread && errors.Is(err, parquetguard.ErrUnsupportedCodec) && errors.Is(err, uncommitted.ErrInvalidFile)):
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// TestReadRunRefusesHadoopLZ4 reads a file compressed with LZ4 in Hadoop's
// framing, which parquet-go does not read: the error names the codec.
func TestReadRunRefusesHadoopLZ4(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	page := guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("data/a")))
	data := guardtest.File(1, guardtest.Column{Name: "physical_address", Type: format.ByteArray, Codec: format.Lz4, Pages: []guardtest.Page{page}})
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	err := firstError(uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()))
	if !errors.Is(err, uncommitted.ErrInvalidFile) || !strings.Contains(err.Error(), "codec not supported: LZ4") {
		t.Fatalf("error %v, want ErrInvalidFile naming codec LZ4", err)
	}
}

// fuzzAllocBound is what reading a fuzzed file may allocate: far less than
// the hostile files made parquet-go allocate, more than the small files of
// a fuzz target cost within parquetguard's limits.
const fuzzAllocBound = 512 << 20

// fuzzRead is the property of the fuzz targets: ReadRun returns rows or an
// error wrapping ErrInvalidFile, never panics, and allocates at most
// fuzzAllocBound.
func fuzzRead(t *testing.T, data []byte) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	alloc, err := guardtest.Allocated(func() error {
		for _, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, uncommitted.ErrInvalidFile) {
		t.Fatalf("error %v does not wrap ErrInvalidFile", err)
	}
	if alloc > fuzzAllocBound {
		t.Fatalf("reading a %d-byte file allocated %d MiB", len(data), alloc>>20)
	}
}

// fuzzSeeds are small files of rows in every codec and layout, and the
// small hostile files.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	rows := []uncommitted.Row{{PhysicalAddress: "data/a", CreationDate: 7}, {PhysicalAddress: "data/b", CreationDate: 8}}
	for _, codec := range codecs {
		for _, write := range layouts {
			var buf bytes.Buffer
			if err := write(&buf, rows, codec); err != nil {
				panic(err)
			}
			seeds = append(seeds, buf.Bytes())
		}
	}
	for _, c := range guardtest.Hostile("physical_address", "creation_date") {
		if len(c.Data) < 64<<10 {
			seeds = append(seeds, c.Data)
		}
	}
	return seeds
}

// FuzzReadRunPages builds a run's file from fuzzed page headers and
// payloads, compressed or not, with every codec (guardtest.Fuzzed).
func FuzzReadRunPages(f *testing.F) {
	for _, s := range guardtest.FuzzSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		fuzzRead(t, guardtest.Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File("physical_address"))
	})
}
