package inventory

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// A Parquet time that is no time (negative, or past what a Duration holds
// in its unit) is refused, not wrapped around into a plausible old time.
func TestParquetTimeOutOfRange(t *testing.T) {
	for _, ms := range []int64{-18446744073709, -1, 1 << 62} {
		var buf bytes.Buffer
		size := int64(3)
		rows := []s3ParquetRow{{Bucket: "src", Key: "ns/a", Size: &size, LastModified: &ms}}
		if err := parquet.Write(&buf, rows); err != nil {
			t.Fatal(err)
		}
		pr, err := openParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()), s3ParquetColumns)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := pr.next()
		pr.closeReaders()
		if err == nil {
			t.Errorf("last_modified_date %d ms read as %v", ms, batch[0].obj.ModTime)
		}
	}
}
