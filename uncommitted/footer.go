package uncommitted

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/parquetguard"
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
	tail, err := readTail(blobio.NewReaderAt(ctx, bucket, key, size, 0), size)
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

// numRows returns field 3 (num_rows, i64) of a Parquet FileMetaData in
// Thrift compact encoding, after checking that the whole structure is well
// formed (every length it declares fits in the bytes that follow) and
// within maxThriftDepth, maxFooterItems and maxSchemaElements: then
// parquet-go decodes and opens it in bounded memory.
func numRows(footer []byte) (int64, error) {
	rows, err := parquetguard.FooterRows(footer, parquetguard.FooterLimits{
		Depth:  maxThriftDepth,
		Items:  maxFooterItems,
		Schema: maxSchemaElements,
	})
	if err != nil {
		return 0, fmt.Errorf("%w: malformed footer: %w", ErrInvalidFile, err)
	}
	return rows, nil
}
