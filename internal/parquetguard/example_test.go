package parquetguard_test

import (
	"bytes"
	"fmt"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go"
)

// A file parquet-go wrote passes; the same file whose page claims to
// uncompress to 1 GiB does not, before anything is allocated for it.
func Example() {
	type row struct {
		Address string `parquet:"address"`
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []row{{"data/a"}, {"data/b"}}, parquet.Compression(&parquet.Uncompressed), parquet.DataPageVersion(1)); err != nil {
		panic(err)
	}
	file := buf.Bytes()
	fmt.Println(parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{}, "address"))

	// The page header's uncompressed_page_size (field 2, Thrift compact)
	// follows its type (field 1): 0x15 0x00 0x15 <zigzag varint>.
	hostile := bytes.Clone(file)
	i := bytes.Index(hostile, []byte{0x15, 0x00, 0x15})
	hostile = append(hostile[:i+3:i+3], append([]byte{0x80, 0x80, 0x80, 0x80, 0x08}, hostile[i+4:]...)...)
	fmt.Println(parquetguard.Check(bytes.NewReader(hostile), int64(len(hostile)), parquetguard.Limits{}, "address"))
	// Output:
	// <nil>
	// parquet: row group 0, column "address": page 0: header claims 34 bytes stored, 1073741824 uncompressed (limit 16777216)
}
