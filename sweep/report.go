package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"unsafe"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
)

// The report's Parquet files use data page v1 and PLAIN strings, which every
// reader reads (parquet-go's defaults, v2 pages and DELTA_LENGTH_BYTE_ARRAY,
// are rejected by Spark's vectorised reader before Spark 3.4), and Snappy,
// Spark's default codec.

// addressRow is a row of deleted/.
type addressRow struct {
	Address string `parquet:"address,plain"`
}

// failedRow is a row of failed/.
type failedRow struct {
	Address string `parquet:"address,plain"`
	Error   string `parquet:"error,plain"`
}

// partName is the name of the one part file Mark and Sweep write in deleted/
// and failed/.
const partName = "part-00000.snappy.parquet"

// rowsPerGroup bounds the rows a Parquet writer buffers before it writes a
// row group.
const rowsPerGroup = 64 << 10

// partWriter streams rows of type T to one Parquet object; nothing is visible
// under the object's name unless close succeeds.
type partWriter[T any] struct {
	bw   *blobio.Writer
	pw   *parquet.GenericWriter[T]
	buf  []T
	key  string
	rows int64
}

func newPartWriter[T any](ctx context.Context, bucket *blob.Bucket, key string) (*partWriter[T], error) {
	bw, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "application/vnd.apache.parquet"})
	if err != nil {
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	pw := parquet.NewGenericWriter[T](bw,
		parquet.DataPageVersion(1),
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
		parquet.CreatedBy("lakegc/sweep", "", ""),
	)
	return &partWriter[T]{bw: bw, pw: pw, buf: make([]T, 0, 1024), key: key}, nil
}

func (w *partWriter[T]) write(row T) error {
	w.buf = append(w.buf, row)
	w.rows++
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *partWriter[T]) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.pw.Write(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	return nil
}

func (w *partWriter[T]) close() error {
	err := w.flush()
	if err == nil {
		err = w.pw.Close()
	}
	if err != nil {
		w.abort()
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	if err := w.bw.Close(); err != nil {
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	return nil
}

func (w *partWriter[T]) abort() { w.bw.Abort() }

// isPart reports whether a name found in a report folder (relative to it) is
// a data file: Spark's markers and checksums (_SUCCESS, .part-….crc,
// _temporary/) start with '_' or '.'.
func isPart(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if el == "" || el[0] == '_' || el[0] == '.' {
			return false
		}
	}
	return true
}

// listParts returns the data files under dir, sorted.
func listParts(ctx context.Context, bucket *blob.Bucket, dir string) ([]string, error) {
	var parts []string
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sweep: list %s: %w", dir, err)
		}
		if !o.IsDir && strings.HasPrefix(o.Key, dir) && isPart(o.Key[len(dir):]) {
			parts = append(parts, o.Key)
		}
	}
	slices.Sort(parts)
	return parts, nil
}

// removeFolder deletes every object under dir.
func removeFolder(ctx context.Context, bucket *blob.Bucket, cs classifiers, dir string) error {
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil && !o.IsDir {
			err = bucket.Delete(ctx, o.Key)
			if cs.isNotFound(err) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("sweep: remove %s: %w", dir, err)
		}
	}
}

// Candidates yields the addresses of a run's deleted/ folder, written by Mark
// or by lakeFS's Spark client (several part files, _SUCCESS, any extra
// columns; null addresses are skipped). Parts compressed with every codec
// parquet-go reads are read: Snappy (Spark's default), GZIP, ZSTD, LZ4_RAW,
// Brotli or none; LZ4 in Hadoop's framing (Spark's "lz4" before parquet-mr
// 1.12) and LZO are refused with ErrInvalidInput, and so are LZ4_RAW pages
// that compress less than 3:1, which parquet-go v0.32 reads wrong without an
// error.
//
// Memory is bounded whatever a part holds: before parquet-go reads it,
// package parquetguard reads its footer and address pages and uncompresses
// each page through a decoder capped at the size its header claims. A part
// that claims more than it holds, or more than pages of 16 MiB and 2^20
// values, addresses of 64 KiB or a footer of 16 MiB, is refused with
// ErrInvalidInput having cost a few MiB; reading the costliest part within
// those limits peaked at about 170 MiB of heap (tests hold it under 320
// MiB). Each part is read twice. Candidates does not look at the summary: see ReadSummary, or
// Sweep, which checks it.
func Candidates(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if bucket == nil {
			yield("", fmt.Errorf("%w: nil bucket", ErrInvalidInput))
			return
		}
		if err := validRunID(runID); err != nil {
			yield("", err)
			return
		}
		if err := validPrefix(storagePrefix); err != nil {
			yield("", err)
			return
		}
		parts, err := listParts(ctx, bucket, reportDir(storagePrefix, runID)+layout.DeletedFolder)
		if err != nil {
			yield("", err)
			return
		}
		for _, key := range parts {
			if !yieldAddresses(ctx, bucket, key, yield) {
				return
			}
		}
	}
}

// yieldAddresses yields the address column of one Parquet object; false when
// the consumer stopped or an error was yielded.
func yieldAddresses(ctx context.Context, bucket *blob.Bucket, key string, yield func(string, error) bool) bool {
	attrs, err := bucket.Attributes(ctx, key)
	if err != nil {
		return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
	}
	pr, err := openAddresses(blobio.NewReaderAt(ctx, bucket, key, attrs.Size, partWindow), attrs.Size)
	if err != nil {
		return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
	}
	defer pr.close()
	for {
		batch, err := pr.nextBatch()
		if err != nil {
			return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
		}
		if batch == nil {
			return true
		}
		for _, a := range batch {
			if !yield(a, nil) {
				return false
			}
		}
	}
}

// partWindow is how much of a part Candidates fetches per range read.
const partWindow = 1 << 20

// addressReader reads the "address" column of a Parquet file, a bounded
// batch of values at a time. The file is outside input: a panic of the
// decoder becomes an error.
type addressReader struct {
	f      *parquet.File
	col    int
	rg     int
	pages  parquet.Pages
	page   parquet.Page // being read, nil between pages
	vr     parquet.ValueReader
	left   int64 // values of page not read yet
	values []parquet.Value
	batch  []string
}

// batchValues bounds the values of a batch: at most 256 addresses of
// parquetguard's largest value, 64 KiB, whatever a page holds.
const batchValues = 256

func openAddresses(r io.ReaderAt, size int64) (ar *addressReader, err error) {
	defer recoverInto(&err)
	f, err := parquetguard.Open(r, size, parquetguard.Limits{}, "address")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	leaf, ok := f.Schema().Lookup("address")
	if !ok {
		return nil, fmt.Errorf("%w: no address column", ErrInvalidInput)
	}
	if leaf.Node.Type().Kind() != parquet.ByteArray || leaf.MaxRepetitionLevel != 0 {
		return nil, fmt.Errorf("%w: address column is not a string", ErrInvalidInput)
	}
	return &addressReader{f: f, col: leaf.ColumnIndex, values: make([]parquet.Value, batchValues)}, nil
}

// nextBatch returns the next addresses, nil at the end; the slice is reused
// by the next call.
func (ar *addressReader) nextBatch() (batch []string, err error) {
	defer recoverInto(&err)
	for {
		if ar.page == nil {
			if err := ar.nextPage(); err != nil || ar.page == nil {
				return nil, err
			}
		}
		n, err := ar.vr.ReadValues(ar.values[:min(int64(len(ar.values)), ar.left)])
		ar.left -= int64(n)
		batch = ar.batch[:0]
		for _, v := range ar.values[:n] {
			if !v.IsNull() {
				batch = append(batch, string(v.ByteArray()))
			}
		}
		ar.batch = batch
		if err == nil && n == 0 {
			err = errors.New("no values read")
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%w: parquet values: %w", ErrInvalidInput, err)
		}
		if err == io.EOF || ar.left == 0 {
			parquet.Release(ar.page)
			ar.page = nil
		}
		if len(batch) > 0 {
			return batch, nil
		}
	}
}

// nextPage moves to the next page of the column, leaving page nil at the
// end of the file.
func (ar *addressReader) nextPage() error {
	for {
		if ar.pages == nil {
			groups := ar.f.RowGroups()
			if ar.rg >= len(groups) {
				return nil
			}
			chunks := groups[ar.rg].ColumnChunks()
			if ar.col >= len(chunks) {
				return fmt.Errorf("%w: row group %d has no column %d", ErrInvalidInput, ar.rg, ar.col)
			}
			ar.pages = chunks[ar.col].Pages()
			ar.rg++
		}
		page, err := ar.pages.ReadPage()
		if err == io.EOF {
			ar.pages.Close()
			ar.pages = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: parquet page: %w", ErrInvalidInput, err)
		}
		if page.NumValues() == 0 {
			parquet.Release(page)
			continue
		}
		ar.page, ar.vr, ar.left = page, page.Values(), page.NumValues()
		return nil
	}
}

func (ar *addressReader) close() {
	if ar.page != nil {
		parquet.Release(ar.page)
	}
	if ar.pages != nil {
		ar.pages.Close()
	}
}

// recoverInto turns a panic of a decoder of outside input into an error.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: corrupt parquet: %v", ErrInvalidInput, r)
	}
}

// strArena makes strings of byte slices, packed in chunks rather than
// allocated one by one. A chunk is never written again once a string points
// into it, so each string stays as immutable as any other, however long its
// holder keeps it; a chunk goes when no string of it is left.
type strArena struct{ chunk []byte }

// strChunk is the size of an arena's chunk: a few hundred keys.
const strChunk = 32 << 10

func (a *strArena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, max(strChunk, len(b)))
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[start], len(b))
}
