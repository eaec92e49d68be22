package uncommitted_test

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"gocloud.dev/blob/memblob"
)

// dictRow is Row with a dictionary-encoded address, as Spark and lakeFS's
// writer store repeated strings.
type dictRow struct {
	PhysicalAddress string `parquet:"physical_address,dict"`
	CreationDate    int64  `parquet:"creation_date"`
}

// runReader drives the shared tests of guardtest on ReadRun. Its layouts
// write rows as writers do: v1 pages of PLAIN values (ours, lakeFS's),
// parquet-go's defaults (v2 pages, delta-encoded strings), and
// dictionaries; in small pages and row groups.
var runReader = guardtest.Reader[uncommitted.Row]{
	Column:    "physical_address",
	IntColumn: "creation_date",
	Invalid:   uncommitted.ErrInvalidFile,
	Store:     storeFile,
	Layouts: map[string]guardtest.Writer[uncommitted.Row]{
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
	},
	Dictionary: "dictionary",
	Row: func(i int, address string, r *rand.Rand) uncommitted.Row {
		if r == nil {
			return uncommitted.Row{PhysicalAddress: address, CreationDate: int64(1e9 + i%5)}
		}
		return uncommitted.Row{PhysicalAddress: address, CreationDate: r.Int64()}
	},
}

// storeFile writes data as a run's only file; read reads the run to the
// end: the rows before the first error, and that error.
func storeFile(t *testing.T, data []byte) (read func() ([]uncommitted.Row, error)) {
	t.Helper()
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	t.Cleanup(func() { bucket.Close() })
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	return func() ([]uncommitted.Row, error) {
		var rows []uncommitted.Row
		var first error
		for row, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()) {
			switch {
			case first != nil:
			case err != nil:
				first = err
			default:
				rows = append(rows, row)
			}
		}
		return rows, first
	}
}

// TestReadRunHostileFiles reads files that claim, or uncompress to, far more
// than they hold — a page header claiming 1 GiB, compression bombs with
// honest and lying headers, levels, delta and dictionary runs, footers and
// schemas that make parquet-go allocate before it checks them, an LZ4 block
// that makes it grow a buffer forever (guardtest.Hostile): each is refused
// with ErrInvalidFile, having allocated at most guardtest.HostileAllocBound.
func TestReadRunHostileFiles(t *testing.T) { runReader.TestHostile(t) }

// TestReadRunMemoryAtLimits reads the files that cost the most within
// parquetguard's limits (guardtest.AtLimits): each reads whole with a peak
// heap under guardtest.LimitsPeakBound.
func TestReadRunMemoryAtLimits(t *testing.T) { runReader.TestAtLimits(t) }

// TestReadRunCodecs reads files written with every codec parquet-go
// writes, in every layout: each reads as the rows written, but for the
// LZ4_RAW pages parquet-go misreads, which fail
// (guardtest.Reader.TestCodecs).
func TestReadRunCodecs(t *testing.T) { runReader.TestCodecs(t, 1) }

// TestReadRunRefusesHadoopLZ4 reads a file compressed with LZ4 in Hadoop's
// framing, which parquet-go does not read: the error names the codec.
func TestReadRunRefusesHadoopLZ4(t *testing.T) { runReader.TestHadoopLZ4(t) }

// fuzzRead is the property of the fuzz targets: ReadRun returns rows or an
// error wrapping ErrInvalidFile, never panics, and allocates at most
// guardtest.FuzzAllocBound.
func fuzzRead(t *testing.T, data []byte) { runReader.Fuzz(t, data) }

// fuzzSeeds are small files of rows in every codec and layout, and the
// small hostile files.
func fuzzSeeds() [][]byte { return runReader.Seeds() }

// FuzzReadRunPages builds a run's file from fuzzed page headers and
// payloads, compressed or not, with every codec (guardtest.Fuzzed); seeded
// with pages of Zstd's own frames too.
func FuzzReadRunPages(f *testing.F) {
	for _, s := range ownZstdSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	runReader.FuzzPages(f)
}
