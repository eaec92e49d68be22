package parquetguard_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// every is a row of every physical type and the encodings parquet-go
// writes, nullable, repeated and nested values included.
type every struct {
	B    bool     `parquet:"b"`
	I32  int32    `parquet:"i32"`
	I64  int64    `parquet:"i64,delta"`
	F32  float32  `parquet:"f32,split"`
	F64  float64  `parquet:"f64"`
	Dict string   `parquet:"dict,dict"`
	DBA  string   `parquet:"dba,delta"`
	DLBA string   `parquet:"dlba"`
	P    string   `parquet:"p,plain"`
	FL   [16]byte `parquet:"fl"`
	Opt  *string  `parquet:"opt,optional"`
	List []string `parquet:"list,list"`
	Nest struct {
		X int64   `parquet:"x"`
		Y *string `parquet:"y,optional,dict"`
	} `parquet:"nest"`
}

func randomRows(r *rand.Rand, n int) []every {
	rows := make([]every, n)
	for i := range rows {
		s := fmt.Sprintf("data/%x/%x", r.IntN(50), r.Uint64()>>r.IntN(64))
		row := &rows[i]
		row.B, row.I32, row.I64, row.F32, row.F64 = r.IntN(2) == 0, r.Int32(), r.Int64N(1000), r.Float32(), r.Float64()
		row.Dict, row.DBA, row.DLBA, row.P = s[:8], s, s, strings.Repeat(s, r.IntN(3))
		row.FL[r.IntN(16)] = byte(i)
		if r.IntN(3) > 0 {
			row.Opt = &s
			row.Nest.Y = &row.Dict
		}
		for range r.IntN(4) {
			row.List = append(row.List, s)
		}
		row.Nest.X = int64(i)
	}
	return rows
}

// flat returns a row's values, pointers followed.
func flat(r every) []any {
	deref := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return []any{r.B, r.I32, r.I64, r.F32, r.F64, r.Dict, r.DBA, r.DLBA, r.P, r.FL, deref(r.Opt), len(r.List), strings.Join(r.List, ","), r.Nest.X, deref(r.Nest.Y)}
}

// TestCheckAcceptsWhatParquetGoWrites checks files of every type, encoding,
// codec and page version parquet-go writes, in pages of several sizes: Check
// accepts them, but for LZ4_RAW pages that parquet-go reads wrong (see
// parquet-go/parquet-go#608), and parquet-go reads them as written. Each
// file has 2,000 rows in row groups of 700; under the race detector, which
// makes pages of 512 bytes take seconds a file, 500 rows in groups of 175.
func TestCheckAcceptsWhatParquetGoWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	nRows, groupRows := 2000, 700
	if guardtest.Race {
		nRows, groupRows = 500, 175
	}
	for _, codec := range guardtest.Codecs {
		for _, version := range []int{1, 2} {
			for _, pageSize := range []int{512, 64 << 10} {
				t.Run(fmt.Sprintf("%v v%d %d", codec, version, pageSize), func(t *testing.T) {
					rows := randomRows(r, nRows)
					var buf bytes.Buffer
					if err := parquet.Write(&buf, rows, parquet.Compression(codec), parquet.DataPageVersion(version),
						parquet.PageBufferSize(pageSize), parquet.MaxRowsPerRowGroup(int64(groupRows))); err != nil {
						t.Fatal(err)
					}
					err := parquetguard.Check(bytes.NewReader(buf.Bytes()), int64(buf.Len()), parquetguard.Limits{})
					if codec == &parquet.Lz4Raw && errors.Is(err, parquetguard.ErrUnsupportedCodec) {
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					got, err := parquet.Read[every](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
					if err != nil || len(got) != len(rows) {
						t.Fatalf("parquet-go read %d rows of %d: %v", len(got), len(rows), err)
					}
					for i := range rows {
						if a, b := fmt.Sprint(flat(rows[i])), fmt.Sprint(flat(got[i])); a != b {
							t.Fatalf("row %d: read %s, wrote %s", i, b, a)
						}
					}
				})
			}
		}
	}
}

// values returns n PLAIN byte arrays of 6 bytes.
func values(n int) [][]byte {
	v := make([][]byte, n)
	for i := range v {
		v[i] = fmt.Appendf(nil, "d/%04d", i)
	}
	return v
}

// column is a one-column file of BYTE_ARRAY values.
func column(codec format.CompressionCodec, pages ...guardtest.Page) []byte {
	var rows int64
	for _, p := range pages {
		if p.Header.DataPageHeader.Valid {
			rows += int64(p.Header.DataPageHeader.V.NumValues)
		}
	}
	return guardtest.File(rows, guardtest.Column{Name: "a", Type: format.ByteArray, Codec: codec, Pages: pages})
}

// TestCheckLimits checks files that need a limit at exactly some value:
// they pass at that value and fail one below.
func TestCheckLimits(t *testing.T) {
	plain := guardtest.DataPage(format.Gzip, format.Plain, 100, guardtest.Plain(values(100)...)) // 1000 bytes, 100 values of 6
	var lengths []int32
	for range 100 {
		lengths = append(lengths, 6)
	}
	dlba := append(guardtest.Delta(lengths...), bytes.Join(values(100), nil)...)
	// values(100) as prefixes of "d/" and suffixes of 4 bytes: 600 bytes
	// decoded from about 450.
	prefixes := make([]int32, 100)
	suffixes := make([]int32, 100)
	for i := range prefixes {
		prefixes[i], suffixes[i] = 2, 4
	}
	prefixes[0], suffixes[0] = 0, 6
	dba := append(guardtest.Delta(prefixes...), guardtest.Delta(suffixes...)...)
	for i, v := range values(100) {
		dba = append(dba, v[min(i, 1)*2:]...)
	}
	// A dictionary of one entry of 10 bytes, referred to 100 times.
	dict := guardtest.DictionaryPage(format.Gzip, 1, guardtest.Plain([]byte("data/00000")))
	indexes := guardtest.DataPage(format.Gzip, format.RLEDictionary, 100, append(binary.AppendUvarint([]byte{1}, 100<<1), 0))
	stats := guardtest.DataPage(format.Gzip, format.Plain, 100, guardtest.Plain(values(100)...))
	stats.Header.DataPageHeader.V.Statistics.MaxValue = make([]byte, 5000)
	statsHeader := len(guardtest.Marshal(&stats.Header))
	file := column(format.Gzip, plain)
	footer := int(file[len(file)-8]) | int(file[len(file)-7])<<8

	for _, tc := range []struct {
		name  string
		file  []byte
		limit func(*parquetguard.Limits, int)
		at    int
	}{
		{"page size", file, func(l *parquetguard.Limits, v int) { l.MaxPageSize = v }, 1000},
		{"page values", file, func(l *parquetguard.Limits, v int) { l.MaxPageValues = v }, 100},
		{"PLAIN value size", file, func(l *parquetguard.Limits, v int) { l.MaxValueSize = v }, 6},
		{"DELTA_LENGTH_BYTE_ARRAY value size", column(format.Gzip, guardtest.DataPage(format.Gzip, format.DeltaLengthByteArray, 100, dlba)),
			func(l *parquetguard.Limits, v int) { l.MaxValueSize = v }, 6},
		{"DELTA_BYTE_ARRAY value size", column(format.Gzip, guardtest.DataPage(format.Gzip, format.DeltaByteArray, 100, dba)),
			func(l *parquetguard.Limits, v int) { l.MaxValueSize = v }, 6},
		{"DELTA_BYTE_ARRAY bytes decoded", column(format.Gzip, guardtest.DataPage(format.Gzip, format.DeltaByteArray, 100, dba)),
			func(l *parquetguard.Limits, v int) { l.MaxPageSize = v }, 600},
		{"dictionary value size", column(format.Gzip, dict, indexes), func(l *parquetguard.Limits, v int) { l.MaxValueSize = v }, 10},
		{"dictionary bytes referred to", column(format.Gzip, dict, indexes), func(l *parquetguard.Limits, v int) { l.MaxPageSize = v }, 1000},
		{"footer size", file, func(l *parquetguard.Limits, v int) { l.MaxFooterSize = v }, footer},
		{"page header size", column(format.Gzip, stats), func(l *parquetguard.Limits, v int) { l.MaxPageHeaderSize = v }, statsHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []int{tc.at, tc.at - 1} {
				var lim parquetguard.Limits
				tc.limit(&lim, v)
				err := parquetguard.Check(bytes.NewReader(tc.file), int64(len(tc.file)), lim)
				if (err == nil) != (v == tc.at) {
					t.Errorf("limit %d: %v", v, err)
				}
			}
		})
	}
}

// TestCheckUncompressesExactly checks a page of every codec whose header
// claims one byte less, or more, than it uncompresses to: it is refused.
func TestCheckUncompressesExactly(t *testing.T) {
	data := bytes.Repeat(guardtest.Plain([]byte("d/0000")), 100) // compresses well, for LZ4_RAW
	for _, codec := range []format.CompressionCodec{format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw} {
		for _, delta := range []int32{-1, 0, 1} {
			page := guardtest.DataPage(codec, format.Plain, 100, data)
			page.Header.UncompressedPageSize += delta
			file := column(codec, page)
			err := parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{})
			if (err == nil) != (delta == 0) {
				t.Errorf("%v, size %+d: %v", codec, delta, err)
			}
		}
	}
}

// failAt reads a file, and fails every read that covers byte off with err.
type failAt struct {
	r   *bytes.Reader
	off int64
	err error
}

func (f *failAt) ReadAt(p []byte, off int64) (int, error) {
	if off <= f.off && f.off < off+int64(len(p)) {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// TestCheckKeepsIOCause fails the reads of the footer, of a page header and
// of a page: the error wraps the reader's.
func TestCheckKeepsIOCause(t *testing.T) {
	file := column(format.Gzip, guardtest.DataPage(format.Gzip, format.Plain, 100, guardtest.Plain(values(100)...)))
	for _, off := range []int64{int64(len(file)) - 20, 5, 40} {
		err := parquetguard.Check(&failAt{bytes.NewReader(file), off, context.Canceled}, int64(len(file)), parquetguard.Limits{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read failing at %d: %v", off, err)
		}
	}
}

// TestCheckNamedColumns checks that only the pages of the named columns
// are read: another column's hostile page does not fail the file.
func TestCheckNamedColumns(t *testing.T) {
	bomb := guardtest.DataPage(format.Gzip, format.Plain, 1, guardtest.Plain([]byte("x")))
	bomb.Header.UncompressedPageSize = 1 << 30
	file := guardtest.File(1,
		guardtest.Column{Name: "a", Type: format.ByteArray, Pages: []guardtest.Page{guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("x")))}},
		guardtest.Column{Name: "b", Type: format.ByteArray, Codec: format.Gzip, Pages: []guardtest.Page{bomb}})
	if err := parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{}, "a"); err != nil {
		t.Error(err)
	}
	for _, cols := range [][]string{nil, {"b"}, {"a", "b"}} {
		if err := parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{}, cols...); err == nil {
			t.Errorf("columns %q: no error", cols)
		}
	}
}

// readBound is what reading a file Check accepted may allocate in a fuzz
// target (whose files are small): the readers' tests measure the peak.
const readBound = 512 << 20

// readAll reads every value of every column with parquet-go, as the
// readers do, turning a panic into an error.
func readAll(data []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	values := make([]parquet.Value, 256)
	for _, rg := range f.RowGroups() {
		for _, chunk := range rg.ColumnChunks() {
			pages := chunk.Pages()
			for {
				page, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					pages.Close()
					return err
				}
				vr := page.Values()
				for {
					n, err := vr.ReadValues(values)
					if err != nil || n == 0 {
						break
					}
				}
				parquet.Release(page)
			}
			pages.Close()
		}
	}
	return nil
}

// checkThenRead is the property of the fuzz targets: Check never panics,
// and a file it accepts costs parquet-go at most readBound.
func checkThenRead(t *testing.T, data []byte) {
	if err := parquetguard.Check(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}); err != nil {
		return
	}
	alloc, _ := guardtest.Allocated(func() error { return readAll(data) })
	if alloc > readBound {
		t.Fatalf("reading a %d-byte file Check accepted allocated %d MiB", len(data), alloc>>20)
	}
}

// FuzzCheck feeds arbitrary bytes, from files parquet-go writes with every
// codec and the hostile files of guardtest.
func FuzzCheck(f *testing.F) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, codec := range guardtest.Codecs {
		for _, version := range []int{1, 2} {
			var buf bytes.Buffer
			if err := parquet.Write(&buf, randomRows(r, 3), parquet.Compression(codec), parquet.DataPageVersion(version)); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	for _, data := range guardtest.HostileSeeds("a", "b") {
		f.Add(data)
	}
	f.Fuzz(checkThenRead)
}

// FuzzCheckPages builds files from fuzzed page headers and payloads,
// compressed or not, with every codec.
func FuzzCheckPages(f *testing.F) {
	for _, s := range guardtest.FuzzSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		checkThenRead(t, guardtest.Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File("a"))
	})
}

// TestFuzzSeedsAreValid checks that the structured seeds are valid files,
// read as written, so that fuzzing starts from the inside.
func TestFuzzSeedsAreValid(t *testing.T) {
	for _, s := range guardtest.FuzzSeeds() {
		data := s.File("a")
		err := parquetguard.Check(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{})
		if format.CompressionCodec(s.Codec) == format.Lz4Raw && errors.Is(err, parquetguard.ErrUnsupportedCodec) {
			continue // a small page does not compress 3:1
		}
		if err != nil {
			t.Errorf("%+v: %v", s, err)
			continue
		}
		type row struct {
			A *string `parquet:"a,optional"`
		}
		rows, err := parquet.Read[row](bytes.NewReader(data), int64(len(data)))
		var got []string
		for _, r := range rows {
			if r.A != nil {
				got = append(got, *r.A)
			}
		}
		if err != nil || !slices.Equal(got, []string{"data/a", "data/b", "data/cc"}) {
			t.Errorf("%+v: read %q: %v", s, got, err)
		}
	}
}

// TestOpen: Open opens what parquet-go writes, with the rows it wrote, and
// refuses what Check refuses, before parquet-go reads it: a footer of a
// list of 2^28 schema elements in 9 bytes.
func TestOpen(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(2, 2)), 300)
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	f, err := parquetguard.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), parquetguard.Limits{})
	if err != nil || f.NumRows() != int64(len(rows)) {
		t.Fatalf("Open: %v", err)
	}
	hostile := []byte("PAR1\x15\x02\x19\xfc\x80\x80\x80\x80\x01\x09\x00\x00\x00PAR1")
	if _, err := parquetguard.Open(bytes.NewReader(hostile), int64(len(hostile)), parquetguard.Limits{}); err == nil {
		t.Fatal("Open accepted a footer of 2^28 schema elements")
	}
}

// TestOpenFooter: OpenFooter opens what parquet-go writes, with the rows
// it wrote, and a file whose pages Check refuses, which it does not read;
// it refuses, as Open and Check do, the footers Check refuses: 2^28 schema
// elements in 9 bytes, a row group without a chunk for each column.
func TestOpenFooter(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(2, 2)), 300)
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	f, err := parquetguard.OpenFooter(bytes.NewReader(buf.Bytes()), int64(buf.Len()), parquetguard.Limits{})
	if err != nil || f.NumRows() != int64(len(rows)) {
		t.Fatalf("OpenFooter: %v", err)
	}
	bomb := guardtest.DataPage(format.Gzip, format.Plain, 1, guardtest.Plain([]byte("x")))
	bomb.Header.UncompressedPageSize = 1 << 30
	pages := column(format.Gzip, bomb)
	if _, err := parquetguard.OpenFooter(bytes.NewReader(pages), int64(len(pages)), parquetguard.Limits{}); err != nil {
		t.Errorf("OpenFooter of a file of a bad page: %v", err)
	}
	if _, err := parquetguard.Open(bytes.NewReader(pages), int64(len(pages)), parquetguard.Limits{}); err == nil {
		t.Error("Open accepted a page that claims 1 GiB")
	}
	data, md := guardtest.Layout(1,
		guardtest.Column{Name: "a", Type: format.ByteArray, Pages: []guardtest.Page{guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("x")))}},
		guardtest.Column{Name: "b", Type: format.ByteArray, Pages: []guardtest.Page{guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("y")))}})
	md.RowGroups[0].Columns = md.RowGroups[0].Columns[:1]
	for name, file := range map[string][]byte{
		"2^28 schema elements":  []byte("PAR1\x15\x02\x19\xfc\x80\x80\x80\x80\x01\x09\x00\x00\x00PAR1"),
		"a chunk for 2 columns": guardtest.WithFooter(data, guardtest.Marshal(md)),
	} {
		_, err := parquetguard.OpenFooter(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{})
		_, oerr := parquetguard.Open(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{})
		cerr := parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{})
		if err == nil || oerr == nil || cerr == nil || err.Error() != cerr.Error() || oerr.Error() != cerr.Error() {
			t.Errorf("%s: OpenFooter %v; Open %v; Check %v; want the same refusal", name, err, oerr, cerr)
		}
	}
}
