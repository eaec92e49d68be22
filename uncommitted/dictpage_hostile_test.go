package uncommitted_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakegc/lakegc/uncommitted"
)

// TestDictionaryOffsetOutsideChunk: a footer whose physical_address chunk
// claims a dictionary_page_offset, or a size, that puts its pages outside
// the file's pages (negative, in the leading magic bytes, in the footer,
// past the file's end) is refused with ErrInvalidFile by both readers,
// having yielded nothing — not with an error of the store's reader, which
// a caller could take for a failure of the store rather than of the file.
// parquetguard's walk refuses such a chunk before it reads a page of it
// (its TestChunkOutsideFile); this is the readers' side.
func TestDictionaryOffsetOutsideChunk(t *testing.T) {
	addresses := make([]string, 50)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("data/obj%03d", i)
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, asRows(addresses), parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain)); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	size := int64(len(data))
	for name, edit := range map[string]func(md *format.ColumnMetaData){
		"negative":         func(md *format.ColumnMetaData) { md.DictionaryPageOffset = -14 },
		"in the magic":     func(md *format.ColumnMetaData) { md.DictionaryPageOffset = 1 },
		"in the footer":    func(md *format.ColumnMetaData) { md.DictionaryPageOffset = size - 20 },
		"past the end":     func(md *format.ColumnMetaData) { md.DictionaryPageOffset = size + 100 },
		"far past the end": func(md *format.ColumnMetaData) { md.DictionaryPageOffset = 1 << 62 },
		"negative size": func(md *format.ColumnMetaData) {
			md.DictionaryPageOffset = 4
			md.TotalCompressedSize = -1
		},
	} {
		file := rewriteFooter(t, data, func(md *format.FileMetaData) {
			for i := range md.RowGroups[0].Columns {
				if c := &md.RowGroups[0].Columns[i].MetaData; c.PathInSchema[0] == "physical_address" {
					edit(c)
				}
			}
		})
		r := schemaBytes(t, file)
		if !errors.Is(r.err, uncommitted.ErrInvalidFile) || len(r.got) != 0 {
			t.Errorf("%s: Addresses %d addresses, %v; want none and ErrInvalidFile", name, len(r.got), r.err)
		}
		if !errors.Is(r.werr, uncommitted.ErrInvalidFile) || len(r.want) != 0 {
			t.Errorf("%s: ReadRun %d rows, %v; want none and ErrInvalidFile", name, len(r.want), r.werr)
		}
	}
}
