package uncommitted_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// TestExportCodecsReadBack writes a run of several files with the default
// codec (GZIP at DefaultGzipLevel, lakeFS's), with Zstd (what
// lakegc.Collect writes), and with the other codecs a writer may choose; every file holds the codec asked,
// and ReadRun and Addresses, verified by the manifest, read back every
// row the source holds, once. 3 branches of 5,000 rows; of 1,500 under the
// race detector (2 to 4 files a codec).
func TestExportCodecsReadBack(t *testing.T) {
	ctx := context.Background()
	branches, perBranch := 3, 5000
	if raceEnabled {
		perBranch = 1500
	}
	var want []string
	for b := range branches {
		for i := range perBranch {
			want = append(want, fmt.Sprintf("data/b%d/%016x", b, uint64(i)*0x9e3779b97f4a7c15))
		}
	}
	slices.Sort(want)
	for _, c := range []struct {
		name  string
		codec compress.Codec // nil: the default
		want  format.CompressionCodec
	}{
		{"default", nil, format.Gzip},
		{"own-zstd", uncommitted.Zstd(), format.Zstd},
		{"gzip-6", &gzip.Codec{Level: gzip.DefaultCompression}, format.Gzip},
		{"snappy", &snappy.Codec{}, format.Snappy},
		{"parquet-go-zstd", &zstd.Codec{Level: zstd.SpeedFastest}, format.Zstd},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(32<<10), uncommitted.WithCompression(c.codec))
			var runID string
			files := 0
			for mark := (*uncommitted.Checkpoint)(nil); ; {
				res, err := p.Prepare(ctx, repo, bigSource(branches, perBranch), mark)
				if err != nil {
					t.Fatal(err)
				}
				runID = res.RunID
				if res.Filename != "" {
					files++
					data, err := bucket.ReadAll(ctx, "_lakefs/retention/gc/uncommitted/"+runID+"/uncommitted/"+res.Filename)
					if err != nil {
						t.Fatal(err)
					}
					f, err := parquet.OpenFile(strings.NewReader(string(data)), int64(len(data)))
					if err != nil {
						t.Fatal(err)
					}
					for _, rg := range f.Metadata().RowGroups {
						for _, col := range rg.Columns {
							if col.MetaData.Codec != c.want {
								t.Fatalf("%s: codec %v, want %v", res.Filename, col.MetaData.Codec, c.want)
							}
						}
					}
				}
				if mark = res.Checkpoint; mark == nil {
					break
				}
			}
			if files < 2 {
				t.Fatalf("%d files, want several", files)
			}
			t.Logf("%d files", files)
			var addrs, rows []string
			for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
				if err != nil {
					t.Fatal(err)
				}
				addrs = append(addrs, a)
			}
			for r, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", runID) {
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, r.PhysicalAddress)
			}
			slices.Sort(addrs)
			slices.Sort(rows)
			if !slices.Equal(addrs, want) || !slices.Equal(rows, want) {
				t.Fatalf("Addresses read %d, ReadRun %d rows; want the source's %d", len(addrs), len(rows), len(want))
			}
		})
	}
}

// ownZstdSeeds are fuzz seeds whose data page is compressed by Zstd's
// codec (ZSTD with a 1 MiB window, content size in the frame) rather than
// parquet-go's: stored as given, the header's uncompressed size honest.
func ownZstdSeeds() []guardtest.Fuzzed {
	plain := guardtest.Plain([]byte("data/a"), []byte("data/b"), []byte("data/cc"))
	long := guardtest.Plain(bytes.Repeat([]byte("data/0123456789abcdefghij/"), 2000), []byte("data/b"))
	dlba := append(guardtest.Delta(6, 6, 7), "data/adata/bdata/cc"...)
	seed := func(kind, enc uint8, optional bool, n int32, data []byte) guardtest.Fuzzed {
		z, err := uncommitted.Zstd().Encode(nil, data)
		if err != nil {
			panic(err)
		}
		return guardtest.Fuzzed{Codec: uint8(format.Zstd), Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Payload: z, SizeDelta: int32(len(data) - len(z))}
	}
	return []guardtest.Fuzzed{
		seed(0, uint8(format.Plain), false, 3, plain),
		seed(0, uint8(format.Plain), false, 2, long),
		seed(0, uint8(format.Plain), true, 3, append(guardtest.Levels(3, 1, 1), plain...)),
		seed(1, uint8(format.DeltaLengthByteArray), false, 3, dlba),
		seed(0, uint8(format.Plain), false, 0, nil),
	}
}

// TestOwnZstdSeedsRead: the files of ownZstdSeeds are valid, so they seed
// the fuzz targets with pages that read: Addresses yields all their rows.
func TestOwnZstdSeedsRead(t *testing.T) {
	for i, s := range ownZstdSeeds() {
		got, err := storeAddressFile(t, s.File(addressReader.Column))()
		if err != nil || len(got) != int(s.NumValues) {
			t.Fatalf("seed %d: %d addresses of %d, %v", i, len(got), s.NumValues, err)
		}
	}
}
