package main

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go/compress"
	"gocloud.dev/blob/fileblob"
)

// exportSource is a staging area of branches of n entries each; the
// addresses of branch b and entry i grow with i so that pages hold from
// short to long values.
type exportSource struct{ branches, n int }

func (s exportSource) address(b, i int) string {
	return fmt.Sprintf("data/b%d/%016x/%s", b, uint64(i)*0x9e3779b97f4a7c15, strings.Repeat("ü", i%300))
}

func (s exportSource) Branches(_ context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for b := range s.branches {
			if name := fmt.Sprintf("branch%03d", b); name >= from && !yield(name, nil) {
				return
			}
		}
	}
}

func (s exportSource) Uncommitted(_ context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	var b int
	fmt.Sscanf(branch, "branch%03d", &b)
	return func(yield func(uncommitted.Entry, error) bool) {
		for i := range s.n {
			e := uncommitted.Entry{Key: fmt.Sprintf("k%07d", i), PhysicalAddress: s.address(b, i), CreationDate: time.Unix(int64(1_700_000_000+i), 0)}
			if e.Key >= from && !yield(e, nil) {
				return
			}
		}
	}
}

// TestDuckDBReadsExport: DuckDB, an independent Parquet reader (C++, its
// own ZSTD), reads every row of an export written with the default codec
// (lakeFS's GZIP) and with uncommitted.Zstd (what lakegc.Collect writes),
// in the codec asked.
func TestDuckDBReadsExport(t *testing.T) {
	ctx := context.Background()
	src := exportSource{branches: 4, n: 20_000}
	var want []string
	for b := range src.branches {
		for i := range src.n {
			want = append(want, fmt.Sprintf("%s %d", src.address(b, i), 1_700_000_000+i))
		}
	}
	slices.Sort(want)
	for _, c := range []struct {
		name  string
		codec compress.Codec
		want  string
	}{{"default", nil, "GZIP"}, {"zstd", uncommitted.Zstd(), "ZSTD"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bucket, err := fileblob.OpenBucket(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			p, err := uncommitted.NewPreparer(bucket, uncommitted.WithCompression(c.codec), uncommitted.WithMaxFileSize(1<<20), uncommitted.WithoutTimeBudget())
			if err != nil {
				t.Fatal(err)
			}
			var res *uncommitted.Result
			for mark := (*uncommitted.Checkpoint)(nil); ; {
				if res, err = p.Prepare(ctx, uncommitted.Repository{ID: "repo", StorageNamespace: "s3://bucket/repo"}, src, mark); err != nil {
					t.Fatal(err)
				}
				if mark = res.Checkpoint; mark == nil {
					break
				}
			}
			files, err := filepath.Glob(filepath.Join(dir, "_lakefs/retention/gc/uncommitted", res.RunID, "uncommitted", "*"))
			if err != nil {
				t.Fatal(err)
			}
			var list []string
			for _, f := range files {
				if !strings.HasPrefix(filepath.Base(f), "_") && !strings.HasSuffix(f, ".attrs") {
					list = append(list, sqlString(f))
				}
			}
			if len(list) < 2 {
				t.Fatalf("%d files, want several", len(list))
			}
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			files2 := "[" + strings.Join(list, ",") + "]"
			var codecs string
			if err := db.QueryRowContext(ctx, "SELECT string_agg(DISTINCT compression, ',') FROM parquet_metadata("+files2+")").Scan(&codecs); err != nil {
				t.Fatal(err)
			}
			if codecs != c.want {
				t.Fatalf("DuckDB sees codecs %q, want %s", codecs, c.want)
			}
			rows, err := db.QueryContext(ctx, "SELECT physical_address, creation_date FROM read_parquet("+files2+")")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var a string
				var d int64
				if err := rows.Scan(&a, &d); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %d", a, d))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("DuckDB read %d rows, want the source's %d", len(got), len(want))
			}
		})
	}
}
