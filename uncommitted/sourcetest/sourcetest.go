package sourcetest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/suite"
	"github.com/lakegc/lakegc/uncommitted"
)

// Fixture is a staging area to load: branches and their staged entries.
type Fixture struct {
	Branches []Branch
}

// Branch is a branch of a Fixture.
type Branch struct {
	// ID is the branch's name: letters, digits, '-' and '_'.
	ID string
	// Hidden is a branch the host does not show its users (lakeFS's
	// import branches, say); the Source yields it all the same. A host
	// without hidden branches loads it as any other.
	Hidden bool
	// Entries are the branch's staged entries, keys unique, in no order.
	// Keys are valid UTF-8 without NUL; CreationDate is in whole seconds.
	Entries []uncommitted.Entry
}

// Harness is a host's store loaded with a Fixture.
type Harness struct {
	// Source is the host's adapter over the store. Required.
	Source uncommitted.Source
	// DeleteBranch deletes a branch and its staging area, as the host
	// does. Required.
	DeleteBranch func(ctx context.Context, id string) error
	// FailReads, if set, makes every read of the store from then on fail
	// with err, or work again for a nil err. Without it, the checks that
	// the Source passes its store's errors through are skipped.
	FailReads func(err error)
	// Stage and Unstage, if set, write a branch's staging area as the
	// host's writers do: Stage adds or replaces an entry, Unstage removes
	// one (a missing key is no error). The suite calls them while it
	// iterates the branch, to check that writes during a scan never make
	// the Source skip an entry that stays staged throughout. Without them
	// that check is skipped.
	Stage   func(ctx context.Context, branch string, e uncommitted.Entry) error
	Unstage func(ctx context.Context, branch, key string) error
}

// Run runs the conformance suite as subtests of t. load must load f into a
// new, empty store of the host and return the host's adapter over it (it
// may register cleanups on its t). Options adapt the fixtures to a store
// that lacks part of lakeFS's data model (RelativeOnly).
func Run(t *testing.T, load func(t *testing.T, f Fixture) Harness, opts ...Option) {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	suite.Run(t, checks, func(t *testing.T) *loader {
		return &loader{load: func(f Fixture) Harness { return load(t, f) }, options: o}
	})
}

// Option adapts the suite to a store that lacks part of lakeFS's data
// model.
type Option func(*options)

type options struct {
	relativeOnly bool
}

// RelativeOnly is for a store whose physical addresses are all relative to
// the namespace ("data/<slice>/<xid>"), with no address type: the fixtures
// then hold relative addresses only, and the Source yields each entry with
// AddressType Relative, the zero value. Every other check is as without
// it. A store that may ever hold a full URI (an import, a shallow copy from
// elsewhere) must keep its type and run the suite without this option:
// an export that writes a full address as a relative one protects nothing.
func RelativeOnly() Option {
	return func(o *options) { o.relativeOnly = true }
}

// loader is what a check runs on: the host's load function and the
// options of the run.
type loader struct {
	load func(Fixture) Harness
	options
}

// entry is the fixtures' entry of key k on the i-th branch, relative with
// RelativeOnly.
func (l *loader) entry(k string, i, j int) uncommitted.Entry {
	e := entry(k, i, j)
	if l.relativeOnly && e.AddressType == uncommitted.Full {
		e.AddressType = uncommitted.Relative
		e.PhysicalAddress = strings.TrimPrefix(e.PhysicalAddress, fullPrefix)
	}
	return e
}

// reporter is what a check reports to: a *testing.T, or the self-tests' recorder.
type reporter = suite.Reporter

// check is one named check of the suite.
type check = suite.Check[*loader]

var checks = []check{
	{Name: "BranchesInOrder", Run: checkBranchesInOrder},
	{Name: "BranchesFrom", Run: checkBranchesFrom},
	{Name: "EntriesInOrder", Run: checkEntriesInOrder},
	{Name: "EntriesFrom", Run: checkEntriesFrom},
	{Name: "HiddenBranches", Run: checkHiddenBranches},
	{Name: "DeletedBranch", Run: checkDeletedBranch},
	{Name: "EarlyBreak", Run: checkEarlyBreak},
	{Name: "CancelledContext", Run: checkCancelledContext},
	{Name: "CancelDuringIteration", Run: checkCancelDuringIteration},
	{Name: "ErrorsPassedThrough", Run: checkErrorsPassedThrough},
	{Name: "StableEntriesUnderWrites", Run: checkStableUnderWrites},
	{Name: "Model", Run: checkModel},
}

// branchIDs sort differently as bytes, case-insensitively, and under the
// collations of many databases, which skip '-' and '_'.
var branchIDs = []string{
	"A", "Z", "_x", "a", "a-b", "a0", "a_b", "aa", "b", "main", "main-2", "main2", "main_", "z-",
}

// keys sort differently as bytes, as UTF-16 (U+10000 before U+E000),
// case-insensitively, and path element by path element.
var keys = []string{
	" ", "%20", "+", "-", ".", "0", "A", "Z", "_", "a", "a b", "a%20b", "a-b", "a.b", "a/b", "a/b/c",
	"a0", "aB", "ab", "tables/t/part-0.parquet", "tables/t/part-1.parquet", "tables/t-1/x",
	"tables/t/x", "~", "é", "ÿ", "\ue000", "\uffee", "\U00010000", "\U0010fffd",
}

// baseTime is the creation time of the fixtures' entries.
var baseTime = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// trickyFixture has every branch ID of branchIDs, hidden ones among them,
// some without entries, and entries of every key of keys, of both address
// types, tombstones among them.
func (l *loader) trickyFixture(seed uint64) Fixture {
	rng := rand.New(rand.NewPCG(seed, 7))
	var f Fixture
	for i, id := range branchIDs {
		b := Branch{ID: id, Hidden: i%4 == 1}
		if i%5 != 2 {
			for j, k := range keys {
				if rng.IntN(3) == 0 && id != "main" {
					continue
				}
				b.Entries = append(b.Entries, l.entry(k, i, j))
			}
		}
		rng.Shuffle(len(b.Entries), func(x, y int) { b.Entries[x], b.Entries[y] = b.Entries[y], b.Entries[x] })
		f.Branches = append(f.Branches, b)
	}
	rng.Shuffle(len(f.Branches), func(x, y int) { f.Branches[x], f.Branches[y] = f.Branches[y], f.Branches[x] })
	return f
}

// fullPrefix is the namespace of the fixtures' full addresses.
const fullPrefix = "s3://bucket/repo/"

// entry is the entry of key k on the i-th branch, as lakeFS's data model
// has it: some full addresses, some tombstones.
func entry(k string, i, j int) uncommitted.Entry {
	e := uncommitted.Entry{
		Key:             k,
		PhysicalAddress: fmt.Sprintf("data/g%02d/k%03d", i, j),
		CreationDate:    baseTime.Add(time.Duration(i*100+j) * time.Second),
	}
	switch (i + j) % 7 {
	case 3:
		e.AddressType = uncommitted.Full
		e.PhysicalAddress = fullPrefix + e.PhysicalAddress
	case 5:
		e.Tombstone = true
		e.PhysicalAddress = ""
	}
	return e
}

func checkBranchesInOrder(r reporter, l *loader) {
	f := l.trickyFixture(1)
	h := l.load(f)
	expectBranches(r, h.Source, "", sortedIDs(f))
}

func checkBranchesFrom(r reporter, l *loader) {
	f := l.trickyFixture(2)
	h := l.load(f)
	want := sortedIDs(f)
	for _, from := range fromValues(want) {
		expectBranches(r, h.Source, from, want[lowerBound(want, from):])
	}
}

func checkEntriesInOrder(r reporter, l *loader) {
	f := l.trickyFixture(3)
	h := l.load(f)
	for _, b := range f.Branches {
		expectEntries(r, h.Source, b.ID, "", sortedEntries(b))
	}
}

func checkEntriesFrom(r reporter, l *loader) {
	f := l.trickyFixture(4)
	h := l.load(f)
	for _, b := range f.Branches {
		if b.ID != "main" {
			continue
		}
		want := sortedEntries(b)
		ks := make([]string, len(want))
		for i, e := range want {
			ks[i] = e.Key
		}
		for _, from := range fromValues(ks) {
			expectEntries(r, h.Source, b.ID, from, want[lowerBound(ks, from):])
		}
	}
}

func checkHiddenBranches(r reporter, l *loader) {
	f := Fixture{Branches: []Branch{
		{ID: "import-1", Hidden: true, Entries: []uncommitted.Entry{l.entry("tables/a", 0, 0), l.entry("tables/b", 0, 1)}},
		{ID: "main", Entries: []uncommitted.Entry{l.entry("a", 1, 0)}},
		{ID: "zz-hidden", Hidden: true, Entries: []uncommitted.Entry{l.entry("x", 2, 0)}},
	}}
	h := l.load(f)
	expectBranches(r, h.Source, "", []string{"import-1", "main", "zz-hidden"})
	for _, b := range f.Branches {
		expectEntries(r, h.Source, b.ID, "", sortedEntries(b))
	}
}

func checkDeletedBranch(r reporter, l *loader) {
	f := Fixture{Branches: []Branch{
		{ID: "doomed", Entries: []uncommitted.Entry{l.entry("a", 0, 0), l.entry("b", 0, 1)}},
		{ID: "main", Entries: []uncommitted.Entry{l.entry("a", 1, 0)}},
	}}
	h := l.load(f)
	if h.DeleteBranch == nil {
		r.Fatalf("Harness.DeleteBranch is nil")
	}
	expectNotFound(r, h.Source, "never-created")
	if err := h.DeleteBranch(context.Background(), "doomed"); err != nil {
		r.Fatalf("DeleteBranch(doomed): %v", err)
	}
	expectNotFound(r, h.Source, "doomed")
	expectBranches(r, h.Source, "", []string{"main"})
	expectEntries(r, h.Source, "main", "", sortedEntries(f.Branches[1]))
}

func expectNotFound(r reporter, src uncommitted.Source, branch string) {
	r.Helper()
	got, err := suite.Drain(src.Uncommitted(context.Background(), branch, ""))
	if len(got) > 0 || !errors.Is(err, uncommitted.ErrBranchNotFound) {
		r.Errorf("Uncommitted(%q), a branch that does not exist, yielded %d entries and then %v; want only an error wrapping uncommitted.ErrBranchNotFound", branch, len(got), err)
	}
}

func checkEarlyBreak(r reporter, l *loader) {
	f := l.trickyFixture(5)
	h := l.load(f)
	suite.NotBlocked(r, "breaking out of Branches and Uncommitted", func() {
		for range 3 {
			for _, err := range h.Source.Branches(context.Background(), "") {
				if err != nil {
					r.Fatalf("Branches: %v", err)
				}
				break
			}
			for _, err := range h.Source.Uncommitted(context.Background(), "main", "") {
				if err != nil {
					r.Fatalf("Uncommitted(main): %v", err)
				}
				break
			}
		}
	})
	suite.NotBlocked(r, "Branches after an early break", func() { expectBranches(r, h.Source, "", sortedIDs(f)) })
}

// A done context must end every call with its error: a Source that stops
// quietly makes an export look complete.
func checkCancelledContext(r reporter, l *loader) {
	f := l.trickyFixture(6)
	h := l.load(f)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		if n, err := suite.Drain(h.Source.Branches(ctx, "")); !errors.Is(err, ctx.Err()) {
			r.Errorf("Branches with a done context yielded %d IDs and then %v; want an error wrapping %v", len(n), err, ctx.Err())
		}
		if n, err := suite.Drain(h.Source.Uncommitted(ctx, "main", "")); !errors.Is(err, ctx.Err()) {
			r.Errorf("Uncommitted with a done context yielded %d entries and then %v; want an error wrapping %v", len(n), err, ctx.Err())
		}
	}
}

func checkCancelDuringIteration(r reporter, l *loader) {
	b := Branch{ID: "main"}
	for i := range 300 {
		b.Entries = append(b.Entries, l.entry(fmt.Sprintf("k%03d", i), 0, i))
	}
	var many Fixture
	for i := range 300 {
		many.Branches = append(many.Branches, Branch{ID: fmt.Sprintf("b%03d", i)})
	}
	many.Branches = append(many.Branches, b)
	h := l.load(many)
	for _, call := range []struct {
		name string
		seq  func(ctx context.Context) iter.Seq2[any, error]
	}{
		{"Branches", func(ctx context.Context) iter.Seq2[any, error] { return suite.Any(h.Source.Branches(ctx, "")) }},
		{"Uncommitted", func(ctx context.Context) iter.Seq2[any, error] {
			return suite.Any(h.Source.Uncommitted(ctx, "main", ""))
		}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		var last error
		for _, err := range call.seq(ctx) {
			n++
			if n == 1 {
				if err != nil {
					r.Fatalf("%s: %v", call.name, err)
				}
				cancel()
			}
			last = err
		}
		cancel()
		if !errors.Is(last, context.Canceled) {
			r.Errorf("%s cancelled after its first item: %d items, then %v; want the iteration to end with an error wrapping context.Canceled", call.name, n, last)
		}
	}
}

func checkErrorsPassedThrough(r reporter, l *loader) {
	f := l.trickyFixture(8)
	h := l.load(f)
	if h.FailReads == nil {
		return // the host cannot inject faults
	}
	boom := errors.New("sourcetest: injected store failure")
	h.FailReads(boom)
	if _, err := suite.Drain(h.Source.Branches(context.Background(), "")); !errors.Is(err, boom) {
		r.Errorf("Branches while the store fails: %v; want an error wrapping the store's", err)
	}
	if _, err := suite.Drain(h.Source.Uncommitted(context.Background(), "main", "")); !errors.Is(err, boom) {
		r.Errorf("Uncommitted while the store fails: %v; want an error wrapping the store's", err)
	}
	h.FailReads(nil)

	// A failure during an iteration ends it with the error, or not at all
	// (a Source may read a snapshot first): never quietly short.
	want := sortedIDs(f)
	var got []string
	var err error
	for id, e := range h.Source.Branches(context.Background(), "") {
		if err = e; e != nil {
			break
		}
		if got = append(got, id); len(got) == 1 {
			h.FailReads(boom)
		}
	}
	h.FailReads(nil)
	if !errors.Is(err, boom) && !slices.Equal(got, want) {
		r.Errorf("Branches with the store failing after the first ID: %q, then %v; want every branch or an error wrapping the store's", got, err)
	}
	main := sortedEntries(branchOf(f, "main"))
	var entries []uncommitted.Entry
	err = nil
	for e, ierr := range h.Source.Uncommitted(context.Background(), "main", "") {
		if err = ierr; ierr != nil {
			break
		}
		if entries = append(entries, e); len(entries) == 1 {
			h.FailReads(boom)
		}
	}
	h.FailReads(nil)
	if !errors.Is(err, boom) && !sameEntries(entries, main) {
		r.Errorf("Uncommitted with the store failing after the first entry: %d of %d entries, then %v; want every entry or an error wrapping the store's", len(entries), len(main), err)
	}
}

// checkStableUnderWrites iterates a branch while writers stage and unstage
// other keys on it, before and after the iteration's position: every entry
// staged from before the scan to after it must be yielded, once, as it is.
// A Source that pages by offset, or resumes after a key it re-reads by
// position, skips such an entry when an earlier key is removed, and the
// export misses a staged object a GC then deletes.
func checkStableUnderWrites(r reporter, l *loader) {
	const n = 120
	stable := map[string]uncommitted.Entry{}
	var f Fixture
	b := Branch{ID: "main"}
	for i := range n {
		e := l.entry(fmt.Sprintf("k%03d", i), 0, i)
		e.AddressType, e.Tombstone = uncommitted.Relative, false
		b.Entries = append(b.Entries, e)
		if i%3 == 0 {
			stable[e.Key] = e
		}
	}
	f.Branches = []Branch{b, {ID: "other"}}
	h := l.load(f)
	if h.Stage == nil || h.Unstage == nil {
		return // the host cannot write during the check
	}
	ctx := context.Background()
	next := 0 // the next churn key to remove, in key order
	churn := func() int {
		for next < n && next%3 == 0 {
			next++
		}
		return next
	}
	seen := map[string]int{}
	added, yielded := 0, 0
	for e, err := range h.Source.Uncommitted(ctx, "main", "") {
		if err != nil {
			r.Fatalf("Uncommitted(main) during writes: %v", err)
		}
		if yielded++; yielded > 10*n {
			r.Fatalf("Uncommitted(main) during writes yielded %d entries and goes on; at most %d were ever staged", yielded, 4*n)
		}
		seen[e.Key]++
		if w, ok := stable[e.Key]; ok && !sameEntries([]uncommitted.Entry{e}, []uncommitted.Entry{w}) {
			r.Errorf("Uncommitted(main) during writes yields %s as %+v, want %+v", e.Key, e, w)
		}
		// Two earlier keys go, a key before and one after the
		// position come, and a later churn key is replaced.
		for range 2 {
			if i := churn(); i < n {
				if err := h.Unstage(ctx, "main", fmt.Sprintf("k%03d", i)); err != nil {
					r.Fatalf("Unstage: %v", err)
				}
				next++
			}
		}
		if added == n/2 {
			continue // the writers stop: a Source that reads live must end
		}
		added++
		for _, k := range []string{fmt.Sprintf("a%03d", added), fmt.Sprintf("z%03d", added), fmt.Sprintf("k%03d", n-1-added%40*3)} {
			if _, ok := stable[k]; ok {
				continue
			}
			if err := h.Stage(ctx, "main", l.entry(k, 1, added)); err != nil {
				r.Fatalf("Stage: %v", err)
			}
		}
	}
	for k := range stable {
		if seen[k] != 1 {
			r.Errorf("Uncommitted(main) with writes during the scan yielded %s, staged throughout, %d times; want once", k, seen[k])
		}
	}
}

// checkModel loads random staging areas and compares random resumptions
// with a sorted model.
func checkModel(r reporter, l *loader) {
	rng := rand.New(rand.NewPCG(11, 13))
	alphabet := []string{"a", "b", "/", "-", ".", "é", "\U00010000", "\ue000", "A"}
	word := func(n int) string {
		var b strings.Builder
		for range 1 + rng.IntN(n) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for round := range 4 {
		var f Fixture
		seen := map[string]bool{}
		for i := range 6 {
			id := fmt.Sprintf("%c%d", 'a'+rng.IntN(3), rng.IntN(4))
			if seen[id] {
				continue
			}
			seen[id] = true
			b := Branch{ID: id, Hidden: rng.IntN(4) == 0}
			keysSeen := map[string]bool{}
			for j := range rng.IntN(40) {
				k := word(4)
				if !keysSeen[k] {
					keysSeen[k] = true
					b.Entries = append(b.Entries, l.entry(k, round*10+i, j))
				}
			}
			f.Branches = append(f.Branches, b)
		}
		h := l.load(f)
		ids := sortedIDs(f)
		for range 8 {
			from := word(2)
			if rng.IntN(2) == 0 {
				from = fmt.Sprintf("%c%d", 'a'+rng.IntN(3), rng.IntN(4))
			}
			expectBranches(r, h.Source, from, ids[lowerBound(ids, from):])
		}
		for _, b := range f.Branches {
			want := sortedEntries(b)
			ks := make([]string, len(want))
			for i, e := range want {
				ks[i] = e.Key
			}
			for range 4 {
				from := word(3)
				expectEntries(r, h.Source, b.ID, from, want[lowerBound(ks, from):])
			}
		}
	}
}

func sortedIDs(f Fixture) []string {
	ids := make([]string, len(f.Branches))
	for i, b := range f.Branches {
		ids[i] = b.ID
	}
	slices.Sort(ids)
	return ids
}

func branchOf(f Fixture, id string) Branch {
	for _, b := range f.Branches {
		if b.ID == id {
			return b
		}
	}
	return Branch{ID: id}
}

func sortedEntries(b Branch) []uncommitted.Entry {
	es := slices.Clone(b.Entries)
	slices.SortFunc(es, func(x, y uncommitted.Entry) int { return strings.Compare(x.Key, y.Key) })
	return es
}

// lowerBound is the index of the first of sorted >= from.
func lowerBound(sorted []string, from string) int {
	i, _ := slices.BinarySearch(sorted, from)
	return i
}

// fromValues are resumption points of a sorted list, all valid UTF-8: each
// item, names just after it, its first half, and names before and after
// every item.
func fromValues(sorted []string) []string {
	out := []string{"", "\x01", "\U0010ffff"}
	for _, s := range sorted {
		runes := []rune(s)
		out = append(out, s, s+"\x01", s+"0", string(runes[:len(runes)/2]))
	}
	return out
}

func expectBranches(r reporter, src uncommitted.Source, from string, want []string) {
	r.Helper()
	got, err := suite.Drain(src.Branches(context.Background(), from))
	if err != nil {
		r.Errorf("Branches(from %q): %v", from, err)
		return
	}
	if !slices.Equal(got, want) {
		r.Errorf("Branches(from %q):\n got  %q\n want %q", from, got, want)
	}
}

func expectEntries(r reporter, src uncommitted.Source, branch, from string, want []uncommitted.Entry) {
	r.Helper()
	got, err := suite.Drain(src.Uncommitted(context.Background(), branch, from))
	if err != nil {
		r.Errorf("Uncommitted(%q, from %q): %v", branch, from, err)
		return
	}
	if !sameEntries(got, want) {
		r.Errorf("Uncommitted(%q, from %q):\n got  %s\n want %s", branch, from, formatEntries(got), formatEntries(want))
	}
}

// sameEntries compares entries as an export reads them: tombstones export
// nothing, so a Source may leave them out (but must never turn an entry into
// one), and a creation date counts in whole seconds.
func sameEntries(got, want []uncommitted.Entry) bool {
	tombstone := func(e uncommitted.Entry) bool { return e.Tombstone }
	got = slices.DeleteFunc(slices.Clone(got), tombstone)
	want = slices.DeleteFunc(slices.Clone(want), tombstone)
	return slices.EqualFunc(got, want, func(g, w uncommitted.Entry) bool {
		return g.Key == w.Key && g.PhysicalAddress == w.PhysicalAddress && g.AddressType == w.AddressType &&
			g.CreationDate.Unix() == w.CreationDate.Unix()
	})
}

func formatEntries(es []uncommitted.Entry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		switch {
		case e.Tombstone:
			parts[i] = fmt.Sprintf("%q(tombstone)", e.Key)
		default:
			parts[i] = fmt.Sprintf("%q=%s:%q@%d", e.Key, e.AddressType, e.PhysicalAddress, e.CreationDate.Unix())
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
