package guardtest_test

import (
	"bytes"
	"fmt"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A file of a dictionary page and a page of indexes into it, built page by
// page, read by parquet-go.
func Example() {
	dict := guardtest.DictionaryPage(format.Gzip, 2, guardtest.Plain([]byte("data/a"), []byte("data/b")))
	// 1-bit indexes: one bit-packed group of 8 (header 1<<1|1), 1 0 1.
	indexes := guardtest.DataPage(format.Gzip, format.RLEDictionary, 3, []byte{1, 1<<1 | 1, 0b101})
	file := guardtest.File(3, guardtest.Column{Name: "address", Type: format.ByteArray, String: true, Codec: format.Gzip,
		Pages: []guardtest.Page{dict, indexes}})

	type row struct {
		Address string `parquet:"address"`
	}
	rows, err := parquet.Read[row](bytes.NewReader(file), int64(len(file)))
	fmt.Println(rows, err)
	// Output: [{data/b} {data/a} {data/b}] <nil>
}
