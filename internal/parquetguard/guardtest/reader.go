package guardtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// What reading a file may cost, whatever it holds.
const (
	// HostileAllocBound is what refusing a hostile file may allocate: the
	// page checks' buffers (a header window, the largest page read, a
	// decoder).
	HostileAllocBound = 32 << 20
	// LimitsPeakBound is the peak heap (garbage included) reading the
	// files that cost the most within parquetguard's limits.
	LimitsPeakBound = 320 << 20
	// FuzzAllocBound is what reading a fuzzed file may allocate: far less
	// than the hostile files made parquet-go allocate, more than the small
	// files of a fuzz target cost within parquetguard's limits.
	FuzzAllocBound = 512 << 20
)

// Codecs are parquet-go's codecs.
var Codecs = []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Lz4Raw, &parquet.Brotli}

// Writer writes rows to w as some writer does, compressed with a codec.
type Writer[T any] func(w io.Writer, rows []T, c compress.Codec) error

// Reader is a package's reader of Parquet files of rows T, as the shared
// tests drive it.
type Reader[T comparable] struct {
	// Column names the files' BYTE_ARRAY column, IntColumn an INT64
	// column the reader reads too (empty if none).
	Column, IntColumn string
	// Invalid is the error every refusal of a file wraps.
	Invalid error
	// Store stores data where the package reads a file, and returns the
	// read: to the end of the package's iteration, it returns the rows
	// before the first error, and that error.
	Store func(t *testing.T, data []byte) (read func() ([]T, error))
	// Layouts write rows as the writers the package meets do; Dictionary
	// names the one that stores the column as a dictionary.
	Layouts    map[string]Writer[T]
	Dictionary string
	// Row returns the i-th row of a file, whose column is address; its
	// other fields draw from r, or compress well if r is nil.
	Row func(i int, address string, r *rand.Rand) T
}

// TestHostile reads the Hostile files: each is refused with Invalid,
// having allocated at most HostileAllocBound.
func (rd Reader[T]) TestHostile(t *testing.T) {
	for _, c := range Hostile(rd.Column, rd.IntColumn) {
		t.Run(c.Name, func(t *testing.T) {
			read := rd.Store(t, c.Data)
			use, err := Measure(func() error {
				_, err := read()
				return err
			})
			t.Logf("%d-byte file: %d KiB allocated: %v", len(c.Data), use.Allocated>>10, err)
			if !errors.Is(err, rd.Invalid) {
				t.Errorf("error %v, want %v", err, rd.Invalid)
			}
			if use.Allocated > HostileAllocBound {
				t.Errorf("allocated %d MiB reading a %d-byte file, more than %d MiB", use.Allocated>>20, len(c.Data), HostileAllocBound>>20)
			}
		})
	}
}

// TestAtLimits reads the AtLimits files (pages of 2^20 values, but 2^16
// under the race detector, which takes minutes per million values): each
// reads whole with a peak heap under LimitsPeakBound.
func (rd Reader[T]) TestAtLimits(t *testing.T) {
	values := 1 << 20
	if Race {
		values = 1 << 16
	}
	for _, c := range AtLimits(rd.Column, rd.IntColumn, values) {
		t.Run(c.Name, func(t *testing.T) {
			var n int
			use, err := Measure(func() error {
				got, err := rd.Store(t, c.Data)()
				n = len(got)
				return err
			})
			t.Logf("%d-byte file, %d rows: %d MiB allocated, peak heap %d MiB", len(c.Data), n, use.Allocated>>20, use.PeakHeap>>20)
			if err != nil || n == 0 {
				t.Fatalf("%d rows: %v", n, err)
			}
			if use.PeakHeap > LimitsPeakBound {
				t.Errorf("peak heap of %d MiB, more than %d MiB", use.PeakHeap>>20, LimitsPeakBound>>20)
			}
		})
	}
}

// TestCodecs reads files written with every codec, in every layout, of
// 3000 rows whose addresses compress well and of as many random ones
// (seeded with seed): each reads as the rows written. The exception is
// LZ4_RAW pages that compress less than 3:1, such as random addresses or
// dictionary indexes: parquet-go v0.32 reads them wrong without an error (it
// uncompresses them into a buffer it then ignores,
// parquet-go/parquet-go#608), so they must fail with
// parquetguard.ErrUnsupportedCodec wrapped in Invalid. No file reads as other
// rows.
func (rd Reader[T]) TestCodecs(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var compressible, random []T
	for i := range 3000 {
		compressible = append(compressible, rd.Row(i, fmt.Sprintf("data/g%03d/object-%08d", i%17, i), nil))
		random = append(random, rd.Row(i, fmt.Sprintf("data/%016x%016x", r.Uint64(), r.Uint64()), r))
	}
	for _, codec := range Codecs {
		for name, write := range rd.Layouts {
			for data, want := range map[string][]T{"compressible": compressible, "random": random} {
				t.Run(codec.String()+" "+name+" "+data, func(t *testing.T) {
					var buf bytes.Buffer
					if err := write(&buf, want, codec); err != nil {
						t.Fatal(err)
					}
					got, err := rd.Store(t, buf.Bytes())()
					misread := codec == &parquet.Lz4Raw && (data == "random" || name == rd.Dictionary)
					switch {
					case err == nil && !slices.Equal(got, want):
						t.Fatalf("read %d other rows, and no error", len(got))
					case err != nil && !(misread && errors.Is(err, parquetguard.ErrUnsupportedCodec) && errors.Is(err, rd.Invalid)):
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// TestHadoopLZ4 reads a file compressed with LZ4 in Hadoop's framing
// (Spark's "lz4"), which parquet-go does not read: the error wraps Invalid
// and names the codec.
func (rd Reader[T]) TestHadoopLZ4(t *testing.T) {
	page := DataPage(format.Uncompressed, format.Plain, 1, Plain([]byte("data/a")))
	_, err := rd.Store(t, File(1, Column{Name: rd.Column, Type: format.ByteArray, Codec: format.Lz4, Pages: []Page{page}}))()
	if !errors.Is(err, rd.Invalid) || !strings.Contains(err.Error(), "codec not supported: LZ4") {
		t.Fatalf("error %v, want %v naming codec LZ4", err, rd.Invalid)
	}
}

// Fuzz is the property of the fuzz targets: reading data yields rows or an
// error wrapping Invalid, never panics, and allocates at most
// FuzzAllocBound.
func (rd Reader[T]) Fuzz(t *testing.T, data []byte) {
	read := rd.Store(t, data)
	alloc, err := Allocated(func() error {
		_, err := read()
		return err
	})
	if err != nil && !errors.Is(err, rd.Invalid) {
		t.Fatalf("error %v does not wrap %v", err, rd.Invalid)
	}
	if alloc > FuzzAllocBound {
		t.Fatalf("reading a %d-byte file allocated %d MiB", len(data), alloc>>20)
	}
}

// Seeds are small files of two rows in every codec and layout, and the
// Hostile files under 64 KiB.
func (rd Reader[T]) Seeds() [][]byte {
	rows := []T{rd.Row(0, "data/a", nil), rd.Row(1, "data/b", nil)}
	var seeds [][]byte
	for _, codec := range Codecs {
		for _, write := range rd.Layouts {
			var buf bytes.Buffer
			if err := write(&buf, rows, codec); err != nil {
				panic(err)
			}
			seeds = append(seeds, buf.Bytes())
		}
	}
	return append(seeds, HostileSeeds(rd.Column, rd.IntColumn)...)
}

// FuzzPages is a fuzz target that builds a file from fuzzed page headers
// and payloads, compressed or not, with every codec (Fuzzed), and checks
// Fuzz on it.
func (rd Reader[T]) FuzzPages(f *testing.F) {
	for _, s := range FuzzSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		rd.Fuzz(t, Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File(rd.Column))
	})
}
