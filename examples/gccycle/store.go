package main

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// object is a version of a file: where its data lives, relative to the
// storage namespace.
type object struct {
	Address string
	Size    int64
	Created time.Time
}

// staged is a branch's uncommitted change of one path: a new version, or a
// deletion (Tombstone) of a committed one.
type staged struct {
	object
	// Full says that Address is a full URI, not relative to the namespace
	// (the story's uploads are all relative).
	Full      bool
	Tombstone bool
}

type commit struct {
	ID        string
	Parents   []string // the branch's HEAD first (none for the first commit); merges have more
	Message   string
	Created   time.Time
	MetaRange string
	Tree      map[string]object // path → version
}

type branch struct {
	Head    string            // commit ID
	Staging map[string]staged // path → change
}

// store is the tiny versioned store of the example: refs, commits and
// staging in memory, the objects' data in a bucket. It holds metadata only:
// the host (lake) moves data and calls the GC packages. Not safe for
// concurrent use.
type store struct {
	branches map[string]*branch
	commits  map[string]*commit
	order    []string // commit IDs, oldest first
}

func newStore() *store {
	return &store{branches: map[string]*branch{}, commits: map[string]*commit{}}
}

// createBranch starts a branch at another branch's HEAD ("" for none).
func (s *store) createBranch(id, from string) error {
	if _, ok := s.branches[id]; ok {
		return fmt.Errorf("branch %s exists", id)
	}
	head := ""
	if from != "" {
		src, ok := s.branches[from]
		if !ok {
			return fmt.Errorf("branch %s: %w", from, uncommitted.ErrBranchNotFound)
		}
		head = src.Head
	}
	s.branches[id] = &branch{Head: head, Staging: map[string]staged{}}
	return nil
}

func (s *store) deleteBranch(id string) { delete(s.branches, id) }

func (s *store) branch(id string) (*branch, error) {
	b, ok := s.branches[id]
	if !ok {
		return nil, fmt.Errorf("branch %s: %w", id, uncommitted.ErrBranchNotFound)
	}
	return b, nil
}

// tree is the committed version of every path at a branch's HEAD.
func (s *store) tree(b *branch) map[string]object {
	if c := s.commits[b.Head]; c != nil {
		return c.Tree
	}
	return nil
}

func (s *store) put(branchID, path string, o object) error {
	b, err := s.branch(branchID)
	if err != nil {
		return err
	}
	b.Staging[path] = staged{object: o}
	return nil
}

// lookup returns a path's current version on a branch.
func (s *store) lookup(branchID, path string) (object, bool) {
	b, ok := s.branches[branchID]
	if !ok {
		return object{}, false
	}
	if st, ok := b.Staging[path]; ok {
		return st.object, !st.Tombstone
	}
	o, ok := s.tree(b)[path]
	return o, ok
}

// remove deletes a path: a staged-only version disappears from staging, a
// committed one gets a tombstone.
func (s *store) remove(branchID, path string) error {
	b, err := s.branch(branchID)
	if err != nil {
		return err
	}
	if _, committed := s.tree(b)[path]; committed {
		b.Staging[path] = staged{Tombstone: true}
	} else {
		delete(b.Staging, path)
	}
	return nil
}

// commit turns a branch's staging into a commit and returns its ID.
func (s *store) commit(branchID, message string, now time.Time) (string, error) {
	b, err := s.branch(branchID)
	if err != nil {
		return "", err
	}
	tree := maps.Clone(s.tree(b))
	if tree == nil {
		tree = map[string]object{}
	}
	for path, st := range b.Staging {
		if st.Tombstone {
			delete(tree, path)
		} else {
			tree[path] = st.object
		}
	}
	id := fmt.Sprintf("c%d", len(s.order)+1)
	c := &commit{ID: id, Message: message, Created: now, MetaRange: "metarange-" + id, Tree: tree}
	if b.Head != "" {
		c.Parents = []string{b.Head}
	}
	s.commits[id] = c
	s.order = append(s.order, id)
	b.Head = id
	b.Staging = map[string]staged{}
	return id, nil
}

// Branches implements uncommitted.Source.
func (s *store) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	ids := slices.Sorted(maps.Keys(s.branches))
	return func(yield func(string, error) bool) {
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			if id >= from && !yield(id, nil) {
				return
			}
		}
	}
}

// Uncommitted implements uncommitted.Source. The entries are read when it
// is called: a change made while the caller iterates is not seen, as with
// a KV snapshot.
func (s *store) Uncommitted(ctx context.Context, branchID, from string) iter.Seq2[uncommitted.Entry, error] {
	b, err := s.branch(branchID)
	var entries []uncommitted.Entry
	if err == nil {
		for _, path := range slices.Sorted(maps.Keys(b.Staging)) {
			st := b.Staging[path]
			if path >= from {
				entries = append(entries, uncommitted.Entry{
					Key: path, PhysicalAddress: st.Address, CreationDate: st.Created, Tombstone: st.Tombstone,
				})
				if st.Full {
					entries[len(entries)-1].AddressType = uncommitted.Full
				}
			}
		}
	}
	return func(yield func(uncommitted.Entry, error) bool) {
		if err != nil {
			yield(uncommitted.Entry{}, err)
			return
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				yield(uncommitted.Entry{}, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Heads implements lakegc.Commits: every branch that has a commit, and its
// HEAD.
func (s *store) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	return func(yield func(retention.Branch, error) bool) {
		for _, id := range slices.Sorted(maps.Keys(s.branches)) {
			if err := ctx.Err(); err != nil {
				yield(retention.Branch{}, err)
				return
			}
			if head := s.branches[id].Head; head != "" && !yield(retention.Branch{ID: id, CommitID: head}, nil) {
				return
			}
		}
	}
}

// List implements retention.CommitSource.
func (s *store) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return func(yield func(retention.Commit, error) bool) {
		for _, id := range s.order {
			if err := ctx.Err(); err != nil {
				yield(retention.Commit{}, err)
				return
			}
			if !yield(s.commits[id].retention(), nil) {
				return
			}
		}
	}
}

// Get implements retention.CommitSource.
func (s *store) Get(ctx context.Context, id string) (retention.Commit, error) {
	if err := ctx.Err(); err != nil {
		return retention.Commit{}, err
	}
	c, ok := s.commits[id]
	if !ok {
		return retention.Commit{}, fmt.Errorf("commit %s not found", id)
	}
	return c.retention(), nil
}

func (c *commit) retention() retention.Commit {
	rc := retention.Commit{ID: c.ID, CreationDate: c.Created, MetaRangeID: c.MetaRange, Version: 1}
	rc.Parents = slices.Clone(c.Parents)
	return rc
}

// CommittedAddresses implements lakegc.Committed: the address of every
// version in the given commits, the committed half of the GC's keep set.
func (s *store) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, a := range active {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			c, ok := s.commits[a.CommitID]
			if !ok {
				yield("", fmt.Errorf("active commit %s not found", a.CommitID))
				return
			}
			for _, o := range c.Tree {
				if !yield(o.Address, nil) {
					return
				}
			}
		}
	}
}
