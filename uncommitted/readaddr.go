package uncommitted

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/parquetguard"
)

// readAddresses yields the addresses of one file, which must hold wantRows
// rows when wantRows >= 0; it returns false when iteration must stop (the
// consumer stopped, or an error was yielded). The file's footer is opened
// as readFile opens it, and its physical_address column read by
// parquetguard.ReadPlain, which checks each page and hands over its values
// (readPlain): each page is read and uncompressed once. A column ReadPlain
// does not hand over (optional, with a dictionary or other encodings) is
// read as before, from where readPlain stopped: parquetguard checks every
// page of the column, then parquet-go decodes them (readPages). Every row
// group's chunk must hold as many values as the row group has rows (whose
// sum openFile checked is the footer's): parquet-go's page reader can stop
// short of a damaged chunk's end without an error.
func readAddresses(ctx context.Context, bucket *blob.Bucket, key string, size, wantRows int64, yield func(string, error) bool) bool {
	fail := func(err error) bool {
		yield("", fmt.Errorf("uncommitted: read %s: %w", key, err))
		return false
	}
	ra := blobio.NewReaderAt(ctx, bucket, key, size, readWindow, blobio.WithReadAhead(readAhead))
	defer ra.Close()
	f, pinned, col, err := openFile(ra, size)
	if err != nil {
		return fail(err)
	}
	if wantRows >= 0 && f.NumRows() != wantRows {
		return fail(fmt.Errorf("%w: the footer says %d rows, the manifest %d", ErrIncomplete, f.NumRows(), wantRows))
	}
	read, err := readPlain(ctx, pinned, size, f, yield)
	switch {
	case err == nil:
		return true
	case errors.Is(err, errStopped):
		return false
	case !errors.Is(err, parquetguard.ErrNotPlain):
		return fail(err)
	}
	if plainFallbackHook != nil {
		plainFallbackHook()
	}
	if err := parquetguard.Check(pinned, size, guardLimits, "physical_address"); err != nil {
		return fail(fmt.Errorf("%w: %w", ErrInvalidFile, err))
	}
	return readPages(ctx, f, col, read, fail, yield)
}

// errStopped ends readPlain when its consumer stops.
var errStopped = errors.New("uncommitted: stopped")

// Hooks for tests, nil otherwise: plainFallbackHook is called for each
// file readPlain did not read whole, before the rest is read through
// parquet-go; plainPageHook for each page ReadPlain hands over, with its
// number in the file (from 1), before its addresses are yielded: an error
// wrapping parquetguard.ErrNotPlain makes readPlain stop there, as at a
// page ReadPlain does not hand over, so that the rest is read by
// readPages.
var (
	plainFallbackHook func()
	plainPageHook     func(page int) error
)

// readPlain yields the addresses of f, a file of size bytes read through r,
// from the pages parquetguard.ReadPlain hands over, and returns how many it
// yielded; an error wrapping parquetguard.ErrNotPlain says that the column
// is not PLAIN values throughout, and that the addresses from the one
// after the last yielded are still to be read. The values of a page are
// copied into one string, which its addresses share: a page costs one
// allocation, not one a row. errStopped says the consumer stopped.
//
// A page is as parquetguard.PageFunc states: n values, each after its
// length, that fill it exactly, of row group rg of the footer ReadPlain
// decodes from r, which holds the bytes f was opened from (the pinned
// tail): rg indexes f's row groups. Nothing of that is checked again here.
// What ReadPlain leaves to its caller is: every row group's chunk must hold
// as many values as it has rows (a required column: one a row), or the
// file is refused. The file's rows are then the footer's, as openFile's
// checkChunks made the row groups' rows add up to it.
func readPlain(ctx context.Context, r io.ReaderAt, size int64, f *parquet.File, yield func(string, error) bool) (read int64, err error) {
	rgs := f.Metadata().RowGroups
	values := make([]int64, len(rgs)) // the values read of each row group
	var ours error                    // what the page function ended ReadPlain with
	pages := 0                        // counted for plainPageHook only
	err = parquetguard.ReadPlain(r, size, guardLimits, "physical_address", func(rg int, page []byte, n int) error {
		if plainPageHook != nil {
			pages++
			if err := plainPageHook(pages); err != nil {
				return err
			}
		}
		all := string(page)
		for off := 0; off < len(all); {
			l := int(binary.LittleEndian.Uint32(page[off:]))
			off += 4
			if !yield(all[off:off+l], nil) {
				ours = errStopped
				return ours
			}
			off += l
		}
		values[rg] += int64(n)
		read += int64(n)
		if err := ctx.Err(); err != nil {
			ours = err
			return ours
		}
		return nil
	})
	switch {
	case ours != nil:
		return read, ours
	case errors.Is(err, parquetguard.ErrNotPlain):
		return read, err
	case err != nil:
		return read, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	for i, rg := range rgs {
		if values[i] != rg.NumRows {
			return read, fmt.Errorf("%w: row group %d: %d values of physical_address, %d rows", ErrInvalidFile, i, values[i], rg.NumRows)
		}
	}
	return read, nil
}

// readPages yields the addresses of column col of f but the first skip,
// decoded by parquet-go, whose pages parquetguard checked; it returns
// false when iteration must stop.
func readPages(ctx context.Context, f *parquet.File, col int, skip int64, fail func(error) bool, yield func(string, error) bool) bool {
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
				if skip > 0 {
					skip--
					continue
				}
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
