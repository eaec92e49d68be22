package uncommitted

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// parquetFile returns a file of n rows, with a footer padded by a
// key-value entry of pad bytes.
func parquetFile(t testing.TB, n, pad int) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(100)}
	if pad > 0 {
		opts = append(opts, parquet.KeyValueMetadata("pad", strings.Repeat("x", pad)))
	}
	w := parquet.NewGenericWriter[Row](&buf, opts...)
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{PhysicalAddress: fmt.Sprintf("data/%d", i), CreationDate: int64(i)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withFooter returns "PAR1", footer, its length and "PAR1": a file whose
// footer is the given bytes.
func withFooter(footer []byte) []byte {
	b := append([]byte("PAR1"), footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, "PAR1"...)
}

func TestFooterRows(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	// A list of 2^28 schema elements in 9 bytes: decoding it allocates
	// 24 GiB.
	bomb := []byte{0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x01}
	cases := []struct {
		name string
		data []byte
		want int64 // -1: ErrInvalidFile
	}{
		{"empty file", parquetFile(t, 0, 0), 0},
		{"one row", parquetFile(t, 1, 0), 1},
		{"row groups", parquetFile(t, 1234, 0), 1234},
		{"footer past the first read", parquetFile(t, 7, 3*footerTail), 7},
		{"list bomb", withFooter(bomb), -1},
		{"no num_rows", withFooter([]byte{0x15, 0x02, 0x00}), -1},
		{"negative num_rows", withFooter([]byte{0x36, 0x01, 0x00}), -1},
		{"num_rows of another type", withFooter([]byte{0x35, 0x02, 0x00}), -1},
		{"truncated", withFooter([]byte{0x36}), -1},
		{"deep nesting", withFooter(bytes.Repeat([]byte{0x1c}, 100)), -1},
		{"footer longer than the file", append(binary.LittleEndian.AppendUint32([]byte("PAR1PAR1"), 1<<30), "PAR1"...), -1},
		{"no magic", []byte("PAR1 this is no Parquet file"), -1},
		{"too short", []byte("PAR1"), -1},
	}
	for _, c := range cases {
		if err := bucket.WriteAll(ctx, c.name, c.data, nil); err != nil {
			t.Fatal(err)
		}
		got, err := footerRows(ctx, bucket, c.name, int64(len(c.data)))
		if c.want < 0 {
			if !errors.Is(err, ErrInvalidFile) {
				t.Errorf("%s: %d, %v; want ErrInvalidFile", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

// FuzzFooterRows: numRows walks a footer read from the bucket, outside
// input. It never panics, and when it accepts a footer that parquet-go
// decodes too (which its checks make safe: every length fits), both read
// the same number of rows.
func FuzzFooterRows(f *testing.F) {
	for _, n := range []int{0, 3, 250} {
		data := parquetFile(f, n, 0)
		size := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		f.Add(data[len(data)-8-size : len(data)-8])
	}
	f.Add([]byte{0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Add([]byte{0x36, 0x0e, 0x1b, 0x02, 0x88, 0x00, 0x00})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, footer []byte) {
		n, err := numRows(footer)
		if err != nil {
			if !errors.Is(err, ErrInvalidFile) {
				t.Fatalf("error %v does not wrap ErrInvalidFile", err)
			}
			return
		}
		var md format.FileMetaData
		if thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md) == nil && md.NumRows != n {
			t.Fatalf("numRows %d, parquet-go reads %d", n, md.NumRows)
		}
	})
}
