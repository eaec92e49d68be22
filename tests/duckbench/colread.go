package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// columnReader reads one column of a Parquet file page by page, row group
// after row group, without building rows: a page's values are decoded into
// one buffer, as DuckDB's reader does, rather than a struct per row. Null
// values are skipped.
type columnReader struct {
	name   string
	chunks []parquet.ColumnChunk // the column's chunk in each row group
	pages  parquet.Pages         // of chunks[0]
	page   parquet.Page          // the current page, released when done
	values encoding.Values
	n, i   int // values in the current page, and the next one
}

func openColumn(name string, pf *parquet.File, column string) (*columnReader, error) {
	leaf, ok := pf.Schema().Lookup(column)
	if !ok {
		return nil, fmt.Errorf("duckbench: %s has no column %q", name, column)
	}
	r := &columnReader{name: name}
	for _, rg := range pf.RowGroups() {
		r.chunks = append(r.chunks, rg.ColumnChunks()[leaf.ColumnIndex])
	}
	return r, nil
}

// next makes the next page with values current; false at the end.
func (r *columnReader) next() (bool, error) {
	for r.i >= r.n {
		r.release()
		if r.pages == nil {
			if len(r.chunks) == 0 {
				return false, nil
			}
			r.pages, r.chunks = r.chunks[0].Pages(), r.chunks[1:]
		}
		p, err := r.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			r.pages.Close()
			r.pages = nil
			continue
		}
		if err != nil {
			return false, fmt.Errorf("duckbench: read %s: %w", r.name, err)
		}
		r.page, r.values, r.i = p, p.Data(), 0
		switch r.values.Kind() {
		case encoding.ByteArray:
			_, offsets := r.values.ByteArray()
			r.n = max(len(offsets)-1, 0)
		case encoding.Int64:
			r.n = len(r.values.Int64())
		default:
			return false, fmt.Errorf("duckbench: read %s: unexpected kind of values %v", r.name, r.values.Kind())
		}
	}
	return true, nil
}

// bytes returns the next byte array value, valid until the page changes.
func (r *columnReader) bytes() ([]byte, bool, error) {
	if ok, err := r.next(); !ok || err != nil {
		return nil, false, err
	}
	data, offsets := r.values.ByteArray()
	v := data[offsets[r.i]:offsets[r.i+1]]
	r.i++
	return v, true, nil
}

// int64 returns the next int64 value.
func (r *columnReader) int64() (int64, bool, error) {
	if ok, err := r.next(); !ok || err != nil {
		return 0, false, err
	}
	v := r.values.Int64()[r.i]
	r.i++
	return v, true, nil
}

func (r *columnReader) release() {
	if r.page != nil {
		parquet.Release(r.page)
		r.page, r.n, r.i = nil, 0, 0
	}
}

func (r *columnReader) close() {
	r.release()
	if r.pages != nil {
		r.pages.Close()
		r.pages = nil
	}
}

// openParquet opens a Parquet file; the caller closes the *os.File.
func openParquet(name string) (*os.File, *parquet.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var pf *parquet.File
		if pf, err = parquet.OpenFile(f, st.Size()); err == nil {
			return f, pf, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("duckbench: open %s: %w", name, err)
}
