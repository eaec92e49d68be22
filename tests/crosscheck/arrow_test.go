package crosscheck_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	pq "github.com/parquet-go/parquet-go"
)

// arrowFile is what Arrow's reader saw in one Parquet file.
type arrowFile struct {
	schema  *schema.Schema
	numRows int64
	chunks  []chunk
	// columns holds every value of each column, by column name, as Arrow
	// decoded it: []string for strings, []int64 for INT64.
	columns map[string]any
}

// chunk is one column chunk of one row group.
type chunk struct {
	column    string
	codec     compress.Compression
	pageTypes map[file.PageType]int
	encodings map[parquet.Encoding]bool // value encodings of the data and dictionary pages
}

// readWithArrow decodes a Parquet file with Arrow: the metadata and pages
// through the low-level file reader, the values through pqarrow.
func readWithArrow(t *testing.T, data []byte) *arrowFile {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("arrow: open parquet: %v", err)
	}
	defer rdr.Close()

	f := &arrowFile{schema: rdr.MetaData().Schema, numRows: rdr.NumRows(), columns: map[string]any{}}
	for g := range rdr.NumRowGroups() {
		rg := rdr.RowGroup(g)
		for c := range rg.NumColumns() {
			meta, err := rg.MetaData().ColumnChunk(c)
			if err != nil {
				t.Fatalf("arrow: column chunk %d/%d: %v", g, c, err)
			}
			ch := chunk{
				column:    f.schema.Column(c).Name(),
				codec:     meta.Compression(),
				pageTypes: map[file.PageType]int{},
				encodings: map[parquet.Encoding]bool{},
			}
			pages, err := rg.GetColumnPageReader(c)
			if err != nil {
				t.Fatalf("arrow: page reader %d/%d: %v", g, c, err)
			}
			for pages.Next() {
				p := pages.Page()
				ch.pageTypes[p.Type()]++
				ch.encodings[parquet.Encoding(p.Encoding())] = true
			}
			if err := pages.Err(); err != nil {
				t.Fatalf("arrow: read pages %d/%d: %v", g, c, err)
			}
			f.chunks = append(f.chunks, ch)
		}
	}

	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 10}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("pqarrow: %v", err)
	}
	table, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("pqarrow: read table: %v", err)
	}
	defer table.Release()
	for i := range int(table.NumCols()) {
		col := table.Column(i)
		switch col.DataType().ID() {
		case arrow.STRING:
			var vals []string
			for _, arr := range col.Data().Chunks() {
				a := arr.(*array.String)
				for j := range a.Len() {
					if a.IsNull(j) {
						t.Fatalf("column %s: null at row %d", col.Name(), len(vals))
					}
					vals = append(vals, a.Value(j))
				}
			}
			f.columns[col.Name()] = vals
		case arrow.BINARY: // a column without the UTF8 annotation
			var vals []string
			for _, arr := range col.Data().Chunks() {
				a := arr.(*array.Binary)
				for j := range a.Len() {
					vals = append(vals, string(a.Value(j)))
				}
			}
			f.columns[col.Name()] = vals
		case arrow.INT64:
			var vals []int64
			for _, arr := range col.Data().Chunks() {
				a := arr.(*array.Int64)
				for j := range a.Len() {
					if a.IsNull(j) {
						t.Fatalf("column %s: null at row %d", col.Name(), len(vals))
					}
					vals = append(vals, a.Value(j))
				}
			}
			f.columns[col.Name()] = vals
		default:
			t.Fatalf("column %s: unexpected Arrow type %s", col.Name(), col.DataType())
		}
	}
	return f
}

// stringColumnProblems lists how column i differs from a BYTE_ARRAY
// annotated as a UTF8 string and named name.
func (f *arrowFile) stringColumnProblems(i int, name string) []string {
	var problems []string
	col := f.schema.Column(i)
	if col.Name() != name {
		problems = append(problems, fmt.Sprintf("column %d is %q, want %q", i, col.Name(), name))
	}
	if col.PhysicalType() != parquet.Types.ByteArray {
		problems = append(problems, fmt.Sprintf("column %s: physical type %s, want BYTE_ARRAY", name, col.PhysicalType()))
	}
	if _, ok := col.LogicalType().(schema.StringLogicalType); !ok {
		problems = append(problems, fmt.Sprintf("column %s: logical type %s, want String", name, col.LogicalType()))
	}
	if col.ConvertedType() != schema.ConvertedTypes.UTF8 {
		problems = append(problems, fmt.Sprintf("column %s: converted type %s, want UTF8", name, col.ConvertedType()))
	}
	return problems
}

// pageProblems lists the chunks whose codec is not codec, that hold data
// pages v2 or no data page v1, or whose values are neither PLAIN nor
// dictionary encoded.
func (f *arrowFile) pageProblems(codec compress.Compression) []string {
	var problems []string
	for _, ch := range f.chunks {
		if ch.codec != codec {
			problems = append(problems, fmt.Sprintf("column %s: codec %s, want %s", ch.column, ch.codec, codec))
		}
		if n := ch.pageTypes[file.PageTypeDataPageV2]; n > 0 {
			problems = append(problems, fmt.Sprintf("column %s: %d data pages v2, want v1 only", ch.column, n))
		}
		if ch.pageTypes[file.PageTypeDataPage] == 0 {
			problems = append(problems, fmt.Sprintf("column %s: no data page v1 (pages: %v)", ch.column, ch.pageTypes))
		}
		for enc := range ch.encodings {
			switch enc {
			case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
			default:
				problems = append(problems, fmt.Sprintf("column %s: value encoding %s, want PLAIN or dictionary", ch.column, enc))
			}
		}
	}
	return problems
}

func reportProblems(t *testing.T, what string, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
}

// The checks above must be able to fail: parquet-go's defaults (data page
// v2, DELTA_LENGTH_BYTE_ARRAY strings, no UTF8 annotation on a []byte
// column, no compression) are what Spark's vectorised reader rejects.
func TestChecksRejectParquetGoDefaults(t *testing.T) {
	type loose struct {
		PhysicalAddress []byte `parquet:"physical_address"`
		CreationDate    int64  `parquet:"creation_date"`
	}
	var buf bytes.Buffer
	w := pq.NewGenericWriter[loose](&buf)
	rows := make([]loose, 100)
	for i := range rows {
		rows[i] = loose{[]byte(fmt.Sprintf("data/x/%d", i)), int64(i)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := readWithArrow(t, buf.Bytes())
	if p := f.stringColumnProblems(0, "physical_address"); len(p) == 0 {
		t.Error("a []byte column without UTF8 annotation passed the string column check")
	}
	problems := strings.Join(f.pageProblems(compress.Codecs.Gzip), "\n")
	for _, want := range []string{"codec UNCOMPRESSED", "data pages v2", "DELTA_LENGTH_BYTE_ARRAY"} {
		if !strings.Contains(problems, want) {
			t.Errorf("page check did not report %q; it reported:\n%s", want, problems)
		}
	}
}
