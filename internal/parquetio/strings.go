package parquetio

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/lakegc/lakegc/internal/parquetguard"
)

// ErrInvalid is what every refusal of a part wraps: a file parquetguard
// refuses, a missing or non-string column, a decoder's error or panic.
var ErrInvalid = errors.New("invalid parquet part")

// Strings reads a string column of a Parquet file, a bounded batch of
// values at a time. Not safe for concurrent use.
type Strings struct {
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

// batchValues bounds the values of a batch: at most 256 strings of
// parquetguard's largest value, 64 KiB, whatever a page holds.
const batchValues = 256

// OpenStrings checks the file r of size bytes with parquetguard's default
// limits and opens its column, which must hold strings (a BYTE_ARRAY leaf,
// not repeated).
func OpenStrings(r io.ReaderAt, size int64, column string) (s *Strings, err error) {
	defer recoverInto(&err)
	f, err := parquetguard.Open(r, size, parquetguard.Limits{}, column)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	leaf, ok := f.Schema().Lookup(column)
	if !ok {
		return nil, fmt.Errorf("%w: no %s column", ErrInvalid, column)
	}
	if leaf.Node.Type().Kind() != parquet.ByteArray || leaf.MaxRepetitionLevel != 0 {
		return nil, fmt.Errorf("%w: %s column is not a string", ErrInvalid, column)
	}
	return &Strings{f: f, col: leaf.ColumnIndex, values: make([]parquet.Value, batchValues)}, nil
}

// Next returns the next values, nulls left out, or nil at the end; the
// slice is reused by the next call.
func (s *Strings) Next() (batch []string, err error) {
	defer recoverInto(&err)
	for {
		if s.page == nil {
			if err := s.nextPage(); err != nil || s.page == nil {
				return nil, err
			}
		}
		n, err := s.vr.ReadValues(s.values[:min(int64(len(s.values)), s.left)])
		s.left -= int64(n)
		batch = s.batch[:0]
		for _, v := range s.values[:n] {
			if !v.IsNull() {
				batch = append(batch, string(v.ByteArray()))
			}
		}
		s.batch = batch
		if err == nil && n == 0 {
			err = errors.New("no values read")
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%w: parquet values: %w", ErrInvalid, err)
		}
		if err == io.EOF || s.left == 0 {
			parquet.Release(s.page)
			s.page = nil
		}
		if len(batch) > 0 {
			return batch, nil
		}
	}
}

// nextPage moves to the next page of the column, leaving page nil at the
// end of the file.
func (s *Strings) nextPage() error {
	for {
		if s.pages == nil {
			groups := s.f.RowGroups()
			if s.rg >= len(groups) {
				return nil
			}
			chunks := groups[s.rg].ColumnChunks()
			if s.col >= len(chunks) {
				return fmt.Errorf("%w: row group %d has no column %d", ErrInvalid, s.rg, s.col)
			}
			s.pages = chunks[s.col].Pages()
			s.rg++
		}
		page, err := s.pages.ReadPage()
		if err == io.EOF {
			s.pages.Close()
			s.pages = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: parquet page: %w", ErrInvalid, err)
		}
		if page.NumValues() == 0 {
			parquet.Release(page)
			continue
		}
		s.page, s.vr, s.left = page, page.Values(), page.NumValues()
		return nil
	}
}

// Close releases the page being read.
func (s *Strings) Close() {
	if s.page != nil {
		parquet.Release(s.page)
	}
	if s.pages != nil {
		s.pages.Close()
	}
}

// recoverInto turns a panic of a decoder of outside input into an error.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: corrupt parquet: %v", ErrInvalid, r)
	}
}
