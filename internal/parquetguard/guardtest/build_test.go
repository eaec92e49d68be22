package guardtest_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestDeltaMatchesParquetGo writes values of random lengths as a
// DELTA_LENGTH_BYTE_ARRAY page, whose lengths Delta encodes, and reads them
// back with parquet-go.
func TestDeltaMatchesParquetGo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 2, 127, 128, 129, 1000} {
		var want []string
		var lengths []int32
		var data []byte
		for range n {
			v := string(bytes.Repeat([]byte{'a' + byte(r.IntN(26))}, r.IntN(1<<r.IntN(12))))
			want = append(want, v)
			lengths = append(lengths, int32(len(v)))
			data = append(data, v...)
		}
		page := guardtest.DataPage(format.Snappy, format.DeltaLengthByteArray, int32(n), append(guardtest.Delta(lengths...), data...))
		file := guardtest.File(int64(n), guardtest.Column{Name: "a", Type: format.ByteArray, Codec: format.Snappy, Pages: []guardtest.Page{page}})
		type row struct {
			A string `parquet:"a"`
		}
		rows, err := parquet.Read[row](bytes.NewReader(file), int64(len(file)))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.A)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d values: read other values", n)
		}
	}
}
