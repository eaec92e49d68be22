package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
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

// newEmpty is a store with no branch, in a directory of t's.
func newEmpty(t *testing.T) *store {
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	paths, err := pathprovider.New()
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(bucket, paths, time.Now)
	delete(s.staging, "main")
	return s
}

// The store keeps no address type: its adapters pass with RelativeOnly.
func TestStagingConformance(t *testing.T) {
	uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
		s := newEmpty(t)
		for _, b := range f.Branches {
			s.staging[b.ID] = map[string]object{}
			for _, e := range b.Entries {
				if !e.Tombstone { // the store unstages by deleting
					s.staging[b.ID][e.Key] = object{address: e.PhysicalAddress, staged: e.CreationDate}
				}
			}
		}
		stage := func(_ context.Context, b string, e uncommitted.Entry) error {
			s.staging[b][e.Key] = object{address: e.PhysicalAddress, staged: e.CreationDate}
			return nil
		}
		return uncommittedtest.Harness{Source: s, DeleteBranch: s.DeleteBranch, Stage: stage, Unstage: s.Unstage}
	}, uncommittedtest.RelativeOnly())
}

// The store's commits have no metarange and no version: its adapters pass
// with WithoutMetaRanges and WithoutVersions.
func TestCommitsConformance(t *testing.T) {
	retentiontest.Run(t, func(t *testing.T, f retentiontest.Fixture) retentiontest.Harness {
		s := newEmpty(t)
		add := func(_ context.Context, f retentiontest.Fixture) error {
			for _, c := range f.Commits {
				if _, ok := s.commits[c.ID]; !ok { // commits are immutable
					s.commits[c.ID] = commit{parents: c.Parents, date: c.CreationDate, tree: map[string]string{}}
				}
			}
			for _, b := range f.Branches {
				s.heads[b.ID], s.staging[b.ID] = b.Head, map[string]object{}
			}
			return nil
		}
		if err := add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return retentiontest.Harness{Source: s, Add: add}
	}, retentiontest.WithoutMetaRanges(), retentiontest.WithoutVersions())
}

// The host's glue — every file of the command but the toy store, tests
// apart — stays within 60 lines of code (neither blank nor comment only),
// the promise of package hostkit.
func TestGlueWithin60Lines(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if f == "store.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
				n++
			}
		}
	}
	if t.Logf("glue: %d lines of code", n); n > 60 {
		t.Errorf("the glue is %d lines of code, over 60", n)
	}
}
