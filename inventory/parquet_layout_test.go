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

// A report's Parquet file whose key chunk gives a dictionary_page_offset
// at a data page, and a data_page_offset inside it, is read as written:
// inventory reads a chunk's pages in order from its dictionary_page_offset
// (parquet-go's page reader) and never seeks to the data_page_offset, so
// it opens reports without parquetguard.Limits.RowReaderLayout, whose
// check would refuse this file.
func TestParquetDictionaryLayout(t *testing.T) {
	var buf bytes.Buffer
	size, ms := int64(3), int64(1763636400000)
	rows := []s3ParquetRow{{Bucket: "src", Key: "ns/a", Size: &size, LastModified: &ms}, {Bucket: "src", Key: "ns/b", Size: &size, LastModified: &ms}}
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	pr, err := openParquet(bytes.NewReader(data), int64(len(data)), s3ParquetColumns)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := pr.next()
	pr.closeReaders()
	if err != nil || len(batch) != 2 {
		t.Fatalf("as written: %d rows, %v", len(batch), err)
	}

	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[len(data)-8-n:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	for i := range md.RowGroups[0].Columns {
		if c := &md.RowGroups[0].Columns[i].MetaData; slices.Equal(c.PathInSchema, []string{"key"}) {
			if c.DictionaryPageOffset != 0 {
				t.Fatal("the key column has a dictionary: not the layout under test")
			}
			c.DictionaryPageOffset, c.DataPageOffset = c.DataPageOffset, c.DataPageOffset+1
		}
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(slices.Clone(data[:len(data)-8-n]), footer...)
	bad = append(binary.LittleEndian.AppendUint32(bad, uint32(len(footer))), "PAR1"...)
	pr, err = openParquet(bytes.NewReader(bad), int64(len(bad)), s3ParquetColumns)
	if err != nil {
		t.Fatalf("a data page at dictionary_page_offset: %v", err)
	}
	batch, err = pr.next()
	pr.closeReaders()
	if err != nil || len(batch) != len(rows) {
		t.Fatalf("a data page at dictionary_page_offset: %d rows, %v", len(batch), err)
	}
	for i, r := range batch {
		if r.obj.Key != rows[i].Key {
			t.Fatalf("row %d: key %q, want %q", i, r.obj.Key, rows[i].Key)
		}
	}
}
