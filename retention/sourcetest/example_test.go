package sourcetest_test

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/retention/sourcetest"
)

// row is how a host's table stores a commit: parents joined by commas, main
// parent first, the date in Unix seconds.
type row struct {
	parents   string
	created   int64
	metarange string
}

// table is a host's commits and branches; its adapter turns rows into
// retention's commits. The test below is all it takes to prove it.
type table struct {
	commits  map[string]row
	branches map[string]string // branch → HEAD
}

func (t *table) commit(id string) retention.Commit {
	r := t.commits[id]
	c := retention.Commit{ID: id, CreationDate: time.Unix(r.created, 0), MetaRangeID: r.metarange, Version: 1}
	if r.parents != "" {
		c.Parents = strings.Split(r.parents, ",")
	}
	return c
}

func (t *table) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	var heads []retention.Branch
	for _, b := range slices.Sorted(maps.Keys(t.branches)) {
		heads = append(heads, retention.Branch{ID: b, CommitID: t.branches[b]})
	}
	return rows(ctx, heads)
}

func (t *table) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	var all []retention.Commit
	for id := range t.commits {
		all = append(all, t.commit(id))
	}
	return rows(ctx, all)
}

func (t *table) Get(ctx context.Context, id string) (retention.Commit, error) {
	if _, ok := t.commits[id]; !ok {
		return retention.Commit{}, fmt.Errorf("commit %q not found", id)
	}
	return t.commit(id), ctx.Err()
}

// rows yields vs, and ctx's error if it is done: never stop quietly.
func rows[T any](ctx context.Context, vs []T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, v := range vs {
			if ctx.Err() != nil {
				break
			}
			if !yield(v, nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}

func TestTable(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
		tb := &table{commits: map[string]row{}, branches: map[string]string{}}
		add := func(_ context.Context, f sourcetest.Fixture) error {
			for _, c := range f.Commits {
				if _, ok := tb.commits[c.ID]; ok {
					continue // commits are immutable: an ID is written once
				}
				parents := slices.Clone(c.Parents)
				if c.Version < 1 && len(parents) > 1 { // lakeFS before version 1: main parent last
					parents = append(parents[len(parents)-1:], parents[:len(parents)-1]...)
				}
				tb.commits[c.ID] = row{strings.Join(parents, ","), c.CreationDate.Unix(), c.MetaRangeID}
			}
			for _, b := range f.Branches {
				tb.branches[b.ID] = b.Head
			}
			return nil
		}
		if err := add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return sourcetest.Harness{Source: tb, Add: add}
	})
}
