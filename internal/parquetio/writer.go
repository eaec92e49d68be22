package parquetio

import (
	"context"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
)

// rowsPerGroup bounds the rows a Writer buffers before it writes a row
// group.
const rowsPerGroup = 64 << 10

// Writer streams rows of type T to one Parquet object; nothing is visible
// under the object's name unless Close succeeds. Not safe for concurrent
// use.
type Writer[T any] struct {
	bw   *blobio.Writer
	pw   *parquet.GenericWriter[T]
	buf  []T
	key  string
	name string // the writing package: the errors' prefix
	rows int64
}

// NewWriter starts writing the object key of bucket on behalf of package
// name, which the file's created_by ("lakegc/<name>") and the errors'
// messages ("<name>: write <key>: …") name.
func NewWriter[T any](ctx context.Context, bucket *blob.Bucket, key, name string) (*Writer[T], error) {
	bw, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "application/vnd.apache.parquet"})
	if err != nil {
		return nil, fmt.Errorf("%s: write %s: %w", name, key, err)
	}
	pw := parquet.NewGenericWriter[T](bw,
		parquet.DataPageVersion(1),
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
		parquet.CreatedBy("lakegc/"+name, "", ""),
	)
	return &Writer[T]{bw: bw, pw: pw, buf: make([]T, 0, 1024), key: key, name: name}, nil
}

// Write adds a row.
func (w *Writer[T]) Write(row T) error {
	w.buf = append(w.buf, row)
	w.rows++
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *Writer[T]) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.pw.Write(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("%s: write %s: %w", w.name, w.key, err)
	}
	return nil
}

// Close writes the rest and finishes the object, which exists if and only
// if Close returns nil.
func (w *Writer[T]) Close() error {
	err := w.flush()
	if err == nil {
		err = w.pw.Close()
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("%s: write %s: %w", w.name, w.key, err)
	}
	if err := w.bw.Close(); err != nil {
		return fmt.Errorf("%s: write %s: %w", w.name, w.key, err)
	}
	return nil
}

// Rows counts the rows written.
func (w *Writer[T]) Rows() int64 { return w.rows }

// Size is the object's size in bytes once Close succeeded (before, what
// was written of it).
func (w *Writer[T]) Size() int64 { return w.bw.Written() }

// Abort gives the object up: nothing appears under its name.
func (w *Writer[T]) Abort() { w.bw.Abort() }
