package uncommitted_test

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/lakegc/lakegc/uncommitted"
)

// memSource is a staging area in memory: the model a Preparer is tested
// against. A branch listed in gone is listed by Branches but reported
// deleted by Uncommitted. A branch in dieAfter or dieAtListing is deleted
// during the run: once Uncommitted has yielded that many of its entries
// (over all calls), or once Branches was called that many times (once a
// Prepare call), Uncommitted reports it deleted, and Branches lists it no
// more if it is in unlistDead.
type memSource struct {
	mu           sync.Mutex
	entries      map[string][]uncommitted.Entry // sorted by Key
	gone         map[string]bool
	dieAfter     map[string]int
	dieAtListing map[string]int
	unlistDead   map[string]bool
	yielded      map[string]int
	listings     int
	// onEntry, when set, is called before each entry is yielded; an error
	// it returns is yielded instead.
	onEntry func(branch string, e uncommitted.Entry) error
}

func newMemSource() *memSource {
	return &memSource{
		entries: map[string][]uncommitted.Entry{}, gone: map[string]bool{},
		dieAfter: map[string]int{}, dieAtListing: map[string]int{},
		unlistDead: map[string]bool{}, yielded: map[string]int{},
	}
}

func (s *memSource) add(branch string, es ...uncommitted.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[branch] = append(s.entries[branch], es...)
	slices.SortStableFunc(s.entries[branch], func(a, b uncommitted.Entry) int { return cmp.Compare(a.Key, b.Key) })
}

// size is the number of branches and entries.
func (s *memSource) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.entries)
	for _, es := range s.entries {
		n += len(es)
	}
	return n
}

func (s *memSource) branchIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings++
	ids := make([]string, 0, len(s.entries))
	for id := range s.entries {
		if !s.unlistDead[id] || !s.dead(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// dead reports whether a branch of dieAfter was deleted; s.mu is held.
func (s *memSource) dead(branch string) bool {
	if n, ok := s.dieAfter[branch]; ok && s.yielded[branch] >= n {
		return true
	}
	n, ok := s.dieAtListing[branch]
	return ok && s.listings >= n
}

func (s *memSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, id := range s.branchIDs() {
			if id < from {
				continue
			}
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			if !yield(id, nil) {
				return
			}
		}
	}
}

func (s *memSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		s.mu.Lock()
		es, gone := s.entries[branch], s.gone[branch]
		s.mu.Unlock()
		if gone {
			yield(uncommitted.Entry{}, uncommitted.ErrBranchNotFound)
			return
		}
		for _, e := range es {
			if e.Key < from {
				continue
			}
			s.mu.Lock()
			dead := s.dead(branch)
			s.yielded[branch]++
			s.mu.Unlock()
			if dead {
				yield(uncommitted.Entry{}, fmt.Errorf("kv: %w", uncommitted.ErrBranchNotFound))
				return
			}
			if s.onEntry != nil {
				if err := s.onEntry(branch, e); err != nil {
					yield(uncommitted.Entry{}, err)
					return
				}
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}
