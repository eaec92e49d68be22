package uncommitted_test

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/lakegc/lakegc/uncommitted"
)

// memSource is a staging area in memory: the model a Preparer is tested
// against. A branch listed in gone is listed by Branches but reported
// deleted by Uncommitted.
type memSource struct {
	mu      sync.Mutex
	entries map[string][]uncommitted.Entry // sorted by Key
	gone    map[string]bool
	// onEntry, when set, is called before each entry is yielded; an error
	// it returns is yielded instead.
	onEntry func(branch string, e uncommitted.Entry) error
}

func newMemSource() *memSource {
	return &memSource{entries: map[string][]uncommitted.Entry{}, gone: map[string]bool{}}
}

func (s *memSource) add(branch string, es ...uncommitted.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[branch] = append(s.entries[branch], es...)
	slices.SortStableFunc(s.entries[branch], func(a, b uncommitted.Entry) int { return cmp.Compare(a.Key, b.Key) })
}

func (s *memSource) branchIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.entries))
	for id := range s.entries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
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
