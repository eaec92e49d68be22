package hosttest_test

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// memStore is a versioned store in maps, with at most one bug.
type memStore struct {
	bug     string
	staged  map[string]map[string]string // branch → path → address
	heads   map[string]string
	commits map[string]retention.Commit
	trees   map[string]map[string]string
}

func newMemStore(bug string) *memStore {
	return &memStore{bug: bug, staged: map[string]map[string]string{}, heads: map[string]string{},
		commits: map[string]retention.Commit{}, trees: map[string]map[string]string{}}
}

func (s *memStore) Host() lakegc.Host { return lakegc.Host{Staging: s, Commits: s, Committed: s} }

func (s *memStore) CreateBranch(_ context.Context, id, from string) error {
	s.staged[id] = map[string]string{}
	if h, ok := s.heads[from]; ok {
		s.heads[id] = h
	}
	return nil
}

func (s *memStore) DeleteBranch(_ context.Context, id string) error {
	delete(s.staged, id)
	delete(s.heads, id)
	return nil
}

func (s *memStore) Stage(_ context.Context, branch, path, address string) error {
	b, ok := s.staged[branch]
	if !ok {
		return fmt.Errorf("memstore: no branch %s", branch)
	}
	b[path] = address
	return nil
}

func (s *memStore) Unstage(_ context.Context, branch, path string) error {
	delete(s.staged[branch], path)
	return nil
}

func (s *memStore) Commit(_ context.Context, branch string, at time.Time) (string, error) {
	c := retention.Commit{ID: fmt.Sprintf("c%05d", len(s.commits)+1), CreationDate: at, Version: 1}
	tree := map[string]string{}
	if h, ok := s.heads[branch]; ok {
		c.Parents, tree = []string{h}, maps.Clone(s.trees[h])
	}
	maps.Copy(tree, s.staged[branch])
	if s.bug == "commitDropsAPath" && len(s.staged[branch]) > 1 {
		delete(tree, slices.Max(slices.Collect(maps.Keys(s.staged[branch]))))
	}
	s.commits[c.ID], s.trees[c.ID], s.heads[branch], s.staged[branch] = c, tree, c.ID, map[string]string{}
	return c.ID, nil
}

// seq yields items, then ctx's error: never stop quietly.
func seq[T any](ctx context.Context, items []T, err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, v := range items {
			if ctx.Err() == nil && !yield(v, nil) {
				return
			}
		}
		if err := cmp.Or(err, ctx.Err()); err != nil {
			yield(*new(T), err)
		}
	}
}

func (s *memStore) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	ids := slices.Sorted(maps.Keys(s.staged))
	if s.bug == "hidesIngest" {
		ids = slices.DeleteFunc(ids, func(id string) bool { return id == "ingest" })
	}
	i, _ := slices.BinarySearch(ids, from)
	return seq(ctx, ids[i:], nil)
}

func (s *memStore) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	staged, ok := s.staged[branch]
	if !ok {
		return seq[uncommitted.Entry](ctx, nil, fmt.Errorf("memstore: branch %s: %w", branch, uncommitted.ErrBranchNotFound))
	}
	var entries []uncommitted.Entry
	for _, path := range slices.Sorted(maps.Keys(staged)) {
		if path >= from {
			entries = append(entries, uncommitted.Entry{Key: path, PhysicalAddress: staged[path]})
		}
	}
	if s.bug == "sourceSkipsLast" && len(entries) > 1 && from == "" {
		entries = entries[:len(entries)-1]
	}
	return seq(ctx, entries, nil)
}

func (s *memStore) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	var heads []retention.Branch
	for _, id := range slices.Sorted(maps.Keys(s.heads)) {
		heads = append(heads, retention.Branch{ID: id, CommitID: s.heads[id]})
	}
	return seq(ctx, heads, nil)
}

func (s *memStore) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return seq(ctx, slices.Collect(maps.Values(s.commits)), nil)
}

func (s *memStore) Get(ctx context.Context, id string) (retention.Commit, error) {
	if c, ok := s.commits[id]; ok {
		return c, ctx.Err()
	}
	return retention.Commit{}, fmt.Errorf("memstore: commit %q not found", id)
}

func (s *memStore) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	var addrs []string
	for _, a := range active {
		tree, ok := s.trees[a.CommitID]
		if !ok {
			return seq[string](ctx, nil, fmt.Errorf("memstore: commit %q not found", a.CommitID))
		}
		addrs = slices.AppendSeq(addrs, maps.Values(tree))
	}
	return seq(ctx, addrs, nil)
}
