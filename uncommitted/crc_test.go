package uncommitted_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
)

// crcAddresses are the addresses of crcColumns' rows.
var crcAddresses = []string{"data/b", "data/a", "data/c", "data/b", "data/d", "data/e", "data/f", "data/g"}

// crcColumns returns the pages of a file of the 8 rows of crcAddresses,
// compressed with codec, each page with the CRC of its stored bytes:
// physical_address as a dictionary, a page of indexes into it, a PLAIN v1
// page and a PLAIN v2 page; creation_date as a dictionary and a page of
// indexes.
func crcColumns(codec format.CompressionCodec) []guardtest.Column {
	addr := []guardtest.Page{
		guardtest.DictionaryPage(codec, 3, guardtest.Plain([]byte("data/a"), []byte("data/b"), []byte("data/c"))),
		// 2-bit indexes, one bit-packed group of 8: 1 0 2 1.
		guardtest.DataPage(codec, format.RLEDictionary, 4, []byte{2, 1<<1 | 1, 1 | 0<<2 | 2<<4 | 1<<6, 0}),
		guardtest.DataPage(codec, format.Plain, 2, guardtest.Plain([]byte("data/d"), []byte("data/e"))),
		dataPageV2(codec, guardtest.Plain([]byte("data/f"), []byte("data/g")), 2),
	}
	dates := []guardtest.Page{
		guardtest.DictionaryPage(codec, 2, []byte{0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0, 0, 0x94, 0x35, 0x77, 0, 0, 0, 0}),
		// 1-bit indexes, one bit-packed group of 8.
		guardtest.DataPage(codec, format.RLEDictionary, 8, []byte{1, 1<<1 | 1, 0b10101010}),
	}
	for _, pages := range [][]guardtest.Page{addr, dates} {
		for i := range pages {
			pages[i].Header.CRC = int32(crc32.ChecksumIEEE(pages[i].Data))
		}
	}
	return []guardtest.Column{
		{Name: "physical_address", Type: format.ByteArray, String: true, Codec: codec, Pages: addr},
		{Name: "creation_date", Type: format.Int64, Codec: codec, Pages: dates},
	}
}

// dataPageV2 returns a v2 data page of n PLAIN values, data, of a
// required column, compressed with codec.
func dataPageV2(codec format.CompressionCodec, data []byte, n int32) guardtest.Page {
	p := guardtest.DataPage(codec, format.Plain, n, data)
	p.Header.Type = format.DataPageV2
	p.Header.DataPageHeader.Valid = false
	p.Header.DataPageHeaderV2.Valid = true
	p.Header.DataPageHeaderV2.V = format.DataPageHeaderV2{NumValues: n, NumRows: n, Encoding: format.Plain}
	return p
}

// crcFile returns the file of cols. With dictOffset, a chunk whose first
// page is a dictionary has it at its dictionary_page_offset and its data
// pages at its data_page_offset, as parquet-go and Arrow write them;
// without, the chunk starts at its data_page_offset, as guardtest writes
// them (and parquet-go reads such a chunk from its start, page by page).
func crcFile(cols []guardtest.Column, dictOffset bool) []byte {
	pages, md := guardtest.Layout(int64(len(crcAddresses)), cols...)
	for i, c := range cols {
		chunk := &md.RowGroups[0].Columns[i].MetaData
		if dictOffset && c.Pages[0].Header.Type == format.DictionaryPage {
			chunk.DictionaryPageOffset = chunk.DataPageOffset
			chunk.DataPageOffset += int64(len(guardtest.Marshal(&c.Pages[0].Header)) + len(c.Pages[0].Data))
		}
	}
	return guardtest.WithFooter(pages, guardtest.Marshal(md))
}

// readCRC stores data as a run's only file and reads it with ReadRun
// (rows) and Addresses (addresses), as schemaBytes does.
func readCRC(t *testing.T, data []byte) (rows []string, rerr error, addresses []string, aerr error) {
	t.Helper()
	r := schemaBytes(t, data)
	return r.want, r.werr, r.got, r.err
}

// refusedForCRC reports whether err is the refusal of a page whose bytes
// do not match its CRC.
func refusedForCRC(err error) bool {
	return errors.Is(err, uncommitted.ErrInvalidFile) && strings.Contains(err.Error(), "crc32 checksum mismatch")
}

// TestPageCRC builds files whose pages each carry the CRC of their
// bytes, then gives one page at a time a CRC its bytes do not match:
// every kind of page (dictionary, dictionary indexes, PLAIN v1 and v2) of
// both columns, with the dictionary at the chunk's dictionary_page_offset
// (parquet-go's layout: its row reader reads that page apart) or not, and
// with and without compression. ReadRun refuses each such file with
// ErrInvalidFile, naming the CRC, and so does Addresses when the page is
// of physical_address; a bad creation_date page does not stop Addresses,
// which does not read that column: it yields every address. The files
// with honest CRCs, or none, are read whole by both.
func TestPageCRC(t *testing.T) {
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Gzip, format.Zstd} {
		for _, dictOffset := range []bool{true, false} {
			name := fmt.Sprintf("%v/dictionary_page_offset=%v", codec, dictOffset)
			t.Run(name+"/honest", func(t *testing.T) {
				for _, crc := range []bool{true, false} {
					cols := crcColumns(codec)
					for _, c := range cols {
						for i := range c.Pages {
							if !crc {
								c.Pages[i].Header.CRC = 0
							}
						}
					}
					rows, rerr, addresses, aerr := readCRC(t, crcFile(cols, dictOffset))
					if rerr != nil || aerr != nil || !slices.Equal(rows, crcAddresses) || !slices.Equal(addresses, crcAddresses) {
						t.Fatalf("CRCs %v: ReadRun %q, %v; Addresses %q, %v; want %q", crc, rows, rerr, addresses, aerr, crcAddresses)
					}
				}
			})
			for col, column := range []string{"physical_address", "creation_date"} {
				for page := range crcColumns(codec)[col].Pages {
					t.Run(fmt.Sprintf("%s/%s/page%d", name, column, page), func(t *testing.T) {
						cols := crcColumns(codec)
						cols[col].Pages[page].Header.CRC ^= 0x10
						rows, rerr, addresses, aerr := readCRC(t, crcFile(cols, dictOffset))
						if !refusedForCRC(rerr) {
							t.Errorf("ReadRun: %q, %v; want a CRC mismatch", rows, rerr)
						}
						switch {
						case column == "physical_address" && !refusedForCRC(aerr):
							t.Errorf("Addresses: %q, %v; want a CRC mismatch", addresses, aerr)
						case column == "creation_date" && (aerr != nil || !slices.Equal(addresses, crcAddresses)):
							t.Errorf("Addresses: %q, %v; want %q", addresses, aerr, crcAddresses)
						}
					})
				}
			}
		}
	}
}

// TestDamagedDictionary alters an address in the dictionary of a file
// parquet-go writes (dictionary-encoded addresses, several row groups,
// uncompressed, every page with its CRC), in each row group in turn: the
// case FuzzAddresses found, where ReadRun yielded the altered address
// (parquet-go's row reader reads the first row group's dictionary pages
// without their CRC, the later ones with it).
// Both readers refuse the file with ErrInvalidFile, naming the CRC, and
// yield no altered address; the intact file is read whole by both.
func TestDamagedDictionary(t *testing.T) {
	type dictRow struct {
		PhysicalAddress string `parquet:"physical_address,dict"`
		CreationDate    int64  `parquet:"creation_date"`
	}
	const groups, each = 3, 50
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[dictRow](&buf, parquet.Compression(&parquet.Uncompressed))
	var want []string
	for g := range groups {
		rows := make([]dictRow, each)
		for i := range rows {
			rows[i] = dictRow{PhysicalAddress: fmt.Sprintf("data/g%d-%02d", g, i%7), CreationDate: int64(1e9 + i)}
			want = append(want, rows[i].PhysicalAddress)
		}
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	got, rerr, addresses, aerr := readCRC(t, file)
	if rerr != nil || aerr != nil || !slices.Equal(got, want) || !slices.Equal(addresses, want) {
		t.Fatalf("intact: ReadRun %d rows, %v; Addresses %d, %v; want %d", len(got), rerr, len(addresses), aerr, len(want))
	}
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := f.Schema().Lookup("physical_address")
	for g, rg := range f.Metadata().RowGroups {
		md := rg.Columns[leaf.ColumnIndex].MetaData
		if md.DictionaryPageOffset == 0 || md.DictionaryPageOffset == md.DataPageOffset {
			t.Fatalf("row group %d: dictionary at %d, data pages at %d: not the layout under test", g, md.DictionaryPageOffset, md.DataPageOffset)
		}
		damaged := slices.Clone(file)
		dict := damaged[md.DictionaryPageOffset:md.DataPageOffset]
		at := bytes.Index(dict, fmt.Appendf(nil, "data/g%d-03", g))
		if at < 0 {
			t.Fatalf("row group %d: no address in its dictionary page", g)
		}
		dict[at+5] = 'x' // data/x…: an address of another object
		got, rerr, addresses, aerr := readCRC(t, damaged)
		for _, a := range append(got, addresses...) {
			if strings.HasPrefix(a, "data/x") {
				t.Errorf("row group %d: an altered address was read: %q", g, a)
				break
			}
		}
		if !refusedForCRC(rerr) || !refusedForCRC(aerr) {
			t.Errorf("row group %d: ReadRun %d rows, %v; Addresses %d, %v; want both to refuse the CRC", g, len(got), rerr, len(addresses), aerr)
		}
	}
}

// TestDictionaryLayout: a chunk whose dictionary_page_offset is not the
// start of a dictionary page right before its data pages is refused by
// both readers, having yielded nothing: parquet-go's row reader seeks to
// data_page_offset, and would skip, unread and unchecked, the pages
// Addresses reads from the chunk's start. parquetguard's walk refuses the
// chunk at its first page (its TestDictionaryLayout has every layout), so
// Addresses refuses a chunk of PLAIN addresses too before it yields any of
// them.
func TestDictionaryLayout(t *testing.T) {
	empty := guardtest.DataPage(format.Uncompressed, format.Plain, 0, nil)
	empty.Header.CRC = int32(crc32.ChecksumIEEE(nil))
	for name, layout := range map[string]func(pages []guardtest.Page) (at, dataAt int, _ []guardtest.Page){
		// An empty data page between the dictionary and data_page_offset.
		"page skipped": func(pages []guardtest.Page) (int, int, []guardtest.Page) {
			return 0, 2, slices.Insert(pages, 1, empty)
		},
		// The same page with a bad CRC, which only Addresses reads.
		"bad page skipped": func(pages []guardtest.Page) (int, int, []guardtest.Page) {
			bad := empty
			bad.Header.CRC ^= 0x10
			return 0, 2, slices.Insert(pages, 1, bad)
		},
		// dictionary_page_offset at an empty data page before the dictionary.
		"data page at dictionary_page_offset": func(pages []guardtest.Page) (int, int, []guardtest.Page) {
			return 0, 2, slices.Insert(pages, 0, empty)
		},
		// data_page_offset at the dictionary's second data page.
		"data page skipped": func(pages []guardtest.Page) (int, int, []guardtest.Page) {
			return 0, 2, pages
		},
		// PLAIN addresses only, which Addresses reads from ReadPlain's
		// pages: dictionary_page_offset at the first, data_page_offset at
		// the second.
		"PLAIN page at dictionary_page_offset": func([]guardtest.Page) (int, int, []guardtest.Page) {
			var first, second [][]byte
			for i, a := range crcAddresses {
				if i < 4 {
					first = append(first, []byte(a))
				} else {
					second = append(second, []byte(a))
				}
			}
			pages := []guardtest.Page{
				guardtest.DataPage(format.Uncompressed, format.Plain, 4, guardtest.Plain(first...)),
				dataPageV2(format.Uncompressed, guardtest.Plain(second...), 4),
			}
			for i := range pages {
				pages[i].Header.CRC = int32(crc32.ChecksumIEEE(pages[i].Data))
			}
			return 0, 1, pages
		},
	} {
		t.Run(name, func(t *testing.T) {
			cols := crcColumns(format.Uncompressed)
			at, dataAt, pages := layout(cols[0].Pages)
			cols[0].Pages = pages
			data, md := guardtest.Layout(int64(len(crcAddresses)), cols...)
			chunk := &md.RowGroups[0].Columns[0].MetaData
			offset := chunk.DataPageOffset
			for i, p := range pages {
				switch i {
				case at:
					chunk.DictionaryPageOffset = offset
				case dataAt:
					chunk.DataPageOffset = offset
				}
				offset += int64(len(guardtest.Marshal(&p.Header)) + len(p.Data))
			}
			rows, rerr, addresses, aerr := readCRC(t, guardtest.WithFooter(data, guardtest.Marshal(md)))
			if !errors.Is(rerr, uncommitted.ErrInvalidFile) || !errors.Is(aerr, uncommitted.ErrInvalidFile) || len(rows) != 0 || len(addresses) != 0 {
				t.Errorf("ReadRun %q, %v; Addresses %q, %v; want both to refuse the file, having yielded nothing", rows, rerr, addresses, aerr)
			}
		})
	}
}

// TestPlainPageCRC alters one address in a file of PLAIN addresses of a
// required column, as Prepare and lakeFS write them (parquet-go writes
// each page's CRC): Addresses reads such pages itself, without parquet-go
// (parquetguard.ReadPlain), and must check their CRCs as parquet-go does.
// Both readers refuse the file with ErrInvalidFile, naming the CRC, and
// Addresses yields no altered address; the intact file is read whole.
func TestPlainPageCRC(t *testing.T) {
	var addresses []string
	for i := range 300 {
		addresses = append(addresses, fmt.Sprintf("data/slice/obj%05d", i))
	}
	for _, version := range []int{1, 2} {
		var buf bytes.Buffer
		if err := parquet.Write(&buf, asRows(addresses), parquet.Compression(&parquet.Uncompressed), parquet.PageBufferSize(512),
			parquet.MaxRowsPerRowGroup(100), parquet.DataPageVersion(version),
			parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain)); err != nil {
			t.Fatal(err)
		}
		rows, rerr, got, aerr := readCRC(t, buf.Bytes())
		if rerr != nil || aerr != nil || !slices.Equal(rows, addresses) || !slices.Equal(got, addresses) {
			t.Fatalf("v%d intact: ReadRun %d rows, %v; Addresses %d, %v", version, len(rows), rerr, len(got), aerr)
		}
		for _, victim := range []int{0, 57, 150, 299} {
			data := bytes.Clone(buf.Bytes())
			// The value in its page: PLAIN puts its length before it, in
			// 4 bytes (the footer's and headers' statistics do not).
			name := []byte(addresses[victim])
			at := bytes.Index(data, append([]byte{byte(len(name)), 0, 0, 0}, name...)) + 4
			if at < 4 {
				t.Fatalf("address %q not found in a page", name)
			}
			data[at+len(name)-1] ^= 0x01 // obj00057 → obj00056: another valid-looking address
			rows, rerr, got, aerr := readCRC(t, data)
			if !refusedForCRC(rerr) {
				t.Errorf("v%d, address %d altered: ReadRun %d rows, %v; want a CRC mismatch", version, victim, len(rows), rerr)
			}
			if !refusedForCRC(aerr) {
				t.Errorf("v%d, address %d altered: Addresses %d addresses, %v; want a CRC mismatch", version, victim, len(got), aerr)
			}
			altered := string(data[at : at+len(name)])
			for i, a := range got {
				if a == altered && addresses[i] != altered {
					t.Errorf("v%d: Addresses yielded the altered address %q", version, a)
				}
			}
		}
	}
}

// TestPlainV2LevelBytes: v2 pages of PLAIN addresses of a required column
// whose headers claim bytes of levels anyway (which parquet-go skips for
// such a column; parquet-testing has such files), stored before the
// compressed values and covered by the page's CRC, are read by Addresses
// from ReadPlain's pages, and after a fallback through parquet-go, as
// ReadRun reads them: the values start after the levels. A level byte
// altered is refused for its CRC by both readers.
func TestPlainV2LevelBytes(t *testing.T) {
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Snappy, format.Gzip, format.Zstd} {
		cols := crcColumns(codec)
		// A v2 page: 2 bytes of repetition levels, 3 of definition levels,
		// then the values, compressed.
		v2 := func(levels []byte, values ...string) guardtest.Page {
			var vs [][]byte
			for _, v := range values {
				vs = append(vs, []byte(v))
			}
			plain := guardtest.Plain(vs...)
			p := dataPageV2(codec, plain, int32(len(values)))
			p.Data = append(slices.Clone(levels), guardtest.Compress(codec, plain)...)
			p.Header.CompressedPageSize = int32(len(p.Data))
			p.Header.UncompressedPageSize = int32(len(levels) + len(plain))
			p.Header.DataPageHeaderV2.V.RepetitionLevelsByteLength = 2
			p.Header.DataPageHeaderV2.V.DefinitionLevelsByteLength = int32(len(levels) - 2)
			p.Header.CRC = int32(crc32.ChecksumIEEE(p.Data))
			return p
		}
		// physical_address: PLAIN pages only, 8 values in 3 pages.
		cols[0].Pages = []guardtest.Page{
			v2([]byte{4, 0, 2, 1, 0}, crcAddresses[:3]...),
			v2([]byte{0xff, 0xfe, 0, 0, 0}, crcAddresses[3:5]...),
			v2([]byte{1, 1, 1, 1, 1}, crcAddresses[5:]...),
		}
		for _, stop := range []int{0, 1, 2} {
			name := fmt.Sprintf("%v/stop after %d pages", codec, stop)
			restore := uncommitted.SetPlainPages(stop)
			before := uncommitted.PlainFallbacks()
			rows, rerr, addresses, aerr := readCRC(t, crcFile(cols, false))
			fell := uncommitted.PlainFallbacks() - before
			if rerr != nil || aerr != nil || !slices.Equal(rows, crcAddresses) || !slices.Equal(addresses, crcAddresses) {
				restore()
				t.Fatalf("%s: ReadRun %q, %v; Addresses %q, %v; want %q", name, rows, rerr, addresses, aerr, crcAddresses)
			}
			if (stop == 0) != (fell == 0) {
				restore()
				t.Fatalf("%s: %d files read through parquet-go", name, fell)
			}
			for page := range cols[0].Pages {
				bad := slices.Clone(cols)
				bad[0].Pages = slices.Clone(cols[0].Pages)
				bad[0].Pages[page].Data = slices.Clone(bad[0].Pages[page].Data)
				bad[0].Pages[page].Data[1] ^= 0x10 // a repetition level byte
				rows, rerr, addresses, aerr := readCRC(t, crcFile(bad, false))
				if !refusedForCRC(rerr) || !refusedForCRC(aerr) {
					restore()
					t.Fatalf("%s: page %d's level byte altered: ReadRun %d rows, %v; Addresses %d, %v", name, page, len(rows), rerr, len(addresses), aerr)
				}
			}
			restore()
		}
	}
}

// TestFuzzAddressesFinds: the files FuzzAddresses found, its seeds in
// testdata, are refused by both readers with ErrInvalidFile, having
// yielded nothing (FuzzAddresses itself only asks that they agree): a
// dictionary page that does not match its CRC at a dictionary_page_offset
// apart from its data pages (ReadRun yielded its altered address), a
// dictionary_page_offset before the file's start.
func TestFuzzAddressesFinds(t *testing.T) {
	for name, why := range map[string]string{
		"cfb614e5025a9f1d": "crc32 checksum mismatch",
		"4105036f81965552": "outside the file",
	} {
		data, err := guardtest.FuzzInput(filepath.Join("testdata", "fuzz", "FuzzAddresses", name))
		if err != nil {
			t.Fatal(err)
		}
		rows, rerr, addresses, aerr := readCRC(t, data)
		for _, err := range []error{rerr, aerr} {
			if !errors.Is(err, uncommitted.ErrInvalidFile) || !strings.Contains(err.Error(), why) {
				t.Errorf("%s: ReadRun %q, %v; Addresses %q, %v; want both to refuse it naming %q", name, rows, rerr, addresses, aerr, why)
				break
			}
		}
		if len(rows) != 0 || len(addresses) != 0 {
			t.Errorf("%s: ReadRun yielded %q, Addresses %q", name, rows, addresses)
		}
	}
}
