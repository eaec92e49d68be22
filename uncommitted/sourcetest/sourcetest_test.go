package sourcetest

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/lakegc/lakegc/internal/suite"
	"github.com/lakegc/lakegc/uncommitted"
)

func TestFakeSource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none, false) })
}

// A store without address types passes with RelativeOnly.
func TestRelativeOnlySource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none, true) }, RelativeOnly())
}

// fakes loads fixtures into fakes with bug b: with relativeOnly, into a
// store that keeps no address type, checked with RelativeOnly.
func fakes(relativeOnly bool) func(b bug) *loader {
	return func(b bug) *loader {
		return &loader{load: func(f Fixture) Harness { return newFake(f, b, relativeOnly) }, options: options{relativeOnly: relativeOnly}}
	}
}

// TestSuiteCatchesBrokenSources proves that each check fails for an
// adapter with the bug it is meant to catch, and that the correct adapter
// passes them all: over a store with lakeFS's address types, and over one
// without them under RelativeOnly, which keeps catching every bug such a
// store can have.
func TestSuiteCatchesBrokenSources(t *testing.T) {
	cases := []suite.Case[bug]{
		{Bug: insertionOrder, Caught: []string{"BranchesInOrder", "Model"}},
		{Bug: caseInsensitive, Caught: []string{"BranchesInOrder"}},
		{Bug: collationSkipsPunctuation, Caught: []string{"BranchesInOrder"}},
		{Bug: fromIgnored, Caught: []string{"BranchesFrom", "Model"}},
		{Bug: fromExclusive, Caught: []string{"BranchesFrom"}},
		{Bug: hiddenOmitted, Caught: []string{"HiddenBranches", "BranchesInOrder"}},
		{Bug: utf16Order, Caught: []string{"EntriesInOrder"}},
		{Bug: pathOrder, Caught: []string{"EntriesInOrder"}},
		{Bug: lastPageLost, Caught: []string{"EntriesInOrder"}},
		{Bug: entriesFromExclusive, Caught: []string{"EntriesFrom", "Model"}},
		{Bug: entriesFromAsPrefix, Caught: []string{"EntriesFrom"}},
		{Bug: missingBranchEmpty, Caught: []string{"DeletedBranch"}},
		{Bug: deleteKeepsStaging, Caught: []string{"DeletedBranch"}},
		{Bug: continueAfterBreak, Caught: []string{"EarlyBreak"}},
		{Bug: quietOnCancel, Caught: []string{"CancelledContext", "CancelDuringIteration"}},
		{Bug: contextAtStartOnly, Caught: []string{"CancelDuringIteration"}},
		{Bug: swallowsErrors, Caught: []string{"ErrorsPassedThrough"}},
		{Bug: quietFailureMidway, Caught: []string{"ErrorsPassedThrough"}},
		{Bug: offsetPaging, Caught: []string{"StableEntriesUnderWrites"}},
	}
	for _, relativeOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("relative-only=%t", relativeOnly), func(t *testing.T) {
			cases := cases
			if !relativeOnly { // bugs of a store that keeps address types
				cases = append(slices.Clone(cases),
					suite.Case[bug]{Bug: fullAsRelative, Caught: []string{"EntriesInOrder"}},
					suite.Case[bug]{Bug: fullAsTombstone, Caught: []string{"EntriesInOrder"}},
				)
			}
			load := fakes(relativeOnly)
			suite.SelfTest(t, checks, []func() *loader{func() *loader { return load(none) }}, load, cases)
		})
	}
}

type bug int

const (
	none bug = iota
	insertionOrder
	caseInsensitive
	collationSkipsPunctuation
	fromIgnored
	fromExclusive
	hiddenOmitted
	utf16Order
	pathOrder
	lastPageLost
	fullAsRelative
	fullAsTombstone
	entriesFromExclusive
	entriesFromAsPrefix
	missingBranchEmpty
	deleteKeepsStaging
	continueAfterBreak
	quietOnCancel
	contextAtStartOnly
	swallowsErrors
	quietFailureMidway
	offsetPaging
)

func (b bug) String() string {
	return [...]string{"none", "insertionOrder", "caseInsensitive", "collationSkipsPunctuation", "fromIgnored",
		"fromExclusive", "hiddenOmitted", "utf16Order", "pathOrder", "lastPageLost", "fullAsRelative",
		"fullAsTombstone", "entriesFromExclusive", "entriesFromAsPrefix", "missingBranchEmpty",
		"deleteKeepsStaging", "continueAfterBreak", "quietOnCancel", "contextAtStartOnly", "swallowsErrors",
		"quietFailureMidway", "offsetPaging"}[b]
}

// fake is a staging area in memory whose adapter has at most one bug.
type fake struct {
	bug      bug
	typeless bool // the store keeps no address type: every address reads as relative
	mu       sync.Mutex
	order    []string // branch IDs, in the order created
	branches map[string]*fakeBranch
	fail     error
}

type fakeBranch struct {
	hidden  bool
	deleted bool
	entries map[string]uncommitted.Entry
}

func newFake(f Fixture, b bug, typeless bool) Harness {
	s := &fake{bug: b, typeless: typeless, branches: map[string]*fakeBranch{}}
	for _, br := range f.Branches {
		fb := &fakeBranch{hidden: br.Hidden, entries: map[string]uncommitted.Entry{}}
		for _, e := range br.Entries {
			fb.entries[e.Key] = s.stored(e)
		}
		s.branches[br.ID] = fb
		s.order = append(s.order, br.ID)
	}
	return Harness{Source: s, DeleteBranch: s.deleteBranch, FailReads: s.failReads, Stage: s.stage, Unstage: s.unstage}
}

func (s *fake) stage(_ context.Context, branch string, e uncommitted.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.branches[branch]
	if !ok {
		return fmt.Errorf("fake: branch %s: %w", branch, uncommitted.ErrBranchNotFound)
	}
	b.entries[e.Key] = s.stored(e)
	return nil
}

// stored is e as the store keeps it.
func (s *fake) stored(e uncommitted.Entry) uncommitted.Entry {
	if s.typeless {
		e.AddressType = uncommitted.Relative
	}
	return e
}

func (s *fake) unstage(_ context.Context, branch, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.branches[branch]; ok {
		delete(b.entries, key)
	}
	return nil
}

// pageByOffset yields a branch's entries from from in pages of 8, each
// page read again by its position in the sorted entries: the bug
// offsetPaging, a LIMIT/OFFSET query.
func (s *fake) pageByOffset(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for off := 0; ; off += 8 {
			s.mu.Lock()
			var entries []uncommitted.Entry
			if b, ok := s.branches[branch]; ok {
				for _, e := range b.entries {
					if e.Key >= from {
						entries = append(entries, e)
					}
				}
			}
			s.mu.Unlock()
			slices.SortFunc(entries, func(a, b uncommitted.Entry) int { return strings.Compare(a.Key, b.Key) })
			if off >= len(entries) {
				return
			}
			for _, e := range entries[off:min(off+8, len(entries))] {
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
}

func (s *fake) deleteBranch(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bug == deleteKeepsStaging {
		s.branches[id].deleted = true
		return nil
	}
	delete(s.branches, id)
	return nil
}

func (s *fake) failReads(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

func (s *fake) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail
}

// branchOrder sorts branch IDs, or does not, as the bug says.
func (s *fake) branchOrder(ids []string) {
	switch s.bug {
	case insertionOrder:
	case caseInsensitive:
		slices.SortStableFunc(ids, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	case collationSkipsPunctuation:
		strip := strings.NewReplacer("-", "", "_", "")
		slices.SortStableFunc(ids, func(a, b string) int {
			return cmp.Or(strings.Compare(strip.Replace(a), strip.Replace(b)), strings.Compare(a, b))
		})
	default:
		slices.Sort(ids)
	}
}

func (s *fake) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	s.mu.Lock()
	var ids []string
	for _, id := range s.order {
		if b, ok := s.branches[id]; ok && !b.deleted && !(b.hidden && s.bug == hiddenOmitted) {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	s.branchOrder(ids)
	return s.iterate(ctx, ids, func(id string) bool {
		switch s.bug {
		case fromIgnored:
			return true
		case fromExclusive:
			return id > from
		}
		return id >= from
	})
}

func (s *fake) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	s.mu.Lock()
	b, ok := s.branches[branch]
	var entries []uncommitted.Entry
	if ok {
		entries = slices.Collect(maps.Values(b.entries))
	}
	s.mu.Unlock()
	if !ok {
		return func(yield func(uncommitted.Entry, error) bool) {
			if s.bug != missingBranchEmpty {
				yield(uncommitted.Entry{}, fmt.Errorf("fake: branch %s: %w", branch, uncommitted.ErrBranchNotFound))
			}
		}
	}
	switch s.bug {
	case offsetPaging:
		return s.pageByOffset(ctx, branch, from)
	case utf16Order:
		slices.SortFunc(entries, func(a, b uncommitted.Entry) int {
			return slices.Compare(utf16.Encode([]rune(a.Key)), utf16.Encode([]rune(b.Key)))
		})
	case pathOrder:
		slices.SortFunc(entries, func(a, b uncommitted.Entry) int {
			return slices.Compare(strings.Split(a.Key, "/"), strings.Split(b.Key, "/"))
		})
	default:
		slices.SortFunc(entries, func(a, b uncommitted.Entry) int { return strings.Compare(a.Key, b.Key) })
	}
	if s.bug == lastPageLost {
		entries = entries[:len(entries)/16*16]
	}
	for i, e := range entries {
		switch {
		case s.bug == fullAsRelative && e.AddressType == uncommitted.Full:
			entries[i].AddressType = uncommitted.Relative
		case s.bug == fullAsTombstone && e.AddressType == uncommitted.Full:
			entries[i].Tombstone = true
		}
	}
	return s.iterate2(ctx, entries, func(e uncommitted.Entry) bool {
		switch s.bug {
		case entriesFromExclusive:
			return e.Key > from
		case entriesFromAsPrefix:
			return strings.HasPrefix(e.Key, from)
		}
		return e.Key >= from
	})
}

func (s *fake) iterate(ctx context.Context, ids []string, keep func(string) bool) iter.Seq2[string, error] {
	return iterateWith(s, ctx, ids, keep)
}

func (s *fake) iterate2(ctx context.Context, es []uncommitted.Entry, keep func(uncommitted.Entry) bool) iter.Seq2[uncommitted.Entry, error] {
	return iterateWith(s, ctx, es, keep)
}

// iterateWith yields the kept items, checking ctx and the injected failure
// before each, as the bug allows.
func iterateWith[T any](s *fake, ctx context.Context, items []T, keep func(T) bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for i, v := range items {
			if err := ctx.Err(); err != nil && (s.bug != contextAtStartOnly || i == 0) {
				if s.bug != quietOnCancel {
					yield(zero, err)
				}
				return
			}
			if err := s.failure(); err != nil {
				if s.bug != swallowsErrors && (s.bug != quietFailureMidway || i == 0) {
					yield(zero, fmt.Errorf("fake: read: %w", err))
				}
				return
			}
			if !keep(v) {
				continue
			}
			if !yield(v, nil) && s.bug != continueAfterBreak {
				return
			}
		}
		if err := ctx.Err(); err != nil && s.bug != quietOnCancel && s.bug != contextAtStartOnly {
			yield(zero, err)
		}
	}
}

// Without RelativeOnly, a store that keeps no address type fails: its
// Source would hand the export full addresses as relative ones.
func TestTypelessStoreNeedsRelativeOnly(t *testing.T) {
	i := slices.IndexFunc(checks, func(c check) bool { return c.Name == "EntriesInOrder" })
	l := &loader{load: func(f Fixture) Harness { return newFake(f, none, true) }}
	if failed, _ := suite.RunCheck(checks[i], l); !failed {
		t.Error("EntriesInOrder passes for a store without address types, run without RelativeOnly")
	}
}
