package uncommitted

import (
	"fmt"
	"hash/crc32"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakegc/lakegc/internal/parquetguard"
)

// checkDictionaryPages checks, in every chunk of the columns named whose
// footer gives a dictionary_page_offset other than its data_page_offset,
// the page at that offset: it must be a dictionary page, the chunk's data
// pages must start right after it, and its stored bytes must match the
// CRC-32 of its header, when the header has one.
//
// parquet-go checks the CRC of every page it reads in order (Addresses
// reads a chunk's pages so, from its start), but its row reader (ReadRun's)
// first seeks to row 0, which seeks the first row group's chunks (in
// v0.32; the others are read from their start) to their data_page_offset,
// skipping what is before, and then reads the dictionary page apart when a
// data page first refers to it, without checking its CRC: a damaged
// dictionary would hand out altered addresses. The CRC is checked here, in
// every row group; the layout checks make the pages both readers read the
// same (none skipped, no data page taken for a dictionary).
//
// r reads the file f was opened from, whose pages parquetguard checked:
// each header decodes from at most parquetguard.DefaultMaxPageHeaderSize
// bytes, and each page lies within its chunk. A read error of r is returned
// as it is, anything else wraps ErrInvalidFile.
func checkDictionaryPages(r io.ReaderAt, f *parquet.File, columns ...string) error {
	var buf []byte
	for _, name := range columns {
		leaf, ok := f.Schema().Lookup(name)
		if !ok {
			continue
		}
		for i, rg := range f.Metadata().RowGroups {
			md := &rg.Columns[leaf.ColumnIndex].MetaData
			if md.DictionaryPageOffset == 0 || md.DictionaryPageOffset == md.DataPageOffset {
				// parquet-go reads every page from the chunk's start,
				// and checks their CRCs.
				continue
			}
			if buf == nil {
				buf = make([]byte, parquetguard.DefaultMaxPageHeaderSize)
			}
			invalid := func(format string, a ...any) error {
				return fmt.Errorf("%w: row group %d, column %q: %s", ErrInvalidFile, i, name, fmt.Sprintf(format, a...))
			}
			if err := checkDictionaryPage(r, md, buf, invalid); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDictionaryPage checks the page at md's dictionary_page_offset (see
// checkDictionaryPages), reading it through buf; invalid makes the error
// of a damaged chunk.
func checkDictionaryPage(r io.ReaderAt, md *format.ColumnMetaData, buf []byte, invalid func(format string, a ...any) error) error {
	start := md.DictionaryPageOffset
	if start < 4 || md.TotalCompressedSize < 0 {
		// The caller's page check refuses such a chunk first; this one is
		// no longer inside openFile's recover.
		return invalid("pages at [%d, +%d)", start, md.TotalCompressedSize)
	}
	window := buf[:min(int64(len(buf)), md.TotalCompressedSize)]
	if err := readAt(r, window, start); err != nil {
		return err
	}
	h := new(format.PageHeader)
	pr := new(thrift.CompactProtocol).NewReaderFromBytes(window)
	if err := thrift.NewDecoder(pr).Decode(h); err != nil {
		return invalid("the page at its dictionary_page_offset %d: header: %v", start, err)
	}
	if h.Type != format.DictionaryPage {
		return invalid("a %v page at its dictionary_page_offset %d", h.Type, start)
	}
	from := start + int64(pr.BytesRead())
	end := from + int64(h.CompressedPageSize)
	if h.CompressedPageSize < 0 || end > start+md.TotalCompressedSize {
		return invalid("dictionary page of %d bytes at %d, past its chunk's end", h.CompressedPageSize, start)
	}
	if md.DataPageOffset != end {
		return invalid("data pages at %d, the dictionary page before them ends at %d", md.DataPageOffset, end)
	}
	if h.CRC == 0 {
		// No CRC: parquet-go reads 0 so, and checks none.
		return nil
	}
	// The page's bytes in the window, then the rest through it.
	got := crc32.ChecksumIEEE(window[from-start : min(end, start+int64(len(window)))-start])
	for off := start + int64(len(window)); off < end; {
		part := buf[:min(int64(len(buf)), end-off)]
		if err := readAt(r, part, off); err != nil {
			return err
		}
		got = crc32.Update(got, crc32.IEEETable, part)
		off += int64(len(part))
	}
	if want := uint32(h.CRC); got != want {
		return invalid("crc32 checksum mismatch in the dictionary page at %d: want=0x%08X got=0x%08X", start, want, got)
	}
	return nil
}

// readAt reads len(p) bytes at off; io.EOF with all of them is no error.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
