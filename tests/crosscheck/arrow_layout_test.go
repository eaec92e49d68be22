package crosscheck

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetio"
)

// TestArrowWrittenLayoutRead: files that Arrow's Go Parquet writer lays out
// (a dictionary page, then its data pages; a dictionary abandoned for
// PLAIN within a chunk; several row groups and pages; pages v1 and v2) pass
// parquetguard's dictionary-page layout check (Limits.RowReaderLayout, as
// package uncommitted reads files) and are read by
// parquetio.OpenStrings, value for value. The reverse of the rest of the
// package: lakegc reads what the independent writer wrote.
func TestArrowWrittenLayoutRead(t *testing.T) {
	want := make([]string, 3000)
	for i := range want {
		want[i] = fmt.Sprintf("data/%03d/%d", i%97, i) // repeats some prefixes, not values
		if i%3 == 0 {
			want[i] = fmt.Sprintf("data/%d", i%11) // a few values, often: a dictionary pays
		}
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues(want, nil)
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "address", Type: arrow.BinaryTypes.String}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(want)))
	defer rec.Release()

	for _, c := range []struct {
		name  string
		props []parquet.WriterProperty
	}{
		{"dictionary, v1", nil},
		{"dictionary, v2", []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2)}},
		{"dictionary abandoned for PLAIN", []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(256)}},
		{"PLAIN", []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			props := append([]parquet.WriterProperty{
				parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(512),
			}, c.props...)
			var buf bytes.Buffer
			w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			r := bytes.NewReader(data)
			if err := parquetguard.Check(r, int64(len(data)), parquetguard.Limits{RowReaderLayout: true}); err != nil {
				t.Fatalf("parquetguard refuses Arrow's file: %v", err)
			}
			s, err := parquetio.OpenStrings(r, int64(len(data)), "address")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got []string
			for {
				batch, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if batch == nil {
					break
				}
				got = append(got, batch...)
			}
			if len(got) != len(want) {
				t.Fatalf("%d values read, %d written", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("value %d: %q, written %q", i, got[i], want[i])
				}
			}
		})
	}
}
