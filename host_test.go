package lakegc_test

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	retentiontest "github.com/lakegc/lakegc/retention/sourcetest"
	"github.com/lakegc/lakegc/uncommitted"
	uncommittedtest "github.com/lakegc/lakegc/uncommitted/sourcetest"
)

// memHost is the tests' versioned store: branches with a staging area,
// commits with a tree of addresses, in memory. Every read checks ctx, the
// injected failure and the hook, before each item. Safe for concurrent use.
type memHost struct {
	mu       sync.Mutex
	branches map[string]*memBranch
	commits  map[string]*memCommit
	order    []string // commit IDs, in the order made
	fail     error
	// hook, if set, is called before every item a read yields.
	hook func()
	// asked is the active commits CommittedAddresses was last given.
	asked []retention.ActiveCommit
}

type memBranch struct {
	head    string
	staging map[string]uncommitted.Entry
}

type memCommit struct {
	retention.Commit
	tree map[string]string // path → address, relative or full
}

var (
	_ uncommitted.Source   = (*memHost)(nil)
	_ lakegc.Commits       = (*memHost)(nil)
	_ lakegc.Committed     = (*memHost)(nil)
	_ retentiontest.Source = lakegc.Commits(nil)
	_ lakegc.Commits       = retentiontest.Source(nil)
)

func newMemHost() *memHost {
	return &memHost{branches: map[string]*memBranch{}, commits: map[string]*memCommit{}}
}

func (h *memHost) host() lakegc.Host {
	return lakegc.Host{Staging: h, Commits: h, Committed: h}
}

func (h *memHost) createBranch(id, from string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := &memBranch{staging: map[string]uncommitted.Entry{}}
	if src, ok := h.branches[from]; ok {
		b.head = src.head
	}
	h.branches[id] = b
}

func (h *memHost) deleteBranch(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.branches, id)
}

func (h *memHost) stage(branch string, e uncommitted.Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.branches[branch].staging[e.Key] = e
}

func (h *memHost) unstage(branch, path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.branches[branch].staging, path)
}

// commit turns a branch's staging into commit c, its parent the branch's
// HEAD; tombstones delete paths.
func (h *memHost) commit(branch string, c retention.Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.branches[branch]
	tree := map[string]string{}
	if parent, ok := h.commits[b.head]; ok {
		maps.Copy(tree, parent.tree)
		c.Parents = append([]string{b.head}, c.Parents...)
	}
	for path, e := range b.staging {
		if e.Tombstone {
			delete(tree, path)
		} else {
			tree[path] = e.PhysicalAddress
		}
	}
	c.Version = 1
	h.commits[c.ID] = &memCommit{Commit: c, tree: tree}
	h.order = append(h.order, c.ID)
	b.head, b.staging = c.ID, map[string]uncommitted.Entry{}
}

func (h *memHost) failReads(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = err
}

// each yields items, checking ctx, the failure and the hook before each.
func each[T any](h *memHost, ctx context.Context, items []T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for _, v := range items {
			if err := h.check(ctx); err != nil {
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
		if err := h.check(ctx); err != nil {
			yield(zero, err)
		}
	}
}

func (h *memHost) check(ctx context.Context) error {
	h.mu.Lock()
	hook, fail := h.hook, h.fail
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	if fail != nil {
		return fmt.Errorf("memhost: %w", fail)
	}
	return ctx.Err()
}

func (h *memHost) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	h.mu.Lock()
	ids := slices.Sorted(maps.Keys(h.branches))
	h.mu.Unlock()
	i, _ := slices.BinarySearch(ids, from)
	return each(h, ctx, ids[i:])
}

func (h *memHost) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	h.mu.Lock()
	b, ok := h.branches[branch]
	var entries []uncommitted.Entry
	if ok {
		for _, path := range slices.Sorted(maps.Keys(b.staging)) {
			if path >= from {
				entries = append(entries, b.staging[path])
			}
		}
	}
	h.mu.Unlock()
	if !ok {
		return func(yield func(uncommitted.Entry, error) bool) {
			yield(uncommitted.Entry{}, fmt.Errorf("memhost: branch %s: %w", branch, uncommitted.ErrBranchNotFound))
		}
	}
	return each(h, ctx, entries)
}

func (h *memHost) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	h.mu.Lock()
	var heads []retention.Branch
	for _, id := range slices.Sorted(maps.Keys(h.branches)) {
		if head := h.branches[id].head; head != "" {
			heads = append(heads, retention.Branch{ID: id, CommitID: head})
		}
	}
	h.mu.Unlock()
	return each(h, ctx, heads)
}

func (h *memHost) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	h.mu.Lock()
	commits := make([]retention.Commit, len(h.order))
	for i, id := range h.order {
		commits[i] = h.commits[id].Commit
	}
	h.mu.Unlock()
	return each(h, ctx, commits)
}

func (h *memHost) Get(ctx context.Context, id string) (retention.Commit, error) {
	if err := h.check(ctx); err != nil {
		return retention.Commit{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.commits[id]
	if !ok {
		return retention.Commit{}, fmt.Errorf("memhost: no commit %q", id)
	}
	return c.Commit, nil
}

func (h *memHost) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	h.mu.Lock()
	h.asked = slices.Clone(active)
	var addrs []string
	for _, a := range active {
		if c, ok := h.commits[a.CommitID]; ok {
			addrs = append(addrs, slices.Collect(maps.Values(c.tree))...)
		} else {
			addrs = append(addrs, "\x00missing "+a.CommitID)
		}
	}
	h.mu.Unlock()
	return func(yield func(string, error) bool) {
		for a, err := range each(h, ctx, addrs) {
			if id, missing := strings.CutPrefix(a, "\x00missing "); missing {
				err = fmt.Errorf("memhost: active commit %s not found", id)
			}
			if !yield(a, err) || err != nil {
				return
			}
		}
	}
}

// The test host passes both conformance suites: the tests below rely on it.
func TestMemHostConformance(t *testing.T) {
	t.Run("uncommitted", func(t *testing.T) {
		uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
			h := newMemHost()
			for _, b := range f.Branches {
				h.createBranch(b.ID, "")
				for _, e := range b.Entries {
					h.stage(b.ID, e)
				}
			}
			return uncommittedtest.Harness{
				Source:       h,
				DeleteBranch: func(_ context.Context, id string) error { h.deleteBranch(id); return nil },
				FailReads:    h.failReads,
			}
		})
	})
	t.Run("retention", func(t *testing.T) {
		retentiontest.Run(t, func(t *testing.T, f retentiontest.Fixture) retentiontest.Harness {
			h := newMemHost()
			add := func(_ context.Context, f retentiontest.Fixture) error {
				h.mu.Lock()
				defer h.mu.Unlock()
				for _, c := range f.Commits {
					if _, ok := h.commits[c.ID]; ok {
						continue // commits are immutable: an ID is written once
					}
					h.commits[c.ID] = &memCommit{Commit: c}
					h.order = append(h.order, c.ID)
				}
				for _, b := range f.Branches {
					h.branches[b.ID] = &memBranch{head: b.Head, staging: map[string]uncommitted.Entry{}}
				}
				return nil
			}
			if err := add(context.Background(), f); err != nil {
				t.Fatal(err)
			}
			return retentiontest.Harness{Source: h, Add: add, FailReads: h.failReads}
		})
	})
}
