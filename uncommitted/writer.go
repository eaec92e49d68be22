package uncommitted

import (
	"context"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
)

// Row is one exported address, the schema of the Parquet files: lakeFS's
// UncommittedParquetObject. PhysicalAddress is relative to the storage
// namespace; CreationDate is in Unix seconds.
type Row struct {
	PhysicalAddress string `parquet:"physical_address"`
	CreationDate    int64  `parquet:"creation_date"`
}

const (
	// batchRows is how many rows are handed to parquet-go at once: large
	// enough to amortise its per-call work, small enough to keep the
	// pending bytes (part of the size estimate) to a few KiB.
	batchRows = 256
	// maxPageBufferSize is parquet-go's per-column buffer of values not
	// yet encoded; a page is encoded and compressed each time it fills.
	maxPageBufferSize = 256 << 10
	// maxRowGroupBytes caps the encoded row group that parquet-go holds in
	// memory before it is written out, whatever the file size budget.
	maxRowGroupBytes = 4 << 20
	// minRowGroupBytes keeps row groups of small budgets readable.
	minRowGroupBytes = 64 << 10
)

// rowGroupBytes is the encoded size at which a row group is flushed: an
// eighth of the file budget, within [minRowGroupBytes, maxRowGroupBytes].
func rowGroupBytes(maxFileSize int64) int64 {
	return min(max(maxFileSize/8, minRowGroupBytes), maxRowGroupBytes)
}

// pageBufferSize keeps the values not yet encoded small against the file
// budget: they count at their raw size in the size estimate, so a large
// buffer would stop small files well before their budget.
func pageBufferSize(maxFileSize int64) int {
	return int(min(max(maxFileSize/16, 4<<10), maxPageBufferSize))
}

// fileWriter streams one Parquet file into the bucket. Until commit
// returns, nothing is visible under the key: abort (or a cancelled ctx)
// aborts the write.
type fileWriter struct {
	blob    *blobio.Writer
	parquet *parquet.GenericWriter[Row]

	batch        []Row
	pendingBytes int64 // raw size of batch, not yet seen by parquet-go
	rowGroupAt   int64 // parquet.Size() when the current row group began
	rowGroupMax  int64
	rows         int64
}

func newFileWriter(ctx context.Context, bucket *blob.Bucket, key string, codec compress.Codec, maxFileSize int64) (*fileWriter, error) {
	bw, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return nil, fmt.Errorf("uncommitted: create %s: %w", key, err)
	}
	w := &fileWriter{
		blob: bw,
		parquet: parquet.NewGenericWriter[Row](bw,
			parquet.Compression(codec),
			// lakeFS writes data page v1 and PLAIN values; Spark's
			// vectorised reader rejects parquet-go's defaults (v2 pages,
			// DELTA_LENGTH_BYTE_ARRAY) before Spark 3.4.
			parquet.DataPageVersion(1),
			parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
			parquet.DefaultEncodingFor(parquet.Int64, &parquet.Plain),
			parquet.PageBufferSize(pageBufferSize(maxFileSize)),
			parquet.CreatedBy("github.com/lakegc/lakegc/uncommitted", "", ""),
		),
		batch:       make([]Row, 0, batchRows),
		rowGroupMax: rowGroupBytes(maxFileSize),
	}
	return w, nil
}

// size is the file's size if it were closed now, without the footer: the
// row groups written, the encoded pages of the current one, and the values
// not yet encoded at their raw size (an upper bound for them, since
// compression rarely expands text by more than its page headers).
func (w *fileWriter) size() int64 {
	return w.parquet.Size() + w.pendingBytes
}

func (w *fileWriter) write(r Row) error {
	w.batch = append(w.batch, r)
	w.pendingBytes += int64(len(r.PhysicalAddress)) + 8
	w.rows++
	if len(w.batch) == cap(w.batch) {
		return w.flushBatch()
	}
	return nil
}

func (w *fileWriter) flushBatch() error {
	if len(w.batch) == 0 {
		return nil
	}
	if _, err := w.parquet.Write(w.batch); err != nil {
		return fmt.Errorf("uncommitted: write rows: %w", err)
	}
	clear(w.batch) // drop the references to the source's strings
	w.batch = w.batch[:0]
	w.pendingBytes = 0
	if size := w.parquet.Size(); size-w.rowGroupAt >= w.rowGroupMax {
		if err := w.parquet.Flush(); err != nil {
			return fmt.Errorf("uncommitted: write row group: %w", err)
		}
		w.rowGroupAt = w.parquet.Size()
	}
	return nil
}

// commit writes the footer and closes the object, making it visible.
func (w *fileWriter) commit() error {
	if err := w.flushBatch(); err != nil {
		w.abort()
		return err
	}
	if err := w.parquet.Close(); err != nil {
		w.abort()
		return fmt.Errorf("uncommitted: write footer: %w", err)
	}
	if err := w.blob.Close(); err != nil {
		return fmt.Errorf("uncommitted: close file: %w", err)
	}
	return nil
}

// abort discards the file: no object appears under its key.
func (w *fileWriter) abort() { _ = w.blob.Abort() }
