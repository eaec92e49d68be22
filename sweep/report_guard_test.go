package sweep

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
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// hostileAllocBound is what refusing a hostile file may cost: the page
// checks' buffers (a header window, the largest page read, a decoder).
const hostileAllocBound = 32 << 20

// limitsPeakBound is what reading a part may cost at most, whatever it
// holds: the peak heap (garbage included) reading the parts that cost the
// most within parquetguard's limits.
const limitsPeakBound = 320 << 20

// firstError reads candidates to the end and returns the first error.
func firstError(read func(func(string, error) bool)) error {
	var first error
	for _, err := range read {
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// TestCandidatesHostileFiles reads parts that claim, or uncompress to, far
// more than they hold (see guardtest.Hostile): each is refused with
// ErrInvalidInput, having allocated at most hostileAllocBound.
func TestCandidatesHostileFiles(t *testing.T) {
	ctx := context.Background()
	for _, c := range guardtest.Hostile("address", "") {
		t.Run(c.Name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			if err := b.WriteAll(ctx, reportDir(DefaultStoragePrefix, "r")+"deleted/part-0", c.Data, nil); err != nil {
				t.Fatal(err)
			}
			use, err := guardtest.Measure(func() error {
				return firstError(Candidates(ctx, b, DefaultStoragePrefix, "r"))
			})
			t.Logf("%d-byte file: %d KiB allocated: %v", len(c.Data), use.Allocated>>10, err)
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v, want ErrInvalidInput", err)
			}
			if use.Allocated > hostileAllocBound {
				t.Errorf("allocated %d MiB reading a %d-byte file, more than %d MiB", use.Allocated>>20, len(c.Data), hostileAllocBound>>20)
			}
		})
	}
}

// TestCandidatesMemoryAtLimits reads the parts that cost the most within
// parquetguard's limits (pages of 16 MiB from a few KiB, of 2^20 values,
// but 2^16 under the race detector, which takes minutes per million
// values): each reads whole with a peak heap under limitsPeakBound.
func TestCandidatesMemoryAtLimits(t *testing.T) {
	values := 1 << 20
	if guardtest.Race {
		values = 1 << 16
	}
	for _, c := range guardtest.AtLimits("address", "", values) {
		t.Run(c.Name, func(t *testing.T) {
			var n int
			use, err := guardtest.Measure(func() error {
				got, err := readPart(t, c.Data)
				n = len(got)
				return err
			})
			t.Logf("%d-byte file, %d addresses: %d MiB allocated, peak heap %d MiB", len(c.Data), n, use.Allocated>>20, use.PeakHeap>>20)
			if err != nil || n == 0 {
				t.Fatalf("%d addresses: %v", n, err)
			}
			if use.PeakHeap > limitsPeakBound {
				t.Errorf("peak heap of %d MiB, more than %d MiB", use.PeakHeap>>20, limitsPeakBound>>20)
			}
		})
	}
}

// dictRow is a Spark-shaped row whose address is dictionary-encoded, as
// Spark writes strings.
type dictRow struct {
	Extra   int64   `parquet:"extra"`
	Address *string `parquet:"address,optional,dict"`
}

// partLayouts write addresses as Mark does (v1 pages, PLAIN), as parquet-go
// does by default (v2 pages, delta-encoded strings), and as Spark does
// (dictionaries, an optional column, an extra column); in small pages and
// row groups.
var partLayouts = map[string]func(io.Writer, []string, compress.Codec) error{
	"mark": func(w io.Writer, addrs []string, c compress.Codec) error {
		rows := make([]addressRow, len(addrs))
		for i, a := range addrs {
			rows[i].Address = a
		}
		return parquet.Write(w, rows, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000),
			parquet.DataPageVersion(1))
	},
	"defaults": func(w io.Writer, addrs []string, c compress.Codec) error {
		rows := make([]sparkRow, len(addrs))
		for i := range addrs {
			rows[i] = sparkRow{Extra: int64(i), Address: &addrs[i]}
		}
		return parquet.Write(w, rows, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000))
	},
	"spark": func(w io.Writer, addrs []string, c compress.Codec) error {
		rows := make([]dictRow, len(addrs))
		for i := range addrs {
			rows[i] = dictRow{Extra: int64(i), Address: &addrs[i]}
		}
		return parquet.Write(w, rows, parquet.Compression(c), parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(1000),
			parquet.DataPageVersion(1))
	},
}

// readPart writes data as a run's only part and reads its candidates.
func readPart(t *testing.T, data []byte) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := b.WriteAll(ctx, reportDir(DefaultStoragePrefix, "r")+"deleted/part-00000-c000.parquet", data, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for a, err := range Candidates(ctx, b, DefaultStoragePrefix, "r") {
		if err != nil {
			return got, err
		}
		got = append(got, a)
	}
	return got, nil
}

// TestCandidatesCodecs reads parts written with every codec parquet-go
// writes (Spark writes ZSTD, LZ4_RAW, Brotli… when told to), in every
// layout, of addresses that compress well and of random ones: each reads as
// the addresses written. The exception is LZ4_RAW pages that compress less
// than 3:1, such as random addresses or dictionary indexes: parquet-go v0.32
// reads them wrong without an error (parquet-go/parquet-go#608), so they
// fail. No part reads as other addresses.
func TestCandidatesCodecs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var compressible, random []string
	for i := range 3000 {
		compressible = append(compressible, fmt.Sprintf("data/g%03d/object-%08d", i%17, i))
		random = append(random, fmt.Sprintf("data/%016x%016x", r.Uint64(), r.Uint64()))
	}
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Lz4Raw, &parquet.Brotli} {
		for name, write := range partLayouts {
			for data, want := range map[string][]string{"compressible": compressible, "random": random} {
				t.Run(codec.String()+" "+name+" "+data, func(t *testing.T) {
					var buf bytes.Buffer
					if err := write(&buf, want, codec); err != nil {
						t.Fatal(err)
					}
					got, err := readPart(t, buf.Bytes())
					misread := codec == &parquet.Lz4Raw && (data == "random" || name == "spark")
					switch {
					case err == nil && !slices.Equal(got, want):
						t.Fatalf("read %d other addresses, and no error", len(got))
					case err != nil && !(misread && errors.Is(err, parquetguard.ErrUnsupportedCodec) && errors.Is(err, ErrInvalidInput)):
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// TestCandidatesRefusesHadoopLZ4 reads a part compressed with LZ4 in
// Hadoop's framing (Spark's "lz4"), which parquet-go does not read: the
// error names the codec.
func TestCandidatesRefusesHadoopLZ4(t *testing.T) {
	page := guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("data/a")))
	_, err := readPart(t, guardtest.File(1, guardtest.Column{Name: "address", Type: format.ByteArray, Codec: format.Lz4, Pages: []guardtest.Page{page}}))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "codec not supported: LZ4") {
		t.Fatalf("error %v, want ErrInvalidInput naming codec LZ4", err)
	}
}

// fuzzAllocBound is what reading a fuzzed part may allocate: far less than
// the hostile files made parquet-go allocate, more than the small files of
// a fuzz target cost within parquetguard's limits.
const fuzzAllocBound = 512 << 20

// fuzzRead is the property of the fuzz targets: Candidates yields addresses
// or an error wrapping ErrInvalidInput, never panics, and allocates at most
// fuzzAllocBound.
func fuzzRead(t *testing.T, data []byte) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := b.WriteAll(ctx, reportDir(DefaultStoragePrefix, "r")+"deleted/part-0", data, nil); err != nil {
		t.Fatal(err)
	}
	alloc, err := guardtest.Allocated(func() error { return firstError(Candidates(ctx, b, DefaultStoragePrefix, "r")) })
	if err != nil && !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("error %v does not wrap ErrInvalidInput", err)
	}
	if alloc > fuzzAllocBound {
		t.Fatalf("reading a %d-byte part allocated %d MiB", len(data), alloc>>20)
	}
}

// fuzzSeeds are small parts of addresses in every codec and layout, and the
// small hostile files.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Lz4Raw, &parquet.Brotli} {
		for _, write := range partLayouts {
			var buf bytes.Buffer
			if err := write(&buf, []string{"data/a", "data/b"}, codec); err != nil {
				panic(err)
			}
			seeds = append(seeds, buf.Bytes())
		}
	}
	for _, c := range guardtest.Hostile("address", "") {
		if len(c.Data) < 64<<10 {
			seeds = append(seeds, c.Data)
		}
	}
	return seeds
}

// FuzzCandidatesPages builds a part from fuzzed page headers and payloads,
// compressed or not, with every codec (guardtest.Fuzzed).
func FuzzCandidatesPages(f *testing.F) {
	for _, s := range guardtest.FuzzSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		fuzzRead(t, guardtest.Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File("address"))
	})
}
