package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakegc/lakegc/internal/parquetguard"
)

// parquetColumns names the columns of a Parquet report; absent ones are "".
type parquetColumns struct {
	bucket, key, size, modified, latest, marker, snapshot string
}

// s3ParquetColumns are S3 Inventory's.
var s3ParquetColumns = parquetColumns{
	bucket: "bucket", key: "key", size: "size", modified: "last_modified_date",
	latest: "is_latest", marker: "is_delete_marker",
}

// parquetBatch is how many rows are read at once: 256 keys of parquetguard's
// largest value, 64 KiB, whatever a page holds.
const parquetBatch = 256

func readS3Parquet(ctx context.Context, r *Report, f reportFile, rows *int64, yield func(Object, error) bool) bool {
	return readParquetFile(ctx, r, f, s3ParquetColumns, rows, yield)
}

// readParquetFile copies one Parquet file of a report to a temporary file,
// checking its size and MD5, checks it with parquetguard, and yields its
// rows' objects; false when it yielded an error or the consumer stopped.
func readParquetFile(ctx context.Context, r *Report, f reportFile, cols parquetColumns, rows *int64, yield func(Object, error) bool) bool {
	fail := func(err error) bool {
		yield(Object{}, err)
		return false
	}
	tmp, err := r.copyToTemp(ctx, f)
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	pr, err := openParquet(tmp, f.size, cols)
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %w", ErrInvalidInput, f.key, err))
	}
	for {
		batch, err := pr.next()
		if err != nil {
			return fail(fmt.Errorf("%w: %s: %w", ErrInvalidInput, f.key, err))
		}
		if batch == nil {
			return true
		}
		*rows += int64(len(batch))
		for _, row := range batch {
			if row.bucket != r.srcBucket && pr.bucket >= 0 {
				return fail(fmt.Errorf("%w: %s: bucket %q, not %q", ErrInvalidInput, f.key, row.bucket, r.srcBucket))
			}
			if !row.current {
				continue
			}
			o := row.obj
			var ok bool
			if o.Key, ok = r.relative(o.Key); !ok {
				continue
			}
			if !yield(o, nil) {
				return false
			}
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
}

// parquetRow is one decoded row.
type parquetRow struct {
	bucket  string
	obj     Object
	current bool // the current version, not a delete marker
}

// parquetReader reads the columns of a report's Parquet file in step, a
// batch of rows at a time. A panic of parquet-go is an error.
type parquetReader struct {
	f                                                     *parquet.File
	bucket, key, size, modified, latest, marker, snapshot int // column indexes, -1 when absent
	unit                                                  time.Duration
	rg                                                    int
	left                                                  int64 // rows of the row group not read yet
	readers                                               []*columnReader
	vals                                                  [7][]parquet.Value
	rows                                                  []parquetRow
}

func openParquet(file io.ReaderAt, size int64, cols parquetColumns) (pr *parquetReader, err error) {
	defer recoverInto(&err)
	names := []string{cols.bucket, cols.key, cols.size, cols.modified, cols.latest, cols.marker, cols.snapshot}
	var want []string
	for _, n := range names {
		if n != "" {
			want = append(want, n)
		}
	}
	f, err := parquetguard.Open(file, size, parquetguard.Limits{}, want...)
	if err != nil {
		return nil, err
	}
	pr = &parquetReader{f: f}
	idx := []*int{&pr.bucket, &pr.key, &pr.size, &pr.modified, &pr.latest, &pr.marker, &pr.snapshot}
	kinds := []parquet.Kind{parquet.ByteArray, parquet.ByteArray, parquet.Int64, parquet.Int64, parquet.Boolean, parquet.Boolean, parquet.ByteArray}
	for i, n := range names {
		*idx[i] = -1
		if n == "" {
			continue
		}
		leaf, ok := f.Schema().Lookup(n)
		if !ok {
			continue
		}
		if leaf.MaxRepetitionLevel != 0 || leaf.Node.Type().Kind() != kinds[i] {
			return nil, fmt.Errorf("column %q is not a single %v", n, kinds[i])
		}
		*idx[i] = leaf.ColumnIndex
		if i == 3 {
			if pr.unit, err = timestampUnit(leaf.Node.Type()); err != nil {
				return nil, fmt.Errorf("column %q: %w", n, err)
			}
		}
	}
	if pr.key < 0 || pr.size < 0 || pr.modified < 0 {
		return nil, fmt.Errorf("no %q, %q or %q column", cols.key, cols.size, cols.modified)
	}
	for i := range pr.vals {
		pr.vals[i] = make([]parquet.Value, parquetBatch)
	}
	return pr, nil
}

// timestampUnit returns the unit of an INT64 timestamp column.
func timestampUnit(t parquet.Type) (time.Duration, error) {
	if lt := t.LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			return ts.Unit.Value.Duration(), nil
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis:
			return time.Millisecond, nil
		case deprecated.TimestampMicros:
			return time.Microsecond, nil
		}
	}
	return 0, errors.New("not a timestamp")
}

// next returns the next rows, nil at the end of the file; the slice is
// reused by the next call.
func (pr *parquetReader) next() (rows []parquetRow, err error) {
	defer recoverInto(&err)
	for pr.left == 0 {
		pr.closeReaders()
		groups := pr.f.RowGroups()
		if pr.rg >= len(groups) {
			return nil, nil
		}
		g := groups[pr.rg]
		pr.rg++
		pr.left = g.NumRows()
		chunks := g.ColumnChunks()
		pr.readers = pr.readers[:0]
		for _, c := range []int{pr.bucket, pr.key, pr.size, pr.modified, pr.latest, pr.marker, pr.snapshot} {
			if c < 0 {
				pr.readers = append(pr.readers, nil)
				continue
			}
			if c >= len(chunks) {
				return nil, fmt.Errorf("row group %d has no column %d", pr.rg-1, c)
			}
			pr.readers = append(pr.readers, &columnReader{pages: chunks[c].Pages()})
		}
	}
	n := int(min(int64(parquetBatch), pr.left))
	for i, cr := range pr.readers {
		if cr == nil {
			continue
		}
		if err := cr.read(pr.vals[i][:n]); err != nil {
			return nil, err
		}
	}
	pr.left -= int64(n)
	pr.rows = pr.rows[:0]
	for j := range n {
		row := parquetRow{current: true}
		if pr.bucket >= 0 {
			row.bucket = string(pr.vals[0][j].ByteArray())
		}
		if v := pr.vals[4][j]; pr.latest >= 0 && !v.IsNull() && !v.Boolean() {
			row.current = false
		}
		if v := pr.vals[5][j]; pr.marker >= 0 && !v.IsNull() && v.Boolean() {
			row.current = false
		}
		if v := pr.vals[6][j]; pr.snapshot >= 0 && !v.IsNull() && len(v.ByteArray()) > 0 {
			row.current = false
		}
		key := pr.vals[1][j]
		if key.IsNull() || len(key.ByteArray()) == 0 {
			return nil, errors.New("a row without a key")
		}
		row.obj.Key = string(key.ByteArray())
		if row.current {
			size := pr.vals[2][j]
			if size.IsNull() || size.Int64() < 0 {
				return nil, fmt.Errorf("key %q: no size", row.obj.Key)
			}
			row.obj.Size = size.Int64()
			if mod := pr.vals[3][j]; !mod.IsNull() {
				// Checked before it is multiplied: a product past int64
				// would wrap around to any time, 1970 included. 2^62 ns
				// from 1970 is in 2116.
				v := mod.Int64()
				if v < 0 || v > int64(1<<62)/int64(pr.unit) {
					return nil, fmt.Errorf("key %q: last modified %d out of range", row.obj.Key, v)
				}
				row.obj.ModTime = time.Unix(0, 0).Add(time.Duration(v) * pr.unit).UTC()
			}
		}
		pr.rows = append(pr.rows, row)
	}
	return pr.rows, nil
}

func (pr *parquetReader) closeReaders() {
	for _, cr := range pr.readers {
		if cr != nil {
			cr.pages.Close()
		}
	}
	pr.readers = pr.readers[:0]
}

// columnReader reads the values of one column chunk, page after page.
type columnReader struct {
	pages parquet.Pages
	vr    parquet.ValueReader
	left  int64 // values of the page not read yet
}

// read fills dst with the next values, cloned (a page's memory is reused);
// fewer values than dst is an error.
func (c *columnReader) read(dst []parquet.Value) error {
	for got := 0; got < len(dst); {
		if c.left == 0 {
			page, err := c.pages.ReadPage()
			if err == io.EOF {
				return fmt.Errorf("a column ends %d values short", len(dst)-got)
			}
			if err != nil {
				return fmt.Errorf("parquet page: %w", err)
			}
			c.vr, c.left = page.Values(), page.NumValues()
			continue
		}
		k, err := c.vr.ReadValues(dst[got : got+int(min(int64(len(dst)-got), c.left))])
		for i := got; i < got+k; i++ {
			dst[i] = dst[i].Clone()
		}
		got += k
		c.left -= int64(k)
		if err != nil && err != io.EOF {
			return fmt.Errorf("parquet values: %w", err)
		}
		if k == 0 && err == nil {
			return errors.New("parquet: no values read")
		}
		if err == io.EOF && c.left > 0 {
			return fmt.Errorf("a page ends %d values short", c.left)
		}
	}
	return nil
}

// recoverInto turns a panic of parquet-go, reading an outside file, into
// an error.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("parquet: corrupt file: %v", v)
	}
}
