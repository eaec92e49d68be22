package main

import (
	"context"
	"slices"
	"testing"

	retentiontest "github.com/lakegc/lakegc/retention/sourcetest"
	"github.com/lakegc/lakegc/uncommitted"
	uncommittedtest "github.com/lakegc/lakegc/uncommitted/sourcetest"
)

// The example's store passes the conformance suites of both its adapters.
func TestStagingConformance(t *testing.T) {
	uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
		s := newStore()
		for _, b := range f.Branches {
			if err := s.createBranch(b.ID, ""); err != nil {
				t.Fatal(err)
			}
			for _, e := range b.Entries {
				s.branches[b.ID].Staging[e.Key] = staged{
					object:    object{Address: e.PhysicalAddress, Created: e.CreationDate},
					Full:      e.AddressType == uncommitted.Full,
					Tombstone: e.Tombstone,
				}
			}
		}
		deleteBranch := func(_ context.Context, id string) error {
			s.deleteBranch(id)
			return nil
		}
		return uncommittedtest.Harness{Source: s, DeleteBranch: deleteBranch}
	})
}

func TestCommitsConformance(t *testing.T) {
	retentiontest.Run(t, func(t *testing.T, f retentiontest.Fixture) retentiontest.Harness {
		s := newStore()
		add := func(_ context.Context, f retentiontest.Fixture) error {
			for _, c := range f.Commits {
				if _, ok := s.commits[c.ID]; ok {
					continue // commits are immutable
				}
				parents := slices.Clone(c.Parents)
				if c.Version < 1 && len(parents) > 1 {
					// The store lists the main parent first, as lakeFS
					// has since version 1.
					main := parents[len(parents)-1]
					parents = append([]string{main}, parents[:len(parents)-1]...)
				}
				s.commits[c.ID] = &commit{ID: c.ID, Parents: parents, Created: c.CreationDate, MetaRange: c.MetaRangeID}
				s.order = append(s.order, c.ID)
			}
			for _, b := range f.Branches {
				s.branches[b.ID] = &branch{Head: b.Head, Staging: map[string]staged{}}
			}
			return nil
		}
		if err := add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return retentiontest.Harness{Source: s, Add: add}
	})
}
