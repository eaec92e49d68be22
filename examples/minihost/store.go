package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc/pathprovider"
)

// store is the toy versioned store the host keeps: branches with a staging
// area, commits with a tree, objects in a bucket. Its data model is not
// lakeFS's: every address is relative to the bucket (no address type),
// commits have no metarange and no version (a merge would list its main
// parent first), and a path is unstaged by deleting it (no tombstones).
// It is not safe for concurrent use, and Collect does not need it to be.
//
// The host's glue — the adapters lakegc reads and the GC cycle — is in
// the other files of the command.
type store struct {
	dir     string // the bucket's directory
	cleanup func() error
	bucket  *blob.Bucket
	paths   *pathprovider.Partitioned
	now     func() time.Time
	staging map[string]map[string]object // branch → path → object
	heads   map[string]string            // branch → HEAD commit, once it has one
	commits map[string]commit            // ID → commit
}

// object is a staged object.
type object struct {
	address string    // relative to the bucket: data/<slice>/<xid>
	staged  time.Time // when it was staged
}

// commit is a commit: its parents (the main parent first), its date, and
// its tree.
type commit struct {
	parents []string
	date    time.Time
	tree    map[string]string // path → address
}

func newStore(bucket *blob.Bucket, paths *pathprovider.Partitioned, now func() time.Time) *store {
	return &store{bucket: bucket, paths: paths, now: now, staging: map[string]map[string]object{"main": {}},
		heads: map[string]string{}, commits: map[string]commit{}}
}

// openStore opens a store with the demo's history (sample) on branch
// main, its objects in a fileblob bucket in dir, or in a new temporary
// directory that Close removes if dir is "".
func openStore(ctx context.Context, dir string) (*store, error) {
	var cleanup func() error
	if dir == "" {
		d, err := os.MkdirTemp("", "minihost-")
		if err != nil {
			return nil, err
		}
		dir, cleanup = d, func() error { return os.RemoveAll(d) }
	}
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		return nil, err
	}
	paths, err := pathprovider.New()
	if err != nil {
		return nil, err
	}
	s := newStore(bucket, paths, time.Now)
	s.dir, s.cleanup = dir, cleanup
	if err := s.sample(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// Close closes the bucket, and removes a temporary directory.
func (s *store) Close() error {
	err := s.bucket.Close()
	if s.cleanup != nil {
		err = errors.Join(err, s.cleanup())
	}
	return err
}

// Put writes data as a new object and stages it at path on branch.
func (s *store) Put(ctx context.Context, branch, path, data string) error {
	addr := s.paths.NewPath()
	if err := s.bucket.WriteAll(ctx, addr, []byte(data), nil); err != nil {
		return err
	}
	return s.Stage(ctx, branch, path, addr)
}

// CreateBranch creates branch id at the HEAD of branch from, with an
// empty staging area.
func (s *store) CreateBranch(_ context.Context, id, from string) error {
	s.staging[id] = map[string]object{}
	if head, ok := s.heads[from]; ok {
		s.heads[id] = head
	}
	return nil
}

// DeleteBranch deletes a branch and its staging area.
func (s *store) DeleteBranch(_ context.Context, id string) error {
	delete(s.staging, id)
	delete(s.heads, id)
	return nil
}

// Stage stages address at path on branch.
func (s *store) Stage(_ context.Context, branch, path, address string) error {
	staged, ok := s.staging[branch]
	if !ok {
		return fmt.Errorf("no branch %s", branch)
	}
	staged[path] = object{address: address, staged: s.now()}
	return nil
}

// Unstage removes path from branch's staging area.
func (s *store) Unstage(_ context.Context, branch, path string) error {
	delete(s.staging[branch], path)
	return nil
}

// Commit turns branch's staging area into a commit dated at: its HEAD's
// tree with the staged paths over it.
func (s *store) Commit(_ context.Context, branch string, at time.Time) (string, error) {
	id := fmt.Sprintf("c%d", len(s.commits)+1)
	c := commit{date: at, tree: map[string]string{}}
	if head, ok := s.heads[branch]; ok {
		c.parents, c.tree = []string{head}, maps.Clone(s.commits[head].tree)
	}
	for path, o := range s.staging[branch] {
		c.tree[path] = o.address
	}
	s.commits[id], s.heads[branch], s.staging[branch] = c, id, map[string]object{}
	return id, nil
}

// Files returns the physical addresses of the objects of commit id, or an
// error for a commit the store does not hold.
func (s *store) Files(id string) (iter.Seq[string], error) {
	c, ok := s.commits[id]
	if !ok {
		return nil, fmt.Errorf("no commit %s", id)
	}
	return maps.Values(c.tree), nil
}

// sample writes the demo's history as of now: report.csv v1 committed an
// hour ago, then v2 (v1 is then only in c1, which a day of retention
// expires), a scratch file staged and unstaged before the second commit,
// and a draft left staged.
func (s *store) sample(ctx context.Context) error {
	if err := s.Put(ctx, "main", "report.csv", "v1"); err != nil {
		return err
	}
	if _, err := s.Commit(ctx, "main", s.now().Add(-time.Hour)); err != nil {
		return err
	}
	for _, p := range [][2]string{{"report.csv", "v2"}, {"scratch.tmp", "never committed"}} {
		if err := s.Put(ctx, "main", p[0], p[1]); err != nil {
			return err
		}
	}
	if err := s.Unstage(ctx, "main", "scratch.tmp"); err != nil {
		return err
	}
	if _, err := s.Commit(ctx, "main", s.now()); err != nil {
		return err
	}
	return s.Put(ctx, "main", "draft.csv", "staged, not committed")
}
