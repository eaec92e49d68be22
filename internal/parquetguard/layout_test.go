package parquetguard_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// withCRC returns p with the CRC-32 of its stored bytes in its header.
func withCRC(p guardtest.Page) guardtest.Page {
	p.Header.CRC = int32(crc32.ChecksumIEEE(p.Data))
	return p
}

// plainV2 returns a v2 data page of the PLAIN values vs of a required
// column, stored as levels (bytes of levels its header claims, 2 of
// repetition and the rest of definition, which parquet-go skips for such a
// column) followed by the values compressed with codec.
func plainV2(codec format.CompressionCodec, levels []byte, vs ...[]byte) guardtest.Page {
	plain := guardtest.Plain(vs...)
	n := int32(len(vs))
	p := guardtest.Page{Header: format.PageHeader{Type: format.DataPageV2}}
	p.Data = append(slices.Clone(levels), guardtest.Compress(codec, plain)...)
	p.Header.CompressedPageSize = int32(len(p.Data))
	p.Header.UncompressedPageSize = int32(len(levels) + len(plain))
	rep := min(2, len(levels))
	p.Header.DataPageHeaderV2.Valid = true
	p.Header.DataPageHeaderV2.V = format.DataPageHeaderV2{NumValues: n, NumRows: n, Encoding: format.Plain,
		RepetitionLevelsByteLength: int32(rep), DefinitionLevelsByteLength: int32(len(levels) - rep)}
	return p
}

// layoutValues are the values of column a in the files of dictPages and
// plainPages.
var layoutValues = []string{"data/b", "data/a", "data/c", "data/b", "data/d", "data/e", "data/f", "data/g"}

// dictPages returns the pages of column a holding layoutValues, compressed
// with codec, each with its CRC: a dictionary, a page of indexes into it,
// a PLAIN v1 page and a PLAIN v2 page.
func dictPages(codec format.CompressionCodec) []guardtest.Page {
	return []guardtest.Page{
		withCRC(guardtest.DictionaryPage(codec, 3, guardtest.Plain([]byte("data/a"), []byte("data/b"), []byte("data/c")))),
		// 2-bit indexes, one bit-packed group of 8: 1 0 2 1.
		withCRC(guardtest.DataPage(codec, format.RLEDictionary, 4, []byte{2, 1<<1 | 1, 1 | 0<<2 | 2<<4 | 1<<6, 0})),
		withCRC(guardtest.DataPage(codec, format.Plain, 2, guardtest.Plain([]byte("data/d"), []byte("data/e")))),
		withCRC(plainV2(codec, nil, []byte("data/f"), []byte("data/g"))),
	}
}

// plainPages returns the pages of column a holding layoutValues as PLAIN
// values only, compressed with codec, each with its CRC: v1, v2 with 5
// bytes of levels, v1.
func plainPages(codec format.CompressionCodec) []guardtest.Page {
	vs := make([][]byte, len(layoutValues))
	for i, v := range layoutValues {
		vs[i] = []byte(v)
	}
	return []guardtest.Page{
		withCRC(guardtest.DataPage(codec, format.Plain, 3, guardtest.Plain(vs[:3]...))),
		withCRC(plainV2(codec, []byte{4, 0, 2, 1, 0}, vs[3:5]...)),
		withCRC(guardtest.DataPage(codec, format.Plain, 3, guardtest.Plain(vs[5:]...))),
	}
}

// datePages returns the pages of an INT64 column b of 8 values: a
// dictionary and a page of indexes into it, each with its CRC.
func datePages(codec format.CompressionCodec) []guardtest.Page {
	return []guardtest.Page{
		withCRC(guardtest.DictionaryPage(codec, 2, []byte{0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0, 0, 0x94, 0x35, 0x77, 0, 0, 0, 0})),
		// 1-bit indexes, one bit-packed group of 8.
		withCRC(guardtest.DataPage(codec, format.RLEDictionary, 8, []byte{1, 1<<1 | 1, 0b10101010})),
	}
}

// layoutFile returns a file of one row group of layoutValues: column a of
// pages a, and when b is not nil an INT64 column b of pages b, compressed
// with codec. edit, unless nil, sets the offsets of each chunk, given its
// pages, where they start (at[i]) and where the chunk ends (at[len(pages)]);
// guardtest starts a chunk at its data_page_offset, without a
// dictionary_page_offset.
func layoutFile(codec format.CompressionCodec, a, b []guardtest.Page, edit func(md *format.ColumnMetaData, pages []guardtest.Page, at []int64)) []byte {
	cols := []guardtest.Column{{Name: "a", Type: format.ByteArray, String: true, Codec: codec, Pages: a}}
	if b != nil {
		cols = append(cols, guardtest.Column{Name: "b", Type: format.Int64, Codec: codec, Pages: b})
	}
	data, md := guardtest.Layout(int64(len(layoutValues)), cols...)
	for i, c := range cols {
		chunk := &md.RowGroups[0].Columns[i].MetaData
		at := []int64{chunk.DataPageOffset}
		for _, p := range c.Pages {
			at = append(at, at[len(at)-1]+int64(len(guardtest.Marshal(&p.Header))+len(p.Data)))
		}
		if edit != nil {
			edit(chunk, c.Pages, at)
		}
	}
	return guardtest.WithFooter(data, guardtest.Marshal(md))
}

// dictOffset, an edit of layoutFile, gives a chunk whose first page is a
// dictionary the layout parquet-go and Arrow write: the dictionary at its
// dictionary_page_offset, its data pages from its data_page_offset.
func dictOffset(md *format.ColumnMetaData, pages []guardtest.Page, at []int64) {
	if pages[0].Header.Type == format.DictionaryPage {
		md.DictionaryPageOffset, md.DataPageOffset = at[0], at[1]
	}
}

// guarded is what Check, Open and ReadPlain make of column a of a file
// (guardA).
type guarded struct {
	check, open, plain error
	// handed are the values ReadPlain handed over.
	handed []string
}

func guardA(t *testing.T, data []byte, lim parquetguard.Limits) guarded {
	t.Helper()
	var g guarded
	g.check = parquetguard.Check(bytes.NewReader(data), int64(len(data)), lim, "a")
	_, g.open = parquetguard.Open(bytes.NewReader(data), int64(len(data)), lim, "a")
	g.handed, _, g.plain = readPlainGroups(t, data, lim)
	return g
}

// rowReader are the limits of a caller that reads rows with parquet-go's
// row reader (package uncommitted): the layout it needs is checked.
var rowReader = parquetguard.Limits{RowReaderLayout: true}

// refused fails t unless Check, Open and ReadPlain, with RowReaderLayout
// set, all refuse column a of data with an error naming why, ReadPlain not with ErrNotPlain (which
// would ask for parquet-go's reading) and having handed over exactly the
// first handed of layoutValues.
func refused(t *testing.T, data []byte, why string, handed int) {
	t.Helper()
	g := guardA(t, data, rowReader)
	for _, err := range []error{g.check, g.open, g.plain} {
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Check %v; Open %v; ReadPlain %v; want each to name %q", g.check, g.open, g.plain, why)
			break
		}
	}
	if errors.Is(g.plain, parquetguard.ErrNotPlain) || !slices.Equal(g.handed, layoutValues[:handed]) {
		t.Errorf("ReadPlain handed over %q: %v; want %q and an error that is not ErrNotPlain", g.handed, g.plain, layoutValues[:handed])
	}
}

// TestDictionaryLayout: a chunk whose footer gives a dictionary_page_offset
// other than 0 and its data_page_offset must start, there, with a dictionary
// page that ends at its data_page_offset: parquet-go's row reader seeks the
// chunk to its data_page_offset and loads the dictionary apart, and would
// skip the pages before unread, or read from the middle of one. Check,
// Open and ReadPlain refuse every other layout, ReadPlain before it hands
// over any page of the chunk (of PLAIN values too, where the first page is
// not a dictionary); they accept the chunks that start at their
// data_page_offset, with no dictionary_page_offset or the same, and
// parquet-go reads them as written. That is with Limits.RowReaderLayout
// set; without it, the layout is not checked: each file is refused only
// for what the walk from dictionary_page_offset finds (pagesWhy), and
// where the walk covers every page, parquet-go's page reader, which reads
// in order from there as package inventory and parquetio do, reads the
// values as written (DuckDB's layout before 0.10.1 among them).
func TestDictionaryLayout(t *testing.T) {
	const codec = format.Uncompressed
	empty := withCRC(guardtest.DataPage(codec, format.Plain, 0, nil))
	damaged := empty
	damaged.Header.CRC ^= 0x10
	// offsets puts the chunk's dictionary_page_offset at page dict (none if
	// -1) and its data_page_offset at page data.
	offsets := func(dict, data int) func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
		return func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset = 0, at[data]
			if dict >= 0 {
				md.DictionaryPageOffset = at[dict]
			}
		}
	}
	for _, tc := range []struct {
		name  string
		pages []guardtest.Page
		edit  func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64)
		// why the file is refused, empty if it is not.
		why string
		// pagesWhy is why, without RowReaderLayout: empty if accepted,
		// "-" if also accepted but with pages left out of the walk.
		pagesWhy string
	}{
		{"dictionary page, then data pages from data_page_offset", dictPages(codec), offsets(0, 1), "", ""},
		{"dictionary page at data_page_offset, no dictionary_page_offset", dictPages(codec), offsets(-1, 0), "", ""},
		{"dictionary page at data_page_offset, dictionary_page_offset the same", dictPages(codec), offsets(0, 0), "", ""},
		{"PLAIN pages, no dictionary_page_offset", plainPages(codec), offsets(-1, 0), "", ""},
		{"PLAIN pages, dictionary_page_offset at data_page_offset", plainPages(codec), offsets(0, 0), "", ""},

		{"an empty data page between the dictionary and data_page_offset", slices.Insert(dictPages(codec), 1, empty), offsets(0, 2),
			"data pages at data_page_offset", ""},
		{"a damaged empty page between the dictionary and data_page_offset", slices.Insert(dictPages(codec), 1, damaged), offsets(0, 2),
			"data pages at data_page_offset", "crc32 checksum mismatch"},
		{"an empty data page at dictionary_page_offset, before the dictionary", slices.Insert(dictPages(codec), 0, empty), offsets(0, 2),
			"DATA_PAGE page at the chunk's dictionary_page_offset", ""},
		{"data_page_offset at the second data page", dictPages(codec), offsets(0, 2), "data pages at data_page_offset", ""},
		// As DuckDB before 0.10.1 wrote them (duckdb/duckdb#10829).
		{"data_page_offset short of the dictionary page by its header", dictPages(codec), func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset = at[0], at[0]+int64(len(dictPages(codec)[0].Data))
		}, "data pages at data_page_offset", ""},
		{"data_page_offset inside the first data page", dictPages(codec), func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset = at[0], at[1]+1
		}, "data pages at data_page_offset", ""},
		{"data_page_offset before dictionary_page_offset", dictPages(codec), func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset = at[0], at[0]-1
		}, "data pages at data_page_offset", ""},
		{"no bytes, dictionary_page_offset apart from data_page_offset", plainPages(codec), func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset, md.TotalCompressedSize = at[0], at[1], 0
		}, "dictionary page at the chunk's dictionary_page_offset", "-"},
		{"PLAIN pages, dictionary_page_offset at the first, data_page_offset at the second", plainPages(codec), offsets(0, 1),
			"DATA_PAGE page at the chunk's dictionary_page_offset", ""},
		{"PLAIN pages, dictionary_page_offset at the second, data_page_offset at the first", plainPages(codec), func(md *format.ColumnMetaData, _ []guardtest.Page, at []int64) {
			md.DictionaryPageOffset, md.DataPageOffset, md.TotalCompressedSize = at[1], at[0], at[len(at)-1]-at[1]
		}, "DATA_PAGE_V2 page at the chunk's dictionary_page_offset", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := layoutFile(codec, tc.pages, nil, tc.edit)
			pages := guardA(t, data, parquetguard.Limits{})
			if tc.pagesWhy == "" || tc.pagesWhy == "-" {
				if pages.check != nil || pages.open != nil || (pages.plain != nil && !errors.Is(pages.plain, parquetguard.ErrNotPlain)) {
					t.Errorf("without RowReaderLayout: Check %v; Open %v; ReadPlain %v", pages.check, pages.open, pages.plain)
				}
				if got, err := parquetGoValues(data); tc.pagesWhy == "" && (err != nil || !slices.Equal(got, layoutValues)) {
					t.Errorf("parquet-go's page reader reads %q, %v; want %q", got, err, layoutValues)
				}
			} else {
				// ReadPlain stops at a dictionary page before (ErrNotPlain).
				for i, err := range []error{pages.check, pages.open, pages.plain} {
					if i == 2 && errors.Is(err, parquetguard.ErrNotPlain) {
						continue
					}
					if err == nil || !strings.Contains(err.Error(), tc.pagesWhy) {
						t.Errorf("without RowReaderLayout: Check %v; Open %v; ReadPlain %v; want each to name %q", pages.check, pages.open, pages.plain, tc.pagesWhy)
						break
					}
				}
			}
			if tc.why != "" {
				refused(t, data, tc.why, 0)
				return
			}
			g := guardA(t, data, rowReader)
			if g.check != nil || g.open != nil {
				t.Fatalf("Check %v; Open %v", g.check, g.open)
			}
			if got, err := parquetGoValues(data); err != nil || !slices.Equal(got, layoutValues) {
				t.Errorf("parquet-go reads %q, %v; want %q", got, err, layoutValues)
			}
			switch tc.pages[0].Header.Type {
			case format.DictionaryPage:
				if !errors.Is(g.plain, parquetguard.ErrNotPlain) || len(g.handed) != 0 {
					t.Errorf("ReadPlain handed over %q: %v; want nothing and ErrNotPlain", g.handed, g.plain)
				}
			default:
				if g.plain != nil || !slices.Equal(g.handed, layoutValues) {
					t.Errorf("ReadPlain handed over %q: %v; want %q", g.handed, g.plain, layoutValues)
				}
			}
		})
	}
}

// editFooter returns data with its footer decoded, edited and encoded
// again.
func editFooter(t *testing.T, data []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[len(data)-8-n:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	edit(&md)
	return guardtest.WithFooter(data[:len(data)-8-n], guardtest.Marshal(&md))
}

// pageEnd returns where the page at offset at of data ends.
func pageEnd(t *testing.T, data []byte, at int64) int64 {
	t.Helper()
	var h format.PageHeader
	pr := new(thrift.CompactProtocol).NewReaderFromBytes(data[at:])
	if err := thrift.NewDecoder(pr).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return at + int64(pr.BytesRead()) + int64(h.CompressedPageSize)
}

// TestReadPlainLayoutOfALaterRowGroup: in a file of PLAIN values in three
// row groups of several pages, as parquet-go writes them, the second row
// group's chunk given a dictionary_page_offset at its first page and a
// data_page_offset at its second: ReadPlain hands over the first row
// group's values, as it documents for any page it refuses, and none of the
// second's.
func TestReadPlainLayoutOfALaterRowGroup(t *testing.T) {
	rows := make([]plainRow, 60)
	for i := range rows {
		rows[i] = plainRow{A: fmt.Sprintf("data/%02d", i)}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[plainRow](&buf, parquet.Compression(&parquet.Uncompressed), parquet.MaxRowsPerRowGroup(20), parquet.PageBufferSize(64))
	for i := range rows {
		// A row at a time: pages of a few rows.
		if _, err := w.Write(rows[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if _, _, err := readPlainGroups(t, data, rowReader); err != nil {
		t.Fatal(err)
	}
	data = editFooter(t, data, func(md *format.FileMetaData) {
		if len(md.RowGroups) != 3 {
			t.Fatalf("%d row groups", len(md.RowGroups))
		}
		chunk := &md.RowGroups[1].Columns[0].MetaData
		if chunk.DictionaryPageOffset != 0 {
			t.Fatal("a dictionary")
		}
		chunk.DictionaryPageOffset = chunk.DataPageOffset
		chunk.DataPageOffset = pageEnd(t, data, chunk.DataPageOffset)
		if chunk.DataPageOffset >= chunk.DictionaryPageOffset+chunk.TotalCompressedSize {
			t.Fatal("a chunk of one page")
		}
	})
	got, _, err := readPlainGroups(t, data, rowReader)
	want := make([]string, 20)
	for i := range want {
		want[i] = rows[i].A
	}
	if err == nil || errors.Is(err, parquetguard.ErrNotPlain) || !strings.Contains(err.Error(), "row group 1") || !slices.Equal(got, want) {
		t.Fatalf("ReadPlain handed over %q: %v; want %q and row group 1 refused", got, err, want)
	}
}

// TestPageCRC gives each page of a file in turn a CRC its stored bytes do
// not match: every kind of page (a dictionary, indexes into it, PLAIN v1
// and v2) of a BYTE_ARRAY column a and an INT64 column b, the dictionary
// at the chunk's dictionary_page_offset (the page parquet-go's row reader
// loads apart, without checking its CRC) or not, uncompressed or not.
// Check refuses the file, naming the mismatch, when it reads the page's
// column, and accepts it when it does not; the files with honest CRCs, or
// none, are accepted, by Open too, and parquet-go reads them. (Open
// refuses what Check refuses: TestDictionaryLayout.)
func TestPageCRC(t *testing.T) {
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Zstd} {
		// Each case clones the pages' headers, not their bytes.
		a, b := dictPages(codec), datePages(codec)
		for _, atOffset := range []bool{true, false} {
			name := fmt.Sprintf("%v/dictionary_page_offset=%v", codec, atOffset)
			file := func(a, b []guardtest.Page) []byte {
				if !atOffset {
					return layoutFile(codec, a, b, nil)
				}
				return layoutFile(codec, a, b, dictOffset)
			}
			check := func(data []byte, columns ...string) error {
				return parquetguard.Check(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}, columns...)
			}
			for _, crc := range []bool{true, false} {
				cols := [][]guardtest.Page{slices.Clone(a), slices.Clone(b)}
				for _, pages := range cols {
					for i := range pages {
						if !crc {
							pages[i].Header.CRC = 0
						}
					}
				}
				data := file(cols[0], cols[1])
				_, oerr := parquetguard.Open(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{})
				if err := check(data); err != nil || oerr != nil {
					t.Errorf("%s, CRCs %v: Check %v; Open %v", name, crc, err, oerr)
				}
				if got, err := parquetGoValues(data); err != nil || !slices.Equal(got, layoutValues) {
					t.Errorf("%s, CRCs %v: parquet-go reads %q, %v", name, crc, got, err)
				}
			}
			for col, column := range []string{"a", "b"} {
				for page := range [][]guardtest.Page{a, b}[col] {
					cols := [][]guardtest.Page{slices.Clone(a), slices.Clone(b)}
					cols[col][page].Header.CRC ^= 0x10
					data := file(cols[0], cols[1])
					for _, columns := range [][]string{nil, {column}} {
						if err := check(data, columns...); err == nil || !strings.Contains(err.Error(), "crc32 checksum mismatch") {
							t.Errorf("%s, column %s, page %d, columns %q: Check %v; want a CRC mismatch", name, column, page, columns, err)
						}
					}
					other := []string{"b", "a"}[col]
					if err := check(data, other); err != nil {
						t.Errorf("%s, column %s, page %d: Check of column %s: %v", name, column, page, other, err)
					}
				}
			}
		}
	}
}

// TestReadPlainCRC alters one stored byte of each page of PLAIN values in
// turn (a value, or a level byte of a v2 page, which its CRC covers too),
// compressed or not: ReadPlain hands over the values of the pages before
// it, then refuses the file, naming the CRC mismatch, not as ErrNotPlain.
func TestReadPlainCRC(t *testing.T) {
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Snappy, format.Gzip, format.Zstd} {
		pages := plainPages(codec)
		got, err := readPlain(t, layoutFile(codec, pages, nil, nil))
		if err != nil || !slices.Equal(got, layoutValues) {
			t.Fatalf("%v: ReadPlain handed over %q: %v", codec, got, err)
		}
		before := 0
		for page := range pages {
			offsets := []int{len(pages[page].Data) - 1}
			if pages[page].Header.Type == format.DataPageV2 {
				offsets = append(offsets, 1) // a repetition level byte
			}
			for _, at := range offsets {
				bad := slices.Clone(pages)
				bad[page].Data = slices.Clone(bad[page].Data)
				bad[page].Data[at] ^= 0x01
				t.Run(fmt.Sprintf("%v/page %d/byte %d", codec, page, at), func(t *testing.T) {
					refused(t, layoutFile(codec, bad, nil, nil), "crc32 checksum mismatch", before)
				})
			}
			if v2 := pages[page].Header.DataPageHeaderV2; v2.Valid {
				before += int(v2.V.NumValues)
			} else {
				before += int(pages[page].Header.DataPageHeader.V.NumValues)
			}
		}
	}
}

// TestDamagedDictionary alters a value in the dictionary of a file
// parquet-go writes (dictionary values, three row groups, uncompressed,
// each page with its CRC), in each row group in turn: the case
// FuzzAddresses found in package uncommitted, where parquet-go's row
// reader yielded the altered value (it loads the dictionary page apart,
// without its CRC). Check and Open refuse the file, naming the CRC; the
// intact file is accepted.
func TestDamagedDictionary(t *testing.T) {
	type dictRow struct {
		A string `parquet:"a,dict"`
	}
	var rows []dictRow
	for g := range 3 {
		for i := range 50 {
			rows = append(rows, dictRow{A: fmt.Sprintf("data/g%d-%02d", g, i%7)})
		}
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Uncompressed), parquet.MaxRowsPerRowGroup(50)); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	if err := parquetguard.Check(bytes.NewReader(file), int64(len(file)), parquetguard.Limits{}); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	for g, rg := range f.Metadata().RowGroups {
		md := rg.Columns[0].MetaData
		if md.DictionaryPageOffset == 0 || md.DictionaryPageOffset == md.DataPageOffset {
			t.Fatalf("row group %d: dictionary at %d, data pages at %d: not the layout under test", g, md.DictionaryPageOffset, md.DataPageOffset)
		}
		damaged := slices.Clone(file)
		dict := damaged[md.DictionaryPageOffset:md.DataPageOffset]
		at := bytes.Index(dict, fmt.Appendf(nil, "data/g%d-03", g))
		if at < 0 {
			t.Fatalf("row group %d: no value in its dictionary page", g)
		}
		dict[at+5] = 'x' // data/x…: another valid-looking value
		err := parquetguard.Check(bytes.NewReader(damaged), int64(len(damaged)), parquetguard.Limits{}, "a")
		_, oerr := parquetguard.Open(bytes.NewReader(damaged), int64(len(damaged)), parquetguard.Limits{}, "a")
		if !strings.Contains(fmt.Sprint(err), "crc32 checksum mismatch") || !strings.Contains(fmt.Sprint(oerr), "crc32 checksum mismatch") {
			t.Errorf("row group %d: Check %v; Open %v; want a CRC mismatch", g, err, oerr)
		}
	}
}

// TestChunkOutsideFile: a chunk whose footer puts its pages outside the
// file's (its dictionary_page_offset negative, in the leading magic bytes,
// in the footer, past the file's end; a negative size) is refused by
// Check, Open and ReadPlain, without a panic and before any page.
func TestChunkOutsideFile(t *testing.T) {
	file := layoutFile(format.Uncompressed, plainPages(format.Uncompressed), nil, nil)
	size := int64(len(file))
	for name, edit := range map[string]func(md *format.ColumnMetaData){
		"negative":         func(md *format.ColumnMetaData) { md.DictionaryPageOffset = -14 },
		"in the magic":     func(md *format.ColumnMetaData) { md.DictionaryPageOffset = 1 },
		"in the magic, 2":  func(md *format.ColumnMetaData) { md.DictionaryPageOffset = 2 },
		"in the footer":    func(md *format.ColumnMetaData) { md.DictionaryPageOffset = size - 20 },
		"past the end":     func(md *format.ColumnMetaData) { md.DictionaryPageOffset = size + 100 },
		"far past the end": func(md *format.ColumnMetaData) { md.DictionaryPageOffset = 1 << 62 },
		"negative size": func(md *format.ColumnMetaData) {
			md.DictionaryPageOffset = 4
			md.TotalCompressedSize = -1
		},
	} {
		t.Run(name, func(t *testing.T) {
			refused(t, editFooter(t, file, func(md *format.FileMetaData) { edit(&md.RowGroups[0].Columns[0].MetaData) }), "outside the file", 0)
		})
	}
}

// TestFoundByFuzzAddresses: the files FuzzAddresses found in package
// uncommitted, seeds of FuzzCheck here, are refused by Check: a dictionary
// page that does not match its CRC, at a dictionary_page_offset apart
// from its data pages (which parquet-go's row reader read, altered); a
// dictionary_page_offset before the file's start.
func TestFoundByFuzzAddresses(t *testing.T) {
	for name, why := range map[string]string{
		"cfb614e5025a9f1d": "crc32 checksum mismatch",
		"4105036f81965552": "outside the file",
	} {
		data, err := guardtest.FuzzInput("testdata/fuzz/FuzzCheck/" + name)
		if err != nil {
			t.Fatal(err)
		}
		err = parquetguard.Check(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{})
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error naming %q", name, err, why)
		}
	}
}
