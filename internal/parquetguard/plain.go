package parquetguard

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"
)

// ErrNotPlain is wrapped by ReadPlain's error when the column is not one it
// hands over: not a required, top-level BYTE_ARRAY column, or with a page
// that is not PLAIN values (a dictionary, another encoding, nulls, fewer
// values than its header claims). The file may still be one Check accepts
// and parquet-go reads: the caller reads it that way.
var ErrNotPlain = errors.New("parquet: column not stored as plain values")

// PageFunc is handed the values of a data page by [ReadPlain]. values
// holds exactly n PLAIN byte arrays, each after its length (4 bytes,
// little-endian) and at most MaxValueSize long, and nothing after the last:
// a caller may slice them out without checking a length (a page of no
// values is handed over empty, n 0). The page's stored bytes matched its
// header's CRC-32, if it has one. rowGroup is the page's row group, its
// index in the row groups of the footer ReadPlain decoded from r, with
// parquet-go's Thrift decoder (so 0 <= rowGroup < their number, and a
// parquet.File opened from the same bytes has the same row groups); pages
// come in the file's order, rowGroup never decreasing. values is valid
// during the call only. An error it returns ends ReadPlain, which returns
// it wrapped.
type PageFunc func(rowGroup int, values []byte, n int) error

// ReadPlain checks the file r as Check(r, size, lim, column) does and hands
// page the values of each data page of column as it checks it, in order:
// a file's values are read and uncompressed once, where Check followed by
// parquet-go's reading does both twice. column must be a required,
// top-level BYTE_ARRAY column (else an error wrapping ErrNotPlain, before
// any page is read). A page Check refuses ends it with Check's error; a
// page of another kind than PLAIN values of a required column (a
// dictionary, another encoding, nulls, fewer values than its header
// claims) ends it with an error wrapping ErrNotPlain, after the pages
// before it were handed over. Both may come after some pages: the values
// of a page are whole and checked when page sees them, but not the pages
// after it; with lim.RowReaderLayout set, a chunk whose dictionary page is
// not where its footer says (see Check) is refused at its first page,
// before any page of it is handed over (ReadPlain reads pages in order from
// the chunk's start, and needs no layout: the option is for a caller that
// also reads the file with parquet-go's row reader). The row groups' row counts are the caller's to compare with
// the values it was handed. Memory is Check's.
func ReadPlain(r io.ReaderAt, size int64, lim Limits, column string, page PageFunc) error {
	if page == nil {
		return errors.New("parquet: ReadPlain without a page function")
	}
	return check(r, size, lim, []string{column}, page)
}

// plainColumn checks that the one column named is a required, top-level
// BYTE_ARRAY column, and the only one of its name.
func plainColumn(cols []leaf, names []string) error {
	if len(names) != 1 {
		return fmt.Errorf("%w: %d columns named", ErrNotPlain, len(names))
	}
	var col *leaf
	for i := range cols {
		if cols[i].path != names[0] {
			continue
		}
		if col != nil {
			// Check walks both; parquet-go reads one.
			return fmt.Errorf("%w: two columns %q", ErrNotPlain, names[0])
		}
		col = &cols[i]
	}
	switch {
	case col == nil:
		return fmt.Errorf("%w: no column %q", ErrNotPlain, names[0])
	case col.typ != format.ByteArray || col.maxDef != 0 || col.maxRep != 0:
		return fmt.Errorf("%w: column %q is %v with %d definition and %d repetition levels", ErrNotPlain, col.path, col.typ, col.maxDef, col.maxRep)
	}
	return nil
}

// plainPage checks the values of a data page of a required BYTE_ARRAY
// column, which must be exactly n PLAIN byte arrays, and hands them to
// onPage.
func (c *chunk) plainPage(enc format.Encoding, n int, data []byte) error {
	if enc != format.Plain {
		return fmt.Errorf("%w: a page of encoding %v", ErrNotPlain, enc)
	}
	count := 0
	if err := c.plainByteArrays(data, n, func(int) { count++ }); err != nil {
		return err
	}
	if count != n {
		return fmt.Errorf("%w: a page of %d values claims %d", ErrNotPlain, count, n)
	}
	return c.onPage(c.rowGroup, data, n)
}
