package parquetguard

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// footers returns the footers of files parquet-go writes.
func footers(t testing.TB) [][]byte {
	type row struct {
		A string            `parquet:"a,dict"`
		B *int64            `parquet:"b,optional"`
		C []string          `parquet:"c,list"`
		D map[string]string `parquet:"d"`
	}
	var out [][]byte
	for _, rows := range []int{0, 1, 5000} {
		var buf bytes.Buffer
		data := make([]row, rows)
		for i := range data {
			data[i].A = "x"
			data[i].C = []string{"y"}
		}
		if err := parquet.Write(&buf, data, parquet.MaxRowsPerRowGroup(100), parquet.KeyValueMetadata("k", "v")); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		out = append(out, b[len(b)-8-n:len(b)-8])
	}
	return out
}

// TestStructLenMatchesDecoder checks that the scan of footers parquet-go
// writes ends where they end, and that every truncation of one fails.
func TestStructLenMatchesDecoder(t *testing.T) {
	for _, footer := range footers(t) {
		n, _, err := structLen(footer, 32, math.MaxInt64)
		if err != nil || n != len(footer) {
			t.Fatalf("scan of a %d-byte footer: %d, %v", len(footer), n, err)
		}
		for i := range min(len(footer), 2000) {
			if _, _, err := structLen(footer[:i], 32, math.MaxInt64); err == nil {
				t.Fatalf("scan of %d bytes of %d: no error", i, len(footer))
			}
		}
	}
}

// decodeCost decodes b as a footer with parquet-go's decoder from bytes,
// as parquet-go's OpenFile does, and returns what it allocated.
func decodeCost(b []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var md format.FileMetaData
	_ = thrift.NewDecoder(new(thrift.CompactProtocol).NewReaderFromBytes(b)).Decode(&md)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzStructLen feeds arbitrary bytes to the scan: it never panics, and
// when it accepts them, decoding them as a footer allocates at most the cost
// it estimated, plus a few bytes per byte (an empty struct decodes to a
// pointer or an empty value).
func FuzzStructLen(f *testing.F) {
	for _, footer := range footers(f) {
		f.Add(footer)
	}
	f.Add([]byte{0x49, 0x1c, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x02, 0, 0}) // 2^22 column chunks
	f.Fuzz(func(t *testing.T, b []byte) {
		n, cost, err := structLen(b, DefaultMaxDepth, DefaultMaxFooterMemory)
		if err != nil {
			return
		}
		if alloc := decodeCost(b[:n]); alloc > uint64(cost)+uint64(64*n)+64<<10 {
			t.Fatalf("decoding %d bytes allocated %d, the scan estimated %d", n, alloc, cost)
		}
	})
}

// TestFooterRowsMatchesDecoder: FooterRows reads the num_rows parquet-go
// decodes from the footers it writes; every truncation fails, and so do
// footers past each limit.
func TestFooterRowsMatchesDecoder(t *testing.T) {
	lim := FooterLimits{Depth: 64, Items: 1 << 16, Schema: 64}
	for _, footer := range footers(t) {
		var md format.FileMetaData
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md); err != nil {
			t.Fatal(err)
		}
		n, err := FooterRows(footer, lim)
		if err != nil || n != md.NumRows {
			t.Fatalf("FooterRows of a %d-byte footer: %d, %v; parquet-go reads %d", len(footer), n, err, md.NumRows)
		}
		for i := range min(len(footer), 2000) {
			if _, err := FooterRows(footer[:i], lim); err == nil {
				t.Fatalf("FooterRows of %d bytes of %d: no error", i, len(footer))
			}
		}
		for _, tight := range []FooterLimits{
			{Depth: 2, Items: lim.Items, Schema: lim.Schema},
			{Depth: lim.Depth, Items: len(md.Schema), Schema: lim.Schema},
			{Depth: lim.Depth, Items: lim.Items, Schema: len(md.Schema) - 1},
		} {
			if _, err := FooterRows(footer, tight); err == nil {
				t.Fatalf("FooterRows within %+v of a footer of %d schema elements: no error", tight, len(md.Schema))
			}
		}
	}
}

// FuzzFooterRows feeds arbitrary bytes to FooterRows: it never panics, and
// when it accepts a footer that parquet-go decodes too, both read the same
// number of rows.
func FuzzFooterRows(f *testing.F) {
	for _, footer := range footers(f) {
		f.Add(footer)
	}
	f.Add([]byte{0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x01}) // 2^28 schema elements
	f.Add([]byte{0x36, 0x0e, 0x1b, 0x02, 0x88, 0x00, 0x00})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, footer []byte) {
		n, err := FooterRows(footer, FooterLimits{Depth: 64, Items: 1 << 16, Schema: 64})
		if err != nil {
			return
		}
		var md format.FileMetaData
		if thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md) == nil && md.NumRows != n {
			t.Fatalf("FooterRows %d, parquet-go reads %d", n, md.NumRows)
		}
	})
}
