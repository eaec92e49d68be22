package uncommitted

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobrange"
)

const (
	// footerTail is how much of a file's end footerRows reads at first:
	// the footers Prepare and lakeFS write (a schema of two columns and
	// about 100 bytes a row group) fit, so one range read a file suffices.
	footerTail = 8 << 10
	// maxFooterSize caps the footer footerRows accepts: a footer claiming
	// more is refused, not read.
	maxFooterSize = 16 << 20
	// maxThriftDepth caps the nesting of structures and lists in a footer.
	maxThriftDepth = 64
	// maxFooterItems caps the elements of all lists, sets and maps of a
	// footer. parquet-go's decoder allocates a list's elements before it
	// reads them, up to 560 bytes each (a column chunk), however few
	// bytes encode them: the cap bounds that to about 36 MiB. A file of
	// Prepare's has about 20 a row group.
	maxFooterItems = 1 << 16
	// maxSchemaElements caps a footer's schema. parquet-go's reader
	// allocates memory quadratic in the schema's depth, and the product
	// of its leaves and the row groups; lakeFS's files have 3 elements.
	maxSchemaElements = 64
)

// footerRows returns the number of rows a Parquet file's footer declares.
// It reads the file's tail (and the footer, when larger) and walks the
// footer's Thrift encoding without decoding it: a hostile footer costs at
// most maxFooterSize bytes and time linear in its size, where a decoder
// would allocate whatever lengths it claims.
func footerRows(ctx context.Context, bucket *blob.Bucket, key string, size int64) (int64, error) {
	tail, err := readTail(blobrange.New(ctx, bucket, key, size, 0), size)
	if err != nil {
		return 0, err
	}
	return numRows(tail[:len(tail)-8])
}

// readTail reads a Parquet file's footer, its length and its closing
// magic: the file's last bytes. It reads the last footerTail bytes first,
// then the footer when it is longer; a footer claiming more than the file
// or maxFooterSize is refused, not read.
func readTail(r io.ReaderAt, size int64) ([]byte, error) {
	if size < 12 { // "PAR1", the footer's length, "PAR1"
		return nil, fmt.Errorf("%w: %d bytes, too short for Parquet", ErrInvalidFile, size)
	}
	tail := make([]byte, min(size, footerTail))
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	if string(tail[len(tail)-4:]) != "PAR1" {
		return nil, fmt.Errorf("%w: no Parquet magic at the end", ErrInvalidFile)
	}
	n := int64(binary.LittleEndian.Uint32(tail[len(tail)-8:]))
	if n > size-12 || n > maxFooterSize {
		return nil, fmt.Errorf("%w: footer of %d bytes in a file of %d", ErrInvalidFile, n, size)
	}
	if int64(len(tail)) >= n+8 {
		return tail[int64(len(tail))-8-n:], nil
	}
	full := make([]byte, n+8)
	if _, err := r.ReadAt(full[:n], size-8-n); err != nil {
		return nil, err
	}
	copy(full[n:], tail[len(tail)-8:])
	return full, nil
}

// pinnedTail reads a file through r, except its last bytes, which come
// from tail: a footer that was read once and checked.
type pinnedTail struct {
	r    io.ReaderAt
	off  int64 // of tail in the file
	tail []byte
}

func (t *pinnedTail) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= t.off {
		if off-t.off >= int64(len(t.tail)) {
			return 0, io.EOF
		}
		n := copy(p, t.tail[off-t.off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	head := p[:min(int64(len(p)), t.off-off)]
	n, err := t.r.ReadAt(head, off)
	if n < len(head) || len(head) == len(p) {
		return n, err
	}
	m, err := t.ReadAt(p[n:], t.off)
	return n + m, err
}

// Thrift compact protocol types.
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI16       = 4
	tI32       = 5
	tI64       = 6
	tDouble    = 7
	tBinary    = 8
	tList      = 9
	tSet       = 10
	tMap       = 11
	tStruct    = 12
)

var errThrift = errors.New("malformed footer")

// numRows returns field 3 (num_rows, i64) of a Parquet FileMetaData in
// Thrift compact encoding, after checking that the whole structure is well
// formed (every length it declares fits in the bytes that follow) and
// within maxFooterItems and maxSchemaElements: then parquet-go decodes and
// opens it in bounded memory.
func numRows(footer []byte) (int64, error) {
	w := thriftWalker{b: footer}
	rows, found := int64(0), false
	var id int16
	for {
		typ, fid, stop, err := w.fieldHeader(id)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
		}
		if stop {
			break
		}
		id = fid
		if id == 3 && typ == tI64 {
			if rows, err = w.zigzag(); err != nil {
				return 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
			}
			found = true
			continue
		}
		if id == 3 {
			return 0, fmt.Errorf("%w: num_rows of Thrift type %d", ErrInvalidFile, typ)
		}
		w.listLen = 0
		if err := w.skip(typ, 1); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
		}
		if id == 2 && w.listLen > maxSchemaElements { // the schema
			return 0, fmt.Errorf("%w: schema of %d elements, over %d", ErrInvalidFile, w.listLen, maxSchemaElements)
		}
	}
	switch {
	case !found:
		return 0, fmt.Errorf("%w: footer without num_rows", ErrInvalidFile)
	case rows < 0:
		return 0, fmt.Errorf("%w: footer says %d rows", ErrInvalidFile, rows)
	}
	return rows, nil
}

// thriftWalker reads a Thrift compact encoding without building values.
type thriftWalker struct {
	b     []byte
	off   int
	items int // elements of the lists, sets and maps passed
	// listLen is the length of the last list or set that was a field
	// of the top structure.
	listLen int
}

// count adds n elements to the items passed.
func (w *thriftWalker) count(n int) error {
	if w.items += n; w.items > maxFooterItems {
		return fmt.Errorf("%w: more than %d list elements", errThrift, maxFooterItems)
	}
	return nil
}

func (w *thriftWalker) byte() (byte, error) {
	if w.off >= len(w.b) {
		return 0, fmt.Errorf("%w: truncated", errThrift)
	}
	w.off++
	return w.b[w.off-1], nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at byte %d", errThrift, w.off)
	}
	w.off += n
	return v, nil
}

func (w *thriftWalker) zigzag() (int64, error) {
	u, err := w.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// length reads a length and checks that at least that many items of
// minSize bytes remain.
func (w *thriftWalker) length(minSize int) (int, error) {
	n, err := w.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64((len(w.b)-w.off)/minSize) {
		return 0, fmt.Errorf("%w: length %d past the end", errThrift, n)
	}
	return int(n), nil
}

// fieldHeader reads a struct's next field header; last is the previous
// field's ID, from which a short header counts.
func (w *thriftWalker) fieldHeader(last int16) (typ byte, id int16, stop bool, err error) {
	b, err := w.byte()
	if err != nil || b == 0 {
		return 0, 0, err == nil, err
	}
	typ = b & 0x0f
	if delta := int16(b >> 4); delta != 0 {
		return typ, last + delta, false, nil
	}
	v, err := w.zigzag()
	return typ, int16(v), false, err
}

// skip passes over one value of type typ at nesting depth.
func (w *thriftWalker) skip(typ byte, depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: nested deeper than %d", errThrift, maxThriftDepth)
	}
	switch typ {
	case tBoolTrue, tBoolFalse:
		return nil // a field's value is in its header
	case tByte:
		_, err := w.byte()
		return err
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		if len(w.b)-w.off < 8 {
			return fmt.Errorf("%w: truncated", errThrift)
		}
		w.off += 8
		return nil
	case tBinary:
		n, err := w.length(1)
		w.off += n
		return err
	case tList, tSet:
		return w.skipList(depth)
	case tMap:
		return w.skipMap(depth)
	case tStruct:
		var id int16
		for {
			ftyp, fid, stop, err := w.fieldHeader(id)
			if err != nil || stop {
				return err
			}
			id = fid
			if err := w.skip(ftyp, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%w: unknown type %d", errThrift, typ)
}

func (w *thriftWalker) skipList(depth int) error {
	h, err := w.byte()
	if err != nil {
		return err
	}
	n, elem := int(h>>4), h&0x0f
	if n == 15 {
		if n, err = w.length(1); err != nil {
			return err
		}
	} else if n > len(w.b)-w.off {
		return fmt.Errorf("%w: length %d past the end", errThrift, n)
	}
	if err := w.count(n); err != nil {
		return err
	}
	if depth == 1 {
		w.listLen = n
	}
	for range n {
		if elem == tBoolTrue || elem == tBoolFalse {
			// In a list, a boolean takes a byte.
			if _, err := w.byte(); err != nil {
				return err
			}
			continue
		}
		if err := w.skip(elem, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (w *thriftWalker) skipMap(depth int) error {
	n, err := w.length(2)
	if err != nil || n == 0 {
		return err
	}
	if err := w.count(n); err != nil {
		return err
	}
	kv, err := w.byte()
	if err != nil {
		return err
	}
	for range n {
		for _, t := range []byte{kv >> 4, kv & 0x0f} {
			if t == tBoolTrue || t == tBoolFalse {
				if _, err := w.byte(); err != nil {
					return err
				}
				continue
			}
			if err := w.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
