package uncommitted

import (
	"context"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
)

// readAddresses yields the addresses of one file, which must hold wantRows
// rows when wantRows >= 0, reading its physical_address column page by
// page; it returns false when iteration must stop (the consumer stopped,
// or an error was yielded). The file is opened as readFile opens it, but
// parquetguard reads and parquet-go decodes that column only. Every
// row group's chunk must hold as many values as the row group has rows,
// and the file as many as its footer says: parquet-go's page reader can
// stop short of a damaged chunk's end without an error.
func readAddresses(ctx context.Context, bucket *blob.Bucket, key string, size, wantRows int64, yield func(string, error) bool) bool {
	fail := func(err error) bool {
		yield("", fmt.Errorf("uncommitted: read %s: %w", key, err))
		return false
	}
	ra := blobio.NewReaderAt(ctx, bucket, key, size, readWindow, blobio.WithReadAhead(readAhead))
	defer ra.Close()
	f, _, col, err := openFile(ra, size, "physical_address")
	if err != nil {
		return fail(err)
	}
	if wantRows >= 0 && f.NumRows() != wantRows {
		return fail(fmt.Errorf("%w: the footer says %d rows, the manifest %d", ErrIncomplete, f.NumRows(), wantRows))
	}
	var read int64
	var page addressPage
	for i, rg := range f.Metadata().RowGroups {
		pages, err := columnPages(f, i, col)
		if err != nil {
			return fail(err)
		}
		var values int64
		for {
			more, err := page.next(pages)
			if err != nil {
				pages.Close()
				return fail(err)
			}
			if !more {
				break
			}
			values += int64(len(page.addresses))
			for _, a := range page.addresses {
				if !yield(a, nil) {
					pages.Close()
					return false
				}
			}
			if err := ctx.Err(); err != nil {
				pages.Close()
				return fail(err)
			}
		}
		pages.Close()
		if values != rg.NumRows {
			return fail(fmt.Errorf("%w: row group %d: %d values of physical_address, %d rows", ErrInvalidFile, i, values, rg.NumRows))
		}
		read += values
	}
	if read != f.NumRows() {
		return fail(fmt.Errorf("%w: %d rows, the footer says %d", ErrInvalidFile, read, f.NumRows()))
	}
	return true
}

// columnPages returns the pages of column col of row group i, a panic of
// parquet-go an ErrInvalidFile.
func columnPages(f *parquet.File, i, col int) (pages parquet.Pages, err error) {
	defer func() {
		if v := recover(); v != nil {
			pages, err = nil, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	chunks := f.RowGroups()[i].ColumnChunks()
	if col >= len(chunks) {
		return nil, fmt.Errorf("%w: row group %d has no column %d", ErrInvalidFile, i, col)
	}
	return chunks[col].Pages(), nil
}

// addressPage holds the addresses of a page of the physical_address
// column, and the buffers that decode them.
type addressPage struct {
	addresses []string
	values    []parquet.Value
}

// next reads the next page of pages into p.addresses; it returns false at
// the end of the chunk. A null value (an optional column) is the empty
// address, as ReadRun's Row has it. The addresses of a page share one
// string: the page costs two allocations, not one a row. A panic of
// parquet-go is an ErrInvalidFile, as is its error.
func (p *addressPage) next(pages parquet.Pages) (more bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			more, err = false, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	page, err := pages.ReadPage()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	defer parquet.Release(page)
	n := page.NumValues()
	p.addresses = p.addresses[:0]
	if page.Dictionary() == nil && page.NumNulls() == 0 && len(page.DefinitionLevels()) == 0 {
		if data := page.Data(); data.Kind() == encoding.ByteArray {
			bytes, offsets := data.ByteArray()
			if int64(len(offsets)) != n+1 {
				return false, fmt.Errorf("%w: a page of %d values has %d offsets", ErrInvalidFile, n, len(offsets))
			}
			all := string(bytes)
			for i := range n {
				j, k := offsets[i], offsets[i+1]
				if j > k || int(k) > len(all) {
					return false, fmt.Errorf("%w: value %d of a page at bytes %d to %d of %d", ErrInvalidFile, i, j, k, len(all))
				}
				p.addresses = append(p.addresses, all[j:k])
			}
			return true, nil
		}
	}
	// Dictionaries, nulls: value by value.
	if int64(cap(p.values)) < min(n, 4096) {
		p.values = make([]parquet.Value, min(n, 4096))
	}
	r := page.Values()
	for left := n; left > 0; {
		m, err := r.ReadValues(p.values[:min(left, int64(cap(p.values)))])
		for _, v := range p.values[:m] {
			if v.IsNull() {
				p.addresses = append(p.addresses, "")
			} else {
				p.addresses = append(p.addresses, string(v.ByteArray()))
			}
		}
		left -= int64(m)
		if err == io.EOF || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("%w: %w", ErrInvalidFile, err)
		}
	}
	return true, nil
}
