package hostkit_test

import (
	"context"
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
