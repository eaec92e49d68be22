package uncommitted

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
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

// tStruct is Thrift's compact-protocol type of a struct.
const tStruct = 12

// thriftList is the compact header of a list of n elements of type typ.
func thriftList(n int, typ byte) []byte {
	if n < 15 {
		return []byte{byte(n)<<4 | typ}
	}
	return binary.AppendUvarint([]byte{0xf0 | typ}, uint64(n))
}

// hostileFooter returns a FileMetaData (version 1, num_rows 0) with the
// given schema elements and row groups, each already encoded.
func hostileFooter(schema, rowGroups [][]byte) []byte {
	b := []byte{0x15, 0x02, 0x19} // version 1, field 2: schema
	b = append(b, thriftList(len(schema), tStruct)...)
	for _, s := range schema {
		b = append(b, s...)
	}
	b = append(b, 0x16, 0x00, 0x19) // num_rows 0, field 4: row_groups
	b = append(b, thriftList(len(rowGroups), tStruct)...)
	for _, g := range rowGroups {
		b = append(b, g...)
	}
	return append(b, 0x00)
}

func repeated(b []byte, n int) [][]byte {
	s := make([][]byte, n)
	for i := range s {
		s[i] = b
	}
	return s
}

// TestReadRunHostileFooter: ReadRun decodes a footer with parquet-go,
// whose decoder allocates whatever counts a footer claims, and whose
// reader then allocates by products of them. A footer within the caps
// costs bounded memory; one past them is refused before parquet-go sees
// it. Without the checks, the first two footers (9 and 360,012 bytes) make
// ReadRun allocate 24 GiB and 27 GiB.
func TestReadRunHostileFooter(t *testing.T) {
	ctx := context.Background()
	const bound = 128 << 20
	// The fields parquet-go requires, and no more.
	leaf := []byte{0x15, 0x0c, 0x38, 0x01, 'a', 0x00} // BYTE_ARRAY, name "a"
	group := func(n int) []byte {                     // name "a", n children
		return binary.AppendUvarint([]byte{0x48, 0x01, 'a', 0x15}, uint64(n)<<1)
	}
	rowGroup := []byte{0x19, 0x0c, 0x16, 0x00, 0x16, 0x00, 0x00} // no columns, 0 bytes, 0 rows
	chunk := []byte{0x26, 0x00, 0x00}                            // file_offset 0
	schema := func(leaves int) [][]byte {
		return append([][]byte{append(group(leaves), 0x00)}, repeated(leaf, leaves)...)
	}
	cases := []struct {
		name    string
		footer  []byte
		refused bool // by the checks, before parquet-go
	}{
		{"list of 2^28 schema elements", []byte{0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x01}, true},
		// Each element has one child: parquet-go's reader allocates a
		// path of every depth, quadratic in the schema's length.
		{"schema of 60,000 nested elements", hostileFooter(repeated(append(group(1), 0x00), 60000), nil), true},
		{"more list elements than the cap", hostileFooter(schema(2), repeated(rowGroup, maxFooterItems)), true},
		// Within the caps: bounded, and refused by parquet-go or checkChunks.
		{"63 leaves in 65,000 row groups", hostileFooter(schema(maxSchemaElements-1), repeated(rowGroup, maxFooterItems-maxSchemaElements)), false},
		{"a row group of 65,000 column chunks", hostileFooter(schema(2), [][]byte{
			slices.Concat([]byte{0x19}, thriftList(maxFooterItems-4, tStruct), bytes.Repeat(chunk, maxFooterItems-4), rowGroup[2:]),
		}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", withFooter(c.footer), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := numRows(c.footer); (err != nil) != c.refused {
				t.Errorf("footer checks: %v, want refused %v", err, c.refused)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var err error
			for _, err = range ReadRun(ctx, bucket, "_lakefs", "r", AllowUnverified()) {
			}
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrInvalidFile) {
				t.Errorf("ReadRun: %v, want ErrInvalidFile", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > bound {
				t.Errorf("ReadRun allocated %d MiB, bound %d MiB", n>>20, bound>>20)
			} else {
				t.Logf("%d footer bytes: ReadRun allocated %.1f MiB: %v", len(c.footer), float64(n)/(1<<20), err)
			}
		})
	}
}

// TestPinnedTail: reads of every range, inside the tail, across its start
// or before it, return the file's bytes, as a bytes.Reader does.
func TestPinnedTail(t *testing.T) {
	file := []byte("0123456789abcdefghij")
	for cut := 0; cut <= len(file); cut++ {
		r := &pinnedTail{r: bytes.NewReader(file[:cut]), off: int64(cut), tail: slices.Clone(file[cut:])}
		want := bytes.NewReader(file)
		for off := range len(file) + 2 {
			for n := range len(file) + 2 {
				got, wantBuf := make([]byte, n), make([]byte, n)
				gn, gerr := r.ReadAt(got, int64(off))
				wn, werr := want.ReadAt(wantBuf, int64(off))
				if gn != wn || (gerr == nil) != (werr == nil) || !bytes.Equal(got[:gn], wantBuf[:wn]) {
					t.Fatalf("tail from %d: ReadAt(%d bytes, %d) = %d %q %v, want %d %q %v", cut, n, off, gn, got[:gn], gerr, wn, wantBuf[:wn], werr)
				}
			}
		}
	}
}
