package uncommitted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"strings"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
)

// ErrInvalidFile is wrapped by ReadRun's error for a file of the run that
// is not a Parquet file with a physical_address string column, or whose
// footer disagrees with itself or with the rows stored: such a file is
// refused rather than read short.
var ErrInvalidFile = errors.New("uncommitted: invalid run file")

// readWindow is how much of a file ReadRun fetches per range read.
const readWindow = 1 << 20

// ReadRun yields every row of every file of a run, file by file in key
// order: the addresses a GC must keep. It reads the files Prepare wrote, and
// those lakeFS writes; names starting with '_' or '.' (markers such as
// _SUCCESS) are skipped. A file that cannot be read whole ends the
// iteration with an error, possibly after some of its rows (wrapping
// ErrInvalidFile when the file is damaged): a GC must not run on a partial
// read.
//
// Memory is bounded whatever the files hold, and their size and number:
// before parquet-go reads a file, package parquetguard reads its footer and
// pages and uncompresses each page through a decoder capped at the size its
// header claims. A file that claims more than it holds, or more than pages
// of 16 MiB and 2^20 values, values of 64 KiB or a footer of 16 MiB, is
// refused with ErrInvalidFile having cost a few MiB; reading the costliest
// file within those limits peaked at about 230 MiB of heap (tests hold it
// under 320 MiB).
// Every codec parquet-go reads is read (GZIP, lakeFS's, Snappy, ZSTD,
// LZ4_RAW, Brotli, none), but for LZ4_RAW pages that compress less than
// 3:1, which parquet-go v0.32 reads wrong without an error: they are
// refused, as is LZ4 in Hadoop's framing. Each file is read twice. A
// consumer may stop early; every reader is closed.
func ReadRun(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		if err := validRunID(runID); err != nil {
			yield(Row{}, err)
			return
		}
		list := bucket.List(&blob.ListOptions{Prefix: runFolder(cleanPrefix(storagePrefix), runID)})
		for {
			if err := ctx.Err(); err != nil {
				yield(Row{}, err)
				return
			}
			obj, err := list.Next(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Row{}, fmt.Errorf("uncommitted: list run %s: %w", runID, err))
				return
			}
			if obj.IsDir || strings.HasPrefix(path.Base(obj.Key), "_") || strings.HasPrefix(path.Base(obj.Key), ".") {
				continue
			}
			if !readFile(ctx, bucket, obj.Key, obj.Size, yield) {
				return
			}
		}
	}
}

// readFile yields the rows of one file; it returns false when iteration
// must stop (the consumer stopped, or an error was yielded).
func readFile(ctx context.Context, bucket *blob.Bucket, key string, size int64, yield func(Row, error) bool) bool {
	fail := func(err error) bool {
		yield(Row{}, fmt.Errorf("uncommitted: read %s: %w", key, err))
		return false
	}
	ra := &blobReaderAt{ctx: ctx, bucket: bucket, key: key, size: size}
	r, want, err := openRows(ra, size)
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	rows := make([]Row, 256)
	var read int64
	for {
		n, err := readRows(r, rows)
		read += int64(n)
		if err == io.EOF && read != want {
			// parquet-go's reader can stop short of a damaged file's
			// end without an error: a GC reading fewer rows deletes
			// live objects.
			return fail(fmt.Errorf("%w: %d rows, the footer says %d", ErrInvalidFile, read, want))
		}
		for _, row := range rows[:n] {
			if !yield(row, nil) {
				return false
			}
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			return fail(err)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
}

// openRows opens a Parquet file of rows, and returns the number of rows its
// footer says it holds. parquetguard checks every page first, so that what
// parquet-go allocates for the file stays bounded; parquet-go may still
// panic on a corrupt file: that is reported as ErrInvalidFile.
func openRows(ra io.ReaderAt, size int64) (r *parquet.GenericReader[Row], numRows int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, numRows, err = nil, 0, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	if err := parquetguard.Check(ra, size, parquetguard.Limits{}, "physical_address", "creation_date"); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	col, ok := f.Schema().Lookup("physical_address")
	if !ok || col.Node.Type().Kind() != parquet.ByteArray || col.MaxRepetitionLevel > 0 {
		return nil, 0, fmt.Errorf("%w: no physical_address string column", ErrInvalidFile)
	}
	if err := checkChunks(f); err != nil {
		return nil, 0, err
	}
	return parquet.NewGenericReader[Row](f), f.NumRows(), nil
}

// checkChunks checks that the footer's column chunks agree with its schema
// and row counts: parquet-go trusts them, and on a damaged footer it reads
// values of the wrong type or stops short without an error.
func checkChunks(f *parquet.File) error {
	md := f.Metadata()
	var rows int64
	for i, rg := range md.RowGroups {
		rows += rg.NumRows
		for j, chunk := range rg.Columns {
			leaf, ok := f.Schema().Lookup(chunk.MetaData.PathInSchema...)
			switch {
			case !ok || leaf.ColumnIndex != j:
				return fmt.Errorf("%w: row group %d: chunk %d is column %q", ErrInvalidFile, i, j, chunk.MetaData.PathInSchema)
			case leaf.Node.Type().Kind() != parquet.Kind(chunk.MetaData.Type):
				return fmt.Errorf("%w: row group %d: column %q: chunk of type %v", ErrInvalidFile, i, chunk.MetaData.PathInSchema, chunk.MetaData.Type)
			case leaf.MaxRepetitionLevel == 0 && chunk.MetaData.NumValues != rg.NumRows:
				return fmt.Errorf("%w: row group %d: column %q: %d values in %d rows", ErrInvalidFile, i, chunk.MetaData.PathInSchema, chunk.MetaData.NumValues, rg.NumRows)
			}
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("%w: %d rows in row groups, %d in the footer", ErrInvalidFile, rows, md.NumRows)
	}
	return nil
}

// readRows reads the next rows, reporting a panic of parquet-go on a
// corrupt page as ErrInvalidFile.
func readRows(r *parquet.GenericReader[Row], rows []Row) (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	n, err = r.Read(rows)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	return n, err
}

// blobReaderAt reads a blob by ranges of at least readWindow bytes, and
// serves reads within the last window from memory.
type blobReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64

	winOff int64
	win    []byte
}

func (r *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if off < r.winOff || off+want > r.winOff+int64(len(r.win)) {
		if err := r.fill(off, want); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.win[off-r.winOff:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *blobReaderAt) fill(off, want int64) error {
	length := min(max(want, readWindow), r.size-off)
	rr, err := r.bucket.NewRangeReader(r.ctx, r.key, off, length, nil)
	if err != nil {
		return err
	}
	defer rr.Close()
	if int64(cap(r.win)) < length {
		r.win = make([]byte, length)
	}
	r.win = r.win[:length]
	if _, err := io.ReadFull(rr, r.win); err != nil {
		r.win = r.win[:0]
		return err
	}
	r.winOff = off
	return nil
}
