package hostkit_test

import (
	"context"
	"database/sql"
	"fmt"
	"iter"

	"github.com/lakegc/lakegc/hostkit"
	"github.com/lakegc/lakegc/uncommitted"
)

// staging is a host's staging area: branch → path → physical address,
// every address relative (the store keeps no address type).
type staging map[string]map[string]string

func (s staging) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return hostkit.Keys(ctx, s, from)
}

func (s staging) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	paths, ok := s[branch]
	if !ok {
		return hostkit.Fail[uncommitted.Entry](uncommitted.ErrBranchNotFound)
	}
	return hostkit.Map(ctx, paths, from, func(path, addr string) uncommitted.Entry {
		return uncommitted.Entry{Key: path, PhysicalAddress: addr}
	})
}

// A staging area of maps as an uncommitted.Source: a line or two a method.
func Example() {
	var src uncommitted.Source = staging{
		"main":  {"b.csv": "data/s1/x2", "a.csv": "data/s1/x1"},
		"dev":   {"a.csv": "data/s2/x3"},
		"a-b_c": {},
	}
	ctx := context.Background()
	for b, err := range src.Branches(ctx, "b") {
		if err != nil {
			panic(err)
		}
		for e, err := range src.Uncommitted(ctx, b, "") {
			if err != nil {
				panic(err)
			}
			fmt.Println(b, e.Key, e.PhysicalAddress)
		}
	}
	// Output:
	// dev a.csv data/s2/x3
	// main a.csv data/s1/x1
	// main b.csv data/s1/x2
}

// A staging table in SQL: the branches in byte order from a query, checked
// by Ordered, so that a collation that is not byte order fails the export
// instead of skipping branches. The WHERE compares in bytes too: in the
// column's collation it could drop, unseen, branches >= from in bytes.
// (Compiled, not run: it needs a database.)
func ExampleQuery() {
	var db *sql.DB // the host's database
	branches := func(ctx context.Context, from string) hostkit.Seq[string] {
		query := func(ctx context.Context) (hostkit.Rows, error) {
			rows, err := db.QueryContext(ctx,
				`SELECT DISTINCT branch FROM staging WHERE branch COLLATE "C" >= $1 ORDER BY branch COLLATE "C"`, from)
			if err != nil {
				return nil, err
			}
			return rows, nil
		}
		scan := func(r hostkit.Rows) (string, error) {
			var b string
			return b, r.Scan(&b)
		}
		return hostkit.Ordered(hostkit.Query(ctx, query, scan), func(b string) string { return b }, from)
	}
	_ = branches
}
