package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetio"
)

// TestDuckDBWrittenDictionaryPages writes a low-cardinality column with
// DuckDB, whose bit-packed dictionary-index runs are 256 values long with the
// last padded, in row groups of an odd size, and checks that parquetguard
// accepts the file and parquetio reads back every value in order.
func TestDuckDBWrittenDictionaryPages(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, codec := range []string{"snappy", "zstd"} {
		p := filepath.Join(t.TempDir(), "x.parquet")
		q := "COPY (SELECT 'data/' || (i % 13)::VARCHAR AS address FROM range(50000) t(i)) TO '" + p + "' (FORMAT parquet, ROW_GROUP_SIZE 7000, COMPRESSION " + codec + ")"
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r := bytes.NewReader(data)
		f, err := parquet.OpenFile(r, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Metadata().RowGroups) < 2 {
			t.Fatalf("%s: %d row groups", codec, len(f.Metadata().RowGroups))
		}
		if err := parquetguard.Check(r, int64(len(data)), parquetguard.Limits{}); err != nil {
			t.Fatalf("%s: Check: %v", codec, err)
		}
		s, err := parquetio.OpenStrings(r, int64(len(data)), "address")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			b, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			for _, v := range b {
				if want := "data/" + strconv.Itoa(n%13); v != want {
					t.Fatalf("%s: value %d is %q, want %q", codec, n, v, want)
				}
				n++
			}
		}
		s.Close()
		if n != 50000 {
			t.Fatalf("%s: %d values", codec, n)
		}
	}
}
