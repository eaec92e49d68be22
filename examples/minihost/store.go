package main

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// store is the versioned store's metadata; the objects are in a bucket. It
// is not safe for concurrent use, and Collect does not need it to be.
type store struct {
	branches map[string]*branch
	commits  map[string]*commit
}

type branch struct {
	head   string
	staged map[string]uncommitted.Entry // by path
}

type commit struct {
	retention.Commit
	files map[string]string // path → address
}

func newStore() *store {
	return &store{branches: map[string]*branch{"main": {staged: map[string]uncommitted.Entry{}}}, commits: map[string]*commit{}}
}

// commit turns a branch's staging area into a commit.
func (s *store) commit(b string, now time.Time) {
	br, c := s.branches[b], &commit{files: map[string]string{}}
	c.ID, c.CreationDate, c.Version = fmt.Sprintf("c%d", len(s.commits)+1), now, 1
	if parent := s.commits[br.head]; parent != nil {
		c.Parents, c.files = []string{br.head}, maps.Clone(parent.files)
	}
	for path, e := range br.staged {
		c.files[path] = e.PhysicalAddress // relative, or a full URI
		if e.Tombstone {
			delete(c.files, path)
		}
	}
	s.commits[c.ID], br.head, br.staged = c, c.ID, map[string]uncommitted.Entry{}
}

// seq yields items, then err or ctx's error: never stop quietly.
func seq[T any](ctx context.Context, items []T, err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, v := range items {
			if ctx.Err() != nil {
				break
			} else if !yield(v, nil) {
				return
			}
		}
		if err = cmp.Or(err, ctx.Err()); err != nil {
			yield(*new(T), err)
		}
	}
}

func (s *store) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	ids := slices.Sorted(maps.Keys(s.branches))
	i, _ := slices.BinarySearch(ids, from)
	return seq(ctx, ids[i:], nil)
}

func (s *store) Uncommitted(ctx context.Context, b, from string) iter.Seq2[uncommitted.Entry, error] {
	br, ok := s.branches[b]
	if !ok {
		return seq[uncommitted.Entry](ctx, nil, fmt.Errorf("branch %s: %w", b, uncommitted.ErrBranchNotFound))
	}
	var entries []uncommitted.Entry
	for _, path := range slices.Sorted(maps.Keys(br.staged)) {
		if path >= from {
			entries = append(entries, br.staged[path])
		}
	}
	return seq(ctx, entries, nil)
}

func (s *store) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	var heads []retention.Branch
	for _, id := range slices.Sorted(maps.Keys(s.branches)) {
		if h := s.branches[id].head; h != "" {
			heads = append(heads, retention.Branch{ID: id, CommitID: h})
		}
	}
	return seq(ctx, heads, nil)
}

func (s *store) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	var all []retention.Commit
	for _, c := range s.commits {
		all = append(all, c.Commit)
	}
	return seq(ctx, all, nil)
}

func (s *store) Get(ctx context.Context, id string) (retention.Commit, error) {
	if c, ok := s.commits[id]; ok {
		return c.Commit, ctx.Err()
	}
	return retention.Commit{}, fmt.Errorf("commit %q not found", id)
}

func (s *store) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	var addrs []string
	for _, a := range active {
		c, ok := s.commits[a.CommitID]
		if !ok {
			return seq[string](ctx, nil, fmt.Errorf("commit %q not found", a.CommitID))
		}
		addrs = slices.AppendSeq(addrs, maps.Values(c.files))
	}
	return seq(ctx, addrs, nil)
}
