// Package maphost is a versioned store's metadata held in maps — staging
// areas, branch heads, commits and their files — serving as the host of
// lakegc.Collect in the examples' tests. It has no locks: Collect reads it
// from one goroutine at a time, and nothing may write it during a cycle.
//
// examples/minihost writes the same adapters again on purpose: it is a
// whole host a reader copies out of this repository, and a copy cannot
// import an internal package. Both run retention's conformance suite.
package maphost

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

// Store is the metadata: it is uncommitted.Source (Staging), lakegc.Commits
// and lakegc.Committed. Its fields marshal as JSON, so a test can hand a
// store to a child process.
type Store struct {
	Staged  map[string]map[string]string `json:"staged"`  // branch → path → address
	Tips    map[string]string            `json:"heads"`   // branch → head commit
	Commits map[string]retention.Commit  `json:"commits"` // ID → commit
	Files   map[string]map[string]string `json:"files"`   // commit → path → address
	Created map[string]time.Time         `json:"created"` // address → upload time
}

// New returns an empty store.
func New() *Store {
	return &Store{Staged: map[string]map[string]string{}, Tips: map[string]string{},
		Commits: map[string]retention.Commit{}, Files: map[string]map[string]string{}, Created: map[string]time.Time{}}
}

// Commit turns a branch's staging area into a commit made at at: the
// files of the branch's head (if it has one) with the staged paths over
// them. A path is unstaged by deleting it from Staged; there are no
// tombstones. It returns the new commit's ID, c001, c002, ...
func (s *Store) Commit(branch string, at time.Time) string {
	c := retention.Commit{ID: fmt.Sprintf("c%03d", len(s.Commits)+1), CreationDate: at, Version: 1}
	files := map[string]string{}
	if head, ok := s.Tips[branch]; ok {
		c.Parents, files = []string{head}, maps.Clone(s.Files[head])
	}
	maps.Copy(files, s.Staged[branch])
	s.Commits[c.ID], s.Files[c.ID], s.Tips[branch], s.Staged[branch] = c, files, c.ID, map[string]string{}
	return c.ID
}

// Live is what no GC with this cutoff may delete, each address with why:
// staged, in a branch's head, or created at or after the cutoff. It is a
// subset of what a GC keeps (retention keeps more commits than the heads).
func (s *Store) Live(cutoff time.Time) map[string]string {
	out := map[string]string{}
	for a, at := range s.Created {
		if !at.Before(cutoff) {
			out[a] = "younger than the cutoff"
		}
	}
	for b, h := range s.Tips {
		for _, a := range s.Files[h] {
			out[a] = "in the head of " + b
		}
	}
	for b, st := range s.Staged {
		for _, a := range st {
			out[a] = "staged on " + b
		}
	}
	return out
}

// EverCommitted is every address some commit holds.
func (s *Store) EverCommitted() map[string]bool {
	out := map[string]bool{}
	for _, files := range s.Files {
		for _, a := range files {
			out[a] = true
		}
	}
	return out
}

// Garbage is what a whole GC cycle with this cutoff must delete: created
// before the cutoff, never in a commit, and not staged.
func (s *Store) Garbage(cutoff time.Time) map[string]bool {
	out := map[string]bool{}
	live, ever := s.Live(cutoff), s.EverCommitted()
	for a := range s.Created {
		if !ever[a] && live[a] == "" {
			out[a] = true
		}
	}
	return out
}

// seq yields items, then err or ctx's error.
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

// Branches yields the branches with a staging area, from the first at or
// after from.
func (s *Store) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	ids := slices.Sorted(maps.Keys(s.Staged))
	i, _ := slices.BinarySearch(ids, from)
	return seq(ctx, ids[i:], nil)
}

// Uncommitted yields a branch's staged entries in path order, from the
// first at or after from; uncommitted.ErrBranchNotFound for a branch
// without a staging area.
func (s *Store) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	staged, ok := s.Staged[branch]
	if !ok {
		return seq[uncommitted.Entry](ctx, nil, fmt.Errorf("maphost: branch %s: %w", branch, uncommitted.ErrBranchNotFound))
	}
	var out []uncommitted.Entry
	for _, p := range slices.Sorted(maps.Keys(staged)) {
		if p >= from {
			out = append(out, uncommitted.Entry{Key: p, PhysicalAddress: staged[p], CreationDate: s.Created[staged[p]]})
		}
	}
	return seq(ctx, out, nil)
}

// Heads yields every branch and its head commit.
func (s *Store) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	var out []retention.Branch
	for _, b := range slices.Sorted(maps.Keys(s.Tips)) {
		out = append(out, retention.Branch{ID: b, CommitID: s.Tips[b]})
	}
	return seq(ctx, out, nil)
}

// List yields every commit, in ID order.
func (s *Store) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return seq(ctx, slices.SortedFunc(maps.Values(s.Commits), func(a, b retention.Commit) int {
		return cmp.Compare(a.ID, b.ID)
	}), nil)
}

// Get returns one commit.
func (s *Store) Get(ctx context.Context, id string) (retention.Commit, error) {
	if c, ok := s.Commits[id]; ok {
		return c, ctx.Err()
	}
	return retention.Commit{}, fmt.Errorf("maphost: commit %q not found", id)
}

// CommittedAddresses yields the addresses of the active commits' files.
func (s *Store) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	var out []string
	for _, a := range active {
		files, ok := s.Files[a.CommitID]
		if !ok {
			return seq[string](ctx, nil, fmt.Errorf("maphost: commit %q not found", a.CommitID))
		}
		out = append(out, slices.Sorted(maps.Values(files))...)
	}
	return seq(ctx, out, nil)
}
