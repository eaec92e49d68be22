package main

import (
	"context"
	"io"
	"slices"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	retentiontest "github.com/lakegc/lakegc/retention/sourcetest"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
	uncommittedtest "github.com/lakegc/lakegc/uncommitted/sourcetest"
)

// contents reads the objects of data/ in dir, or of the keys given.
func contents(t *testing.T, dir string, keys []string) []string {
	t.Helper()
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	if keys == nil {
		it := bucket.List(&blob.ListOptions{Prefix: "data/"})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, obj.Key)
		}
	}
	var out []string
	for _, k := range keys {
		b, err := bucket.ReadAll(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

func TestCycle(t *testing.T) {
	dir := t.TempDir()
	r, err := run(context.Background(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	var marked []string
	for k, err := range sweep.Candidates(context.Background(), bucket, lakegc.DefaultStoragePrefix, r.RunID) {
		if err != nil {
			t.Fatal(err)
		}
		marked = append(marked, k)
	}
	if got, want := contents(t, dir, marked), []string{"never committed", "v1"}; !slices.Equal(got, want) {
		t.Errorf("marked objects hold %q, want %q", got, want)
	}
	if r.Sweep != nil || len(contents(t, dir, nil)) != 4 {
		t.Errorf("a dry run deleted")
	}

	dir = t.TempDir()
	if r, err = run(context.Background(), dir, true); err != nil {
		t.Fatal(err)
	}
	if got, want := contents(t, dir, nil), []string{"staged, not committed", "v2"}; !slices.Equal(got, want) {
		t.Errorf("after the sweep, data/ holds %q, want %q", got, want)
	}
	if r.Sweep.Deleted != 2 || r.Export.Rows != 1 || r.Commits.Active != 1 {
		t.Errorf("report %+v %+v %+v", *r.Sweep, *r.Export, *r.Commits)
	}
}

func TestStagingConformance(t *testing.T) {
	uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
		s := newStore()
		for _, b := range f.Branches {
			s.staged[b.ID] = map[string]uncommitted.Entry{}
			for _, e := range b.Entries {
				s.staged[b.ID][e.Key] = e
			}
		}
		deleteBranch := func(_ context.Context, id string) error {
			delete(s.staged, id)
			return nil
		}
		stage := func(_ context.Context, b string, e uncommitted.Entry) error {
			s.staged[b][e.Key] = e
			return nil
		}
		unstage := func(_ context.Context, b, path string) error {
			delete(s.staged[b], path)
			return nil
		}
		return uncommittedtest.Harness{Source: s, DeleteBranch: deleteBranch, Stage: stage, Unstage: unstage}
	})
}

func TestCommitsConformance(t *testing.T) {
	retentiontest.Run(t, func(t *testing.T, f retentiontest.Fixture) retentiontest.Harness {
		s := newStore()
		add := func(_ context.Context, f retentiontest.Fixture) error {
			for _, c := range f.Commits {
				if _, ok := s.commits[c.ID]; !ok { // commits are immutable
					s.commits[c.ID] = c
				}
			}
			for _, b := range f.Branches {
				s.heads[b.ID], s.staged[b.ID] = b.Head, map[string]uncommitted.Entry{}
			}
			return nil
		}
		if err := add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return retentiontest.Harness{Source: s, Add: add}
	})
}
