package inventory

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestParquetDuckDBLayout: a report whose dictionary-encoded key chunk has
// its data_page_offset short of the dictionary page's end by that page's
// header, as DuckDB before 0.10.1 wrote (duckdb/duckdb#10829), is read
// right. inventory reads a chunk with parquet-go's page reader from the
// dictionary_page_offset, in order, and never seeks to the
// data_page_offset, so it opens its reports without
// parquetguard.Limits.RowReaderLayout (a check for parquet-go's row
// reader only).
func TestParquetDuckDBLayout(t *testing.T) {
	type row struct {
		Bucket       string `parquet:"bucket,dict"`
		Key          string `parquet:"key,dict"`
		Size         int64  `parquet:"size"`
		LastModified int64  `parquet:"last_modified_date,timestamp(millisecond)"`
	}
	var buf bytes.Buffer
	rows := []row{{"src", "ns/a", 3, 1763636400000}, {"src", "ns/b", 3, 1763636400000}}
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	read := func(data []byte) (int, error) {
		pr, err := openParquet(bytes.NewReader(data), int64(len(data)), s3ParquetColumns)
		if err != nil {
			return 0, err
		}
		defer pr.closeReaders()
		batch, err := pr.next()
		for i, r := range batch {
			if r.obj.Key != rows[i].Key {
				t.Fatalf("row %d: key %q, want %q", i, r.obj.Key, rows[i].Key)
			}
		}
		return len(batch), err
	}
	if n, err := read(data); err != nil || n != 2 {
		t.Fatalf("as written: %d rows, %v", n, err)
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[len(data)-8-n:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	for i := range md.RowGroups[0].Columns {
		c := &md.RowGroups[0].Columns[i].MetaData
		if c.DictionaryPageOffset == 0 {
			if slices.Equal(c.PathInSchema, []string{"key"}) {
				t.Fatal("the key column has no dictionary: not the layout under test")
			}
			continue
		}
		var h format.PageHeader
		page := bytes.NewReader(data[c.DictionaryPageOffset:c.DataPageOffset])
		if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(page)).Decode(&h); err != nil {
			t.Fatal(err)
		}
		if h.Type != format.DictionaryPage {
			t.Fatalf("column %q: a %v page at dictionary_page_offset", c.PathInSchema, h.Type)
		}
		c.DataPageOffset = c.DictionaryPageOffset + int64(h.CompressedPageSize)
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	duck := append(slices.Clone(data[:len(data)-8-n]), footer...)
	duck = append(binary.LittleEndian.AppendUint32(duck, uint32(len(footer))), "PAR1"...)
	if got, err := read(duck); err != nil || got != len(rows) {
		t.Fatalf("DuckDB < 0.10.1 layout: %d rows, %v; want %d", got, err, len(rows))
	}
}
