package parquetguard

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// guard holds what checking a file reuses from page to page.
type guard struct {
	lim Limits
	br  *bufio.Reader
	dec decompressor
	// stored and plain hold a page as stored and uncompressed.
	stored, plain []byte
	// dict holds the lengths of the entries of a BYTE_ARRAY dictionary,
	// prefix the prefix lengths of a DELTA_BYTE_ARRAY page.
	dict, prefix []int32
	// onPage, when not nil, is handed the values of each data page
	// (ReadPlain), of row group rowGroup.
	onPage   PageFunc
	rowGroup int
}

func newGuard(lim Limits) *guard {
	return &guard{lim: lim, br: bufio.NewReaderSize(nil, lim.MaxPageHeaderSize)}
}

// chunk is the state of the walk through one column chunk.
type chunk struct {
	*guard
	col   *leaf
	codec format.CompressionCodec
	// dictLen is the number of entries of the chunk's dictionary, -1
	// before its dictionary page.
	dictLen int
	// dataAt is the chunk's data_page_offset when the footer gives it a
	// dictionary_page_offset apart from it and Limits.RowReaderLayout is
	// set, else -1: its first page must
	// then be a dictionary page that ends there (checkLayout), and a chunk
	// of no bytes, which has none, is refused.
	dataAt int64
}

// checkChunk walks the pages of a column chunk from where parquet-go starts
// reading them, through the bytes the footer gives the chunk.
func (g *guard) checkChunk(r io.ReaderAt, footerAt int64, col *leaf, md *format.ColumnMetaData) error {
	switch md.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
	default:
		return fmt.Errorf("%w: %v", ErrUnsupportedCodec, md.Codec)
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	size := md.TotalCompressedSize
	if start < 4 || size < 0 || size > footerAt-start {
		return fmt.Errorf("pages at [%d, +%d) outside the file's [4, %d)", start, size, footerAt)
	}
	g.br.Reset(io.NewSectionReader(r, start, size))
	c := &chunk{guard: g, col: col, codec: md.Codec, dictLen: -1, dataAt: -1}
	if g.lim.RowReaderLayout && md.DictionaryPageOffset != 0 && md.DictionaryPageOffset != md.DataPageOffset {
		c.dataAt = md.DataPageOffset
		if size == 0 {
			return fmt.Errorf("no dictionary page at the chunk's dictionary_page_offset %d: the chunk has no bytes", start)
		}
	}
	for page, left := 0, size; left > 0; page++ {
		n, err := c.checkPage(page, start+size-left, left)
		if err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		left -= n
	}
	return nil
}

// checkPage checks page number page of the chunk, at the reader's
// position, offset at in the file, with left bytes of the chunk left, and
// returns its size, header included.
func (c *chunk) checkPage(page int, at, left int64) (int64, error) {
	h, hlen, err := c.readHeader(left)
	if err != nil {
		return 0, err
	}
	if err := c.checkHeader(h); err != nil {
		return 0, err
	}
	if int64(h.CompressedPageSize) > left-int64(hlen) {
		return 0, fmt.Errorf("%d bytes, past the end of its column chunk", h.CompressedPageSize)
	}
	if page == 0 && c.dataAt >= 0 {
		if err := c.checkLayout(h, at, at+int64(hlen)+int64(h.CompressedPageSize)); err != nil {
			return 0, err
		}
	}
	c.stored = grow(c.stored, int(h.CompressedPageSize))
	if _, err := io.ReadFull(c.br, c.stored); err != nil {
		return 0, fmt.Errorf("reading: %w", noEOF(err))
	}
	// parquet-go checks the CRC of a page it reads when its header has
	// one (not 0); so does the check, on every page it walks, so that no
	// page is handed over (ReadPlain) or read apart by parquet-go (a
	// dictionary page) unchecked.
	if h.CRC != 0 {
		if got := crc32.ChecksumIEEE(c.stored); got != uint32(h.CRC) {
			return 0, fmt.Errorf("crc32 checksum mismatch: want=0x%08X got=0x%08X", uint32(h.CRC), got)
		}
	}
	switch h.Type {
	case format.DictionaryPage:
		err = c.checkDictionaryPage(h)
	case format.DataPage:
		err = c.checkDataPage(h)
	case format.DataPageV2:
		err = c.checkDataPageV2(h)
	}
	return int64(hlen) + int64(h.CompressedPageSize), err
}

// checkLayout checks, when Limits.RowReaderLayout is set, the first page
// of a chunk whose footer gives a dictionary_page_offset apart from its
// data_page_offset: the page, h at
// offset at (the dictionary_page_offset, where the walk starts), ending
// at end, must be a dictionary page that ends at the data_page_offset.
//
// parquet-go reads a chunk's pages from its dictionary_page_offset, but its
// row reader first seeks to row 0, which moves the reader of a chunk (the
// first row group's, in v0.32) to its data_page_offset, and then reads the
// dictionary page apart, when a data page first refers to it, without
// checking its CRC. With this layout, what that reader reads is what the
// walk checked (the dictionary's CRC included): no page before the
// data_page_offset skipped unread, none taken for a dictionary or read
// from its middle.
func (c *chunk) checkLayout(h *format.PageHeader, at, end int64) error {
	if h.Type != format.DictionaryPage {
		return fmt.Errorf("a %v page at the chunk's dictionary_page_offset %d", h.Type, at)
	}
	if end != c.dataAt {
		return fmt.Errorf("data pages at data_page_offset %d, the dictionary page before them ends at %d", c.dataAt, end)
	}
	return nil
}

// readHeader decodes the page header at the reader's position. It is
// decoded from bytes, after thriftScan checked its lengths: parquet-go's
// decoder reads it from a stream and allocates the lengths it meets.
func (c *chunk) readHeader(left int64) (*format.PageHeader, int, error) {
	window, err := c.br.Peek(int(min(left, int64(c.lim.MaxPageHeaderSize))))
	if err != nil && len(window) == 0 {
		return nil, 0, fmt.Errorf("reading header: %w", noEOF(err))
	}
	// A page header has no list parquet-go decodes: the window bounds
	// what decoding it costs.
	n, _, serr := structLen(window, c.lim.MaxDepth, math.MaxInt64)
	switch {
	case errors.Is(serr, errThriftTruncated) && err != nil:
		return nil, 0, fmt.Errorf("reading header: %w", noEOF(err))
	case errors.Is(serr, errThriftTruncated) && len(window) == c.lim.MaxPageHeaderSize:
		return nil, 0, fmt.Errorf("header longer than %d bytes", c.lim.MaxPageHeaderSize)
	case serr != nil:
		return nil, 0, fmt.Errorf("header: %w", serr)
	}
	h := new(format.PageHeader)
	pr := new(thrift.CompactProtocol).NewReaderFromBytes(window[:n])
	if err := thrift.NewDecoder(pr).Decode(h); err != nil {
		return nil, 0, fmt.Errorf("header: %v", err)
	}
	if pr.BytesRead() != n {
		return nil, 0, fmt.Errorf("header of %d bytes decoded from %d", n, pr.BytesRead())
	}
	if _, err := c.br.Discard(n); err != nil {
		return nil, 0, err
	}
	return h, n, nil
}

// checkHeader checks what a header claims, before anything is read for it.
func (c *chunk) checkHeader(h *format.PageHeader) error {
	maxSize := int32(min(c.lim.MaxPageSize, 1<<31-1))
	if h.CompressedPageSize < 0 || h.CompressedPageSize > maxSize || h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxSize {
		return fmt.Errorf("header claims %d bytes stored, %d uncompressed (limit %d)", h.CompressedPageSize, h.UncompressedPageSize, maxSize)
	}
	var values int32
	switch h.Type {
	case format.DictionaryPage:
		if !h.DictionaryPageHeader.Valid {
			return errors.New("dictionary page without its header")
		}
		values = h.DictionaryPageHeader.V.NumValues
	case format.DataPage:
		if !h.DataPageHeader.Valid {
			return errors.New("data page without its header")
		}
		values = h.DataPageHeader.V.NumValues
	case format.DataPageV2:
		v := &h.DataPageHeaderV2
		if !v.Valid {
			return errors.New("data page v2 without its header")
		}
		values = v.V.NumValues
		if v.V.NumNulls < 0 || v.V.NumNulls > values || v.V.NumRows < 0 || v.V.NumRows > values {
			return fmt.Errorf("%d values, %d nulls, %d rows", values, v.V.NumNulls, v.V.NumRows)
		}
		levels := int64(v.V.RepetitionLevelsByteLength) + int64(v.V.DefinitionLevelsByteLength)
		if v.V.RepetitionLevelsByteLength < 0 || v.V.DefinitionLevelsByteLength < 0 ||
			levels > int64(h.CompressedPageSize) || levels > int64(h.UncompressedPageSize) {
			return fmt.Errorf("%d + %d bytes of levels in a page of %d", v.V.RepetitionLevelsByteLength, v.V.DefinitionLevelsByteLength, h.CompressedPageSize)
		}
	default:
		return fmt.Errorf("page type %v", h.Type)
	}
	if values < 0 || int(values) > c.lim.MaxPageValues {
		return fmt.Errorf("header claims %d values (limit %d)", values, c.lim.MaxPageValues)
	}
	// Values of a fixed size decode to that size each.
	if w := c.col.width(); w > 0 && int64(values)*int64(w) > int64(c.lim.MaxPageSize) {
		return fmt.Errorf("%d values of %d bytes, more than %d", values, w, c.lim.MaxPageSize)
	}
	return nil
}

// uncompress returns the page's data, stored[from:], uncompressed to want
// bytes; compressed says whether it is. parquet-go uncompresses it into a
// buffer of the page's uncompressed size, h.UncompressedPageSize.
func (c *chunk) uncompress(h *format.PageHeader, from int, want int32, compressed bool) ([]byte, error) {
	data := c.stored[from:]
	if !compressed || c.codec == format.Uncompressed {
		if len(data) != int(want) {
			return nil, fmt.Errorf("uncompressed page of %d bytes claims %d", len(data), want)
		}
		return data, nil
	}
	if c.codec == format.Lz4Raw && int64(h.UncompressedPageSize) < 3*int64(len(data)) {
		// parquet-go v0.32's LZ4_RAW decoder uncompresses such a page
		// into a buffer of its own, which parquet-go then drops for its
		// own buffer's stale bytes: it reads the wrong values, without an
		// error (parquet-go/parquet-go#608).
		return nil, fmt.Errorf("%w: LZ4_RAW page of %d bytes that uncompresses to less than 3 times that (%d), which parquet-go misreads", ErrUnsupportedCodec, len(data), h.UncompressedPageSize)
	}
	c.plain = grow(c.plain, int(want))
	if err := c.dec.decompress(c.codec, c.plain, data); err != nil {
		return nil, fmt.Errorf("%v page: %w", c.codec, err)
	}
	return c.plain, nil
}

func (c *chunk) checkDictionaryPage(h *format.PageHeader) error {
	if c.onPage != nil {
		return fmt.Errorf("%w: a dictionary page", ErrNotPlain)
	}
	if c.dictLen >= 0 {
		// parquet-go skips any dictionary page after the first.
		return nil
	}
	data, err := c.uncompress(h, 0, h.UncompressedPageSize, true)
	if err != nil {
		return err
	}
	return c.checkDictionary(&h.DictionaryPageHeader.V, data)
}

func (c *chunk) checkDataPage(h *format.PageHeader) error {
	data, err := c.uncompress(h, 0, h.UncompressedPageSize, true)
	if err != nil {
		return err
	}
	v := &h.DataPageHeader.V
	n := int(v.NumValues)
	if c.col.maxRep > 0 {
		if data, err = levelsV1(v.RepetitionLevelEncoding, c.col.maxRep, n, data); err != nil {
			return fmt.Errorf("repetition levels: %w", err)
		}
	}
	if c.col.maxDef > 0 {
		if data, err = levelsV1(v.DefinitionLevelEncoding, c.col.maxDef, n, data); err != nil {
			return fmt.Errorf("definition levels: %w", err)
		}
	}
	return c.checkValues(v.Encoding, n, data)
}

func (c *chunk) checkDataPageV2(h *format.PageHeader) error {
	v := &h.DataPageHeaderV2.V
	n := int(v.NumValues)
	if c.onPage != nil && v.NumNulls != 0 {
		return fmt.Errorf("%w: %d nulls in a page of a required column", ErrNotPlain, v.NumNulls)
	}
	rep, def := int(v.RepetitionLevelsByteLength), int(v.DefinitionLevelsByteLength)
	if err := levelsV2(c.col.maxRep, n, c.stored[:rep]); err != nil {
		return fmt.Errorf("repetition levels: %w", err)
	}
	if err := levelsV2(c.col.maxDef, n, c.stored[rep:rep+def]); err != nil {
		return fmt.Errorf("definition levels: %w", err)
	}
	compressed := !v.IsCompressed.Valid || v.IsCompressed.V
	data, err := c.uncompress(h, rep+def, h.UncompressedPageSize-int32(rep+def), compressed)
	if err != nil {
		return err
	}
	return c.checkValues(v.Encoding, n-int(v.NumNulls), data)
}

// width is the size of the column's values when it is fixed, else 0.
func (l *leaf) width() int {
	switch l.typ {
	case format.Int32, format.Float:
		return 4
	case format.Int64, format.Double:
		return 8
	case format.Int96:
		return 12
	case format.FixedLenByteArray:
		return l.typeLength
	}
	return 0
}

// grow returns b resized to n bytes, reallocated only when it is too small.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// noEOF reports a stream that ends before the chunk the footer claims.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
