package uncommitted_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/uncommitted"
)

// TestAddressesRowGroupCounts: a file whose physical_address pages hold
// fewer or more values than its row groups' rows, with a footer that
// agrees with itself (each chunk's num_values its row group's num_rows,
// their sum the file's), is refused with ErrInvalidFile, whether Addresses
// reads it from parquetguard.ReadPlain's pages or in part through
// parquet-go: with fewer values, a row the footer counts is in no page
// read (the last page of a chunk left outside it), and an address could
// go missing without an error.
func TestAddressesRowGroupCounts(t *testing.T) {
	ctx := context.Background()
	addresses := make([]string, 300)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("data/g%03d/c%05d", i/50, i)
	}
	var buf bytes.Buffer
	err := parquet.Write(&buf, asRows(addresses), parquet.MaxRowsPerRowGroup(100), parquet.PageBufferSize(256),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain))
	if err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	addRows := func(md *format.FileMetaData, rg int, d int64) {
		md.NumRows += d
		md.RowGroups[rg].NumRows += d
		for i := range md.RowGroups[rg].Columns {
			md.RowGroups[rg].Columns[i].MetaData.NumValues += d
		}
	}
	cases := map[string]func(*format.FileMetaData){
		"as written":                      nil,
		"more rows than values":           func(md *format.FileMetaData) { addRows(md, 0, 1) },
		"fewer rows than values":          func(md *format.FileMetaData) { addRows(md, 1, -1) },
		"a row moved between row groups":  func(md *format.FileMetaData) { addRows(md, 0, 1); addRows(md, 1, -1) },
		"a chunk's last page outside it":  func(md *format.FileMetaData) { cutLastPage(t, data, md, 0) },
		"the file's last page outside it": func(md *format.FileMetaData) { cutLastPage(t, data, md, 2) },
	}
	for name, edit := range cases {
		file := data
		if edit != nil {
			file = rewriteFooter(t, data, edit)
		}
		for _, stop := range []int{0, 1, 2} {
			bucket := memblob.OpenBucket(nil)
			if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", file, nil); err != nil {
				t.Fatal(err)
			}
			restore := uncommitted.SetPlainPages(stop)
			before := uncommitted.PlainFallbacks()
			got, err := readAddresses(ctx, bucket, "r")
			fell := uncommitted.PlainFallbacks() - before
			restore()
			bucket.Close()
			if (stop == 0) != (fell == 0) {
				t.Fatalf("%s, stop after %d pages: %d files read through parquet-go", name, stop, fell)
			}
			if edit == nil {
				if err != nil || len(got) != len(addresses) {
					t.Fatalf("%s, stop after %d pages: %d addresses of %d, %v", name, stop, len(got), len(addresses), err)
				}
				continue
			}
			if !errors.Is(err, uncommitted.ErrInvalidFile) {
				t.Fatalf("%s, stop after %d pages: %d addresses of %d, and %v, not ErrInvalidFile", name, stop, len(got), len(addresses), err)
			}
		}
	}
}

// cutLastPage shrinks the physical_address chunk of row group rg of md,
// the footer of data, so that its last page lies past its end.
func cutLastPage(t *testing.T, data []byte, md *format.FileMetaData, rg int) {
	t.Helper()
	var chunk *format.ColumnMetaData
	for i := range md.RowGroups[rg].Columns {
		if c := &md.RowGroups[rg].Columns[i].MetaData; len(c.PathInSchema) == 1 && c.PathInSchema[0] == "physical_address" {
			chunk = c
		}
	}
	if chunk == nil {
		t.Fatal("no physical_address chunk")
	}
	start := chunk.DataPageOffset
	if chunk.DictionaryPageOffset != 0 {
		start = chunk.DictionaryPageOffset
	}
	pages, last := 0, int64(0)
	for off := start; off < start+chunk.TotalCompressedSize; pages++ {
		h := new(format.PageHeader)
		pr := new(thrift.CompactProtocol).NewReaderFromBytes(data[off:])
		if err := thrift.NewDecoder(pr).Decode(h); err != nil {
			t.Fatal(err)
		}
		last = int64(pr.BytesRead()) + int64(h.CompressedPageSize)
		off += last
	}
	if pages < 2 {
		t.Fatalf("row group %d: %d pages of physical_address, want 2 or more", rg, pages)
	}
	chunk.TotalCompressedSize -= last
}
