package parquetguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Limits bounds what a file may claim. A zero field means its default.
// RowReaderLayout, not a bound, asks for the layout check parquet-go's
// row reader needs (see the package documentation).
type Limits struct {
	// MaxFooterSize bounds the Thrift-encoded footer, in bytes.
	MaxFooterSize int
	// MaxFooterMemory bounds the estimated memory of the decoded footer:
	// 576 bytes per struct in a list (a row group, a column chunk, a
	// schema element…), 24 per other list item, 64 per struct field.
	MaxFooterMemory int64
	// MaxDepth bounds the nesting of the schema and of the Thrift
	// structures of the footer and page headers.
	MaxDepth int
	// MaxPageHeaderSize bounds a page header, in bytes.
	MaxPageHeaderSize int
	// MaxPageSize bounds a page's stored and uncompressed sizes, and the
	// bytes its values decode to (a dictionary's values count as often as
	// a page refers to them).
	MaxPageSize int
	// MaxPageValues bounds the values of a page, nulls included, and the
	// entries of a dictionary.
	MaxPageValues int
	// MaxValueSize bounds every BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY value.
	MaxValueSize int
	// RowReaderLayout, when true, refuses a chunk whose footer gives a
	// dictionary_page_offset (not 0) other than its data_page_offset
	// unless its first page is a dictionary page ending exactly at the
	// data_page_offset (and a chunk of no bytes so laid out): set it when
	// parquet-go's row reader (a parquet.Reader, GenericReader or a
	// RowGroup's Rows) will read the file, which seeks a chunk to its
	// data_page_offset. A caller that reads pages with ColumnChunk.Pages
	// from the chunk's start, in order, leaves it false: such a reader
	// reads the pages Check walked, in any layout. Without it, the row
	// reader may read bytes Check did not check.
	RowReaderLayout bool
}

// The default limits. Writers make pages of about 1 MiB (parquet-mr, Arrow)
// or less (parquet-go, lakeFS), of at most 20 000 rows for parquet-mr and
// Arrow; a footer takes about 100 bytes per row group and column; object
// keys are at most 1 KiB.
const (
	DefaultMaxFooterSize     = 16 << 20
	DefaultMaxFooterMemory   = 64 << 20
	DefaultMaxDepth          = 32
	DefaultMaxPageHeaderSize = 64 << 10
	DefaultMaxPageSize       = 16 << 20
	DefaultMaxPageValues     = 1 << 20
	DefaultMaxValueSize      = 64 << 10
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxFooterSize, DefaultMaxFooterSize)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxPageHeaderSize, DefaultMaxPageHeaderSize)
	def(&l.MaxPageSize, DefaultMaxPageSize)
	def(&l.MaxPageValues, DefaultMaxPageValues)
	def(&l.MaxValueSize, DefaultMaxValueSize)
	if l.MaxFooterMemory <= 0 {
		l.MaxFooterMemory = DefaultMaxFooterMemory
	}
	// parquet-go's page reader buffers at least 4 KiB of headers.
	l.MaxPageHeaderSize = max(l.MaxPageHeaderSize, 4<<10)
	return l
}

// ErrUnsupportedCodec is wrapped by Check's error for a column compressed
// with a codec parquet-go does not read: LZO, and LZ4 in Hadoop's framing
// (codec LZ4, which Spark writes for "lz4"); LZ4_RAW is read.
var ErrUnsupportedCodec = errors.New("compression codec not supported")

// Check reads the footer of the Parquet file r, of size bytes, and every page
// of the named columns (every column if none is named; a nested column is
// named by its dotted path), and returns an error if parquet-go, opening the
// file with SkipPageIndex and SkipBloomFilters and reading those columns,
// could allocate more than the limits allow, or read other bytes than
// Check did: a page that does not match its header's CRC-32, and, when
// lim.RowReaderLayout is set, a dictionary page not where the footer says
// (see the package documentation). An error of r is wrapped.
func Check(r io.ReaderAt, size int64, lim Limits, columns ...string) error {
	return check(r, size, lim, columns, nil)
}

// check is Check, handing onPage, when not nil, the values of each data
// page of the one column named (ReadPlain).
func check(r io.ReaderAt, size int64, lim Limits, columns []string, onPage PageFunc) error {
	lim = lim.withDefaults()
	md, cols, footerAt, err := checkFooter(r, size, lim)
	if err != nil {
		return err
	}
	if onPage != nil {
		if err := plainColumn(cols, columns); err != nil {
			return err
		}
	}
	g := newGuard(lim)
	g.onPage = onPage
	for j := range cols {
		if len(columns) > 0 && !slices.Contains(columns, cols[j].path) {
			continue
		}
		for i := range md.RowGroups {
			g.rowGroup = i
			chunk := &md.RowGroups[i].Columns[j].MetaData
			// parquet-go decompresses every chunk of a column with the
			// codec of its first.
			if codec := md.RowGroups[0].Columns[j].MetaData.Codec; chunk.Codec != codec {
				return fmt.Errorf("parquet: column %q: row group %d compressed with %v, row group 0 with %v", cols[j].path, i, chunk.Codec, codec)
			}
			if err := g.checkChunk(r, footerAt, &cols[j], chunk); err != nil {
				return fmt.Errorf("parquet: row group %d, column %q: %w", i, cols[j].path, err)
			}
		}
	}
	return nil
}

// checkFooter reads and decodes the footer (readFooter), and checks its
// schema (leaves) and that every row group has a column chunk per leaf; it
// returns the footer, the schema's leaves and where the footer starts. lim
// has its defaults.
func checkFooter(r io.ReaderAt, size int64, lim Limits) (*format.FileMetaData, []leaf, int64, error) {
	md, footerAt, err := readFooter(r, size, lim)
	if err != nil {
		return nil, nil, 0, err
	}
	cols, err := leaves(md.Schema, lim)
	if err != nil {
		return nil, nil, 0, err
	}
	for i, rg := range md.RowGroups {
		if len(rg.Columns) != len(cols) {
			return nil, nil, 0, fmt.Errorf("parquet: row group %d has %d columns, the schema %d", i, len(rg.Columns), len(cols))
		}
	}
	return md, cols, footerAt, nil
}

// readFooter reads and decodes the footer, after checking its Thrift
// encoding with thriftScan; it returns where the footer starts.
func readFooter(r io.ReaderAt, size int64, lim Limits) (*format.FileMetaData, int64, error) {
	if size < 12 {
		return nil, 0, fmt.Errorf("parquet: file of %d bytes", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return nil, 0, fmt.Errorf("parquet: header: %w", err)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, 0, fmt.Errorf("parquet: footer: %w", err)
	}
	if string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return nil, 0, errors.New("parquet: not a Parquet file (magic bytes)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 || n > int64(lim.MaxFooterSize) {
		return nil, 0, fmt.Errorf("parquet: footer of %d bytes (file of %d, limit %d)", n, size, lim.MaxFooterSize)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return nil, 0, fmt.Errorf("parquet: footer: %w", err)
	}
	l, _, err := structLen(footer, lim.MaxDepth, lim.MaxFooterMemory)
	if err != nil {
		return nil, 0, fmt.Errorf("parquet: footer: %w", err)
	}
	if l != len(footer) {
		return nil, 0, fmt.Errorf("parquet: footer: %d bytes after its end", len(footer)-l)
	}
	md := new(format.FileMetaData)
	if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReaderFromBytes(footer)).Decode(md); err != nil {
		return nil, 0, fmt.Errorf("parquet: footer: %v", err)
	}
	return md, size - 8 - n, nil
}

// leaf is a column of the schema: a leaf of its tree.
type leaf struct {
	path           string
	typ            format.Type
	typeLength     int
	maxDef, maxRep int
}

// leaves walks the schema as parquet-go builds its column tree, and
// returns its leaves in column order.
func leaves(schema []format.SchemaElement, lim Limits) ([]leaf, error) {
	if len(schema) == 0 {
		return nil, errors.New("parquet: empty schema")
	}
	if schema[0].Type.Valid {
		return nil, errors.New("parquet: schema root is not a group")
	}
	w := schemaWalk{elems: schema, lim: lim}
	if err := w.node(0, nil, 0, 0); err != nil {
		return nil, err
	}
	if w.next != len(schema) {
		return nil, fmt.Errorf("parquet: %d schema elements outside the schema's tree", len(schema)-w.next)
	}
	return w.leaves, nil
}

type schemaWalk struct {
	elems  []format.SchemaElement
	lim    Limits
	next   int
	leaves []leaf
}

func (w *schemaWalk) node(depth int, path []string, def, rep int) error {
	if depth > w.lim.MaxDepth {
		return fmt.Errorf("parquet: schema nested deeper than %d", w.lim.MaxDepth)
	}
	if w.next >= len(w.elems) {
		return errors.New("parquet: schema groups claim more children than it has")
	}
	e := &w.elems[w.next]
	w.next++
	children := 0
	if e.NumChildren.Valid {
		children = int(e.NumChildren.V)
	}
	if depth > 0 {
		path = append(path[:len(path):len(path)], e.Name)
		if e.RepetitionType.Valid {
			switch e.RepetitionType.V {
			case format.Optional:
				def++
			case format.Repeated:
				def++
				rep++
			}
		}
	}
	if e.Type.Valid {
		if children != 0 {
			return fmt.Errorf("parquet: column %q has a type and %d children", strings.Join(path, "."), children)
		}
		l := leaf{path: strings.Join(path, "."), typ: e.Type.V, maxDef: def, maxRep: rep}
		if l.typ == format.FixedLenByteArray {
			if !e.TypeLength.Valid || e.TypeLength.V <= 0 || int(e.TypeLength.V) > w.lim.MaxValueSize {
				return fmt.Errorf("parquet: column %q: fixed length %d", l.path, e.TypeLength.V)
			}
			l.typeLength = int(e.TypeLength.V)
		}
		w.leaves = append(w.leaves, l)
		return nil
	}
	if children < 0 || children > len(w.elems)-w.next {
		return fmt.Errorf("parquet: schema group %q claims %d children", strings.Join(path, "."), children)
	}
	for range children {
		if err := w.node(depth+1, path, def, rep); err != nil {
			return err
		}
	}
	return nil
}

// Open checks the Parquet file r of size bytes with [Check] (the columns
// named, or every column) and opens it with parquet-go as Check assumes it
// will be: with SkipPageIndex and SkipBloomFilters. A panic of parquet-go
// while it opens the file is an error, as is what Check refuses; an error
// of r is wrapped.
func Open(r io.ReaderAt, size int64, lim Limits, columns ...string) (*parquet.File, error) {
	return openChecked(r, size, func() error { return Check(r, size, lim, columns...) })
}

// OpenFooter checks the footer of the Parquet file r, of size bytes, as
// Check does (its size, Thrift encoding, decoded size, schema, and a
// column chunk per leaf in every row group), and opens the file with
// parquet-go as Open does, without reading any page: for a caller that
// reads the pages with ReadPlain, or checks them with Check before
// parquet-go reads them. lim.RowReaderLayout is for those: OpenFooter
// reads no page, and checks no layout.
func OpenFooter(r io.ReaderAt, size int64, lim Limits) (*parquet.File, error) {
	return openChecked(r, size, func() error {
		_, _, _, err := checkFooter(r, size, lim.withDefaults())
		return err
	})
}

// openChecked opens r with parquet-go as Check assumes it will be, once
// verify accepted it; a panic of either is an error.
func openChecked(r io.ReaderAt, size int64, verify func() error) (f *parquet.File, err error) {
	defer func() {
		if v := recover(); v != nil {
			f, err = nil, fmt.Errorf("parquet: corrupt file: %v", v)
		}
	}()
	if err := verify(); err != nil {
		return nil, err
	}
	f, err = parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return f, nil
}
