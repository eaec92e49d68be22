package sweep

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"gocloud.dev/blob/memblob"
)

// dictRow is a Spark-shaped row whose address is dictionary-encoded, as
// Spark writes strings.
type dictRow struct {
	Extra   int64   `parquet:"extra"`
	Address *string `parquet:"address,optional,dict"`
}

// partReader drives the shared tests of guardtest on Candidates. Its
// layouts write addresses as Mark does (v1 pages, PLAIN), as parquet-go
// does by default (v2 pages, delta-encoded strings), and as Spark does
// (dictionaries, an optional column, an extra column); in small pages and
// row groups.
var partReader = guardtest.Reader[string]{
	Column:  "address",
	Invalid: ErrInvalidInput,
	Store:   storePart,
	Layouts: map[string]guardtest.Writer[string]{
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
	},
	Dictionary: "spark",
	Row:        func(_ int, address string, _ *rand.Rand) string { return address },
}

// storePart writes data as a run's only part; read reads its candidates to
// the end: those before the first error, and that error.
func storePart(t *testing.T, data []byte) (read func() ([]string, error)) {
	t.Helper()
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	if err := b.WriteAll(ctx, reportDir(DefaultStoragePrefix, "r")+"deleted/part-00000-c000.parquet", data, nil); err != nil {
		t.Fatal(err)
	}
	return func() ([]string, error) {
		var got []string
		var first error
		for a, err := range Candidates(ctx, b, DefaultStoragePrefix, "r") {
			switch {
			case first != nil:
			case err != nil:
				first = err
			default:
				got = append(got, a)
			}
		}
		return got, first
	}
}

// TestCandidatesHostileFiles reads parts that claim, or uncompress to, far
// more than they hold (see guardtest.Hostile): each is refused with
// ErrInvalidInput, having allocated at most guardtest.HostileAllocBound.
func TestCandidatesHostileFiles(t *testing.T) { partReader.TestHostile(t) }

// TestCandidatesMemoryAtLimits reads the parts that cost the most within
// parquetguard's limits (guardtest.AtLimits): each reads whole with a peak
// heap under guardtest.LimitsPeakBound.
func TestCandidatesMemoryAtLimits(t *testing.T) { partReader.TestAtLimits(t) }

// TestCandidatesCodecs reads parts written with every codec parquet-go
// writes (Spark writes ZSTD, LZ4_RAW, Brotli… when told to), in every
// layout: each reads as the addresses written, but for the LZ4_RAW pages
// parquet-go misreads, which fail (guardtest.Reader.TestCodecs).
func TestCandidatesCodecs(t *testing.T) { partReader.TestCodecs(t, 3) }

// TestCandidatesRefusesHadoopLZ4 reads a part compressed with LZ4 in
// Hadoop's framing (Spark's "lz4"), which parquet-go does not read: the
// error names the codec.
func TestCandidatesRefusesHadoopLZ4(t *testing.T) { partReader.TestHadoopLZ4(t) }

// fuzzRead is the property of the fuzz targets: Candidates yields addresses
// or an error wrapping ErrInvalidInput, never panics, and allocates at most
// guardtest.FuzzAllocBound.
func fuzzRead(t *testing.T, data []byte) { partReader.Fuzz(t, data) }

// fuzzSeeds are small parts of addresses in every codec and layout, and the
// small hostile files.
func fuzzSeeds() [][]byte { return partReader.Seeds() }

// FuzzCandidatesPages builds a part from fuzzed page headers and payloads,
// compressed or not, with every codec (guardtest.Fuzzed).
func FuzzCandidatesPages(f *testing.F) { partReader.FuzzPages(f) }
