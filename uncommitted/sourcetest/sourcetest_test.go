package sourcetest

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/lakegc/lakegc/uncommitted"
)

func TestFakeSource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none) })
}

// recorder is a reporter that records failures instead of failing the test,
// and ends the check (like t.FailNow) on Fatalf.
type recorder struct {
	mu     sync.Mutex
	failed bool
	logs   []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// runCheck runs one check against fakes with bug b and reports whether it
// failed; a panic counts as a failure.
func runCheck(c check, b bug) (failed bool, logs string) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		c.run(r, func(f Fixture) Harness { return newFake(f, b) })
	}()
	<-done
	return r.failed, strings.Join(r.logs, "\n")
}

// TestSuiteCatchesBrokenSources proves that each check fails for an
// adapter with the bug it is meant to catch, and that the correct adapter
// passes them all.
func TestSuiteCatchesBrokenSources(t *testing.T) {
	defer func(d time.Duration) { blockTimeout = d }(blockTimeout)
	blockTimeout = 300 * time.Millisecond

	for _, c := range checks {
		if failed, logs := runCheck(c, none); failed {
			t.Errorf("%s fails for the correct fake:\n%s", c.name, logs)
		}
	}
	tests := []struct {
		bug    bug
		caught []string
	}{
		{insertionOrder, []string{"BranchesInOrder", "Model"}},
		{caseInsensitive, []string{"BranchesInOrder"}},
		{collationSkipsPunctuation, []string{"BranchesInOrder"}},
		{fromIgnored, []string{"BranchesFrom", "Model"}},
		{fromExclusive, []string{"BranchesFrom"}},
		{hiddenOmitted, []string{"HiddenBranches", "BranchesInOrder"}},
		{utf16Order, []string{"EntriesInOrder"}},
		{pathOrder, []string{"EntriesInOrder"}},
		{lastPageLost, []string{"EntriesInOrder"}},
		{fullAsRelative, []string{"EntriesInOrder"}},
		{fullAsTombstone, []string{"EntriesInOrder"}},
		{entriesFromExclusive, []string{"EntriesFrom", "Model"}},
		{entriesFromAsPrefix, []string{"EntriesFrom"}},
		{missingBranchEmpty, []string{"DeletedBranch"}},
		{deleteKeepsStaging, []string{"DeletedBranch"}},
		{continueAfterBreak, []string{"EarlyBreak"}},
		{quietOnCancel, []string{"CancelledContext", "CancelDuringIteration"}},
		{contextAtStartOnly, []string{"CancelDuringIteration"}},
		{swallowsErrors, []string{"ErrorsPassedThrough"}},
		{quietFailureMidway, []string{"ErrorsPassedThrough"}},
		{offsetPaging, []string{"StableEntriesUnderWrites"}},
	}
	targeted := map[string]bool{}
	for _, tt := range tests {
		for _, name := range tt.caught {
			targeted[name] = true
			i := slices.IndexFunc(checks, func(c check) bool { return c.name == name })
			if i < 0 {
				t.Fatalf("no check %s", name)
			}
			if failed, _ := runCheck(checks[i], tt.bug); !failed {
				t.Errorf("%s passes for an adapter with bug %v", name, tt.bug)
			}
		}
	}
	for _, c := range checks {
		if !targeted[c.name] {
			t.Errorf("no broken adapter proves that check %s can fail", c.name)
		}
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

func newFake(f Fixture, b bug) Harness {
	s := &fake{bug: b, branches: map[string]*fakeBranch{}}
	for _, br := range f.Branches {
		fb := &fakeBranch{hidden: br.Hidden, entries: map[string]uncommitted.Entry{}}
		for _, e := range br.Entries {
			fb.entries[e.Key] = e
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
	b.entries[e.Key] = e
	return nil
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
