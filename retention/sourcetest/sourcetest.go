package sourcetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/suite"
	"github.com/lakegc/lakegc/retention"
)

// Source is the commit side of a host: lakegc.Commits.
type Source interface {
	// Heads yields every branch whose HEAD is a commit, hidden ones
	// included.
	Heads(ctx context.Context) iter.Seq2[retention.Branch, error]
	retention.CommitSource
}

// Fixture is a history to load: commits, and the branches pointing at them.
type Fixture struct {
	// Commits, each after its parents. IDs are 64 hexadecimal digits;
	// CreationDate is in whole seconds; merges list their main parent
	// first (Version 1) or, as lakeFS did before version 1, last.
	Commits []retention.Commit
	// Branches and their HEADs.
	Branches []Branch
}

// Branch is a branch of a Fixture.
type Branch struct {
	ID   string // letters, digits, '-' and '_'
	Head string // a commit of the fixture
	// Hidden is a branch the host does not show its users; Heads yields
	// it all the same. A host without hidden branches loads it as any
	// other.
	Hidden bool
}

// Harness is a host's store loaded with a Fixture.
type Harness struct {
	// Source is the host's adapter over the store. Required.
	Source Source
	// Add adds f's commits to the store and creates or moves f's
	// branches, as commits made while a GC runs. A commit is immutable:
	// given a commit whose ID the store holds with other content, Add
	// must fail, or leave the stored commit as it is. Required.
	Add func(ctx context.Context, f Fixture) error
	// FailReads, if set, makes every read of the store from then on fail
	// with err, or work again for a nil err. Without it, the checks that
	// the Source passes its store's errors through are skipped.
	FailReads func(err error)
	// IDs, for a store that derives commit IDs from their content as
	// lakeFS does (graveler's AddCommit returns the ID), maps a fixture's
	// commit ID to the ID its commit got in the store; ok is false for a
	// commit not loaded. The host loads (and Adds) each commit with its
	// parents' store IDs, as the fixture lists commits after their
	// parents, points each branch at its HEAD's store ID, and records the
	// IDs as it goes, outside the store: IDs is called while FailReads
	// fails the store. The suite then expects the store's IDs wherever the
	// fixture has its own. Nil: the store keeps the fixture's IDs.
	IDs func(fixtureID string) (storeID string, ok bool)
}

// storeID is the store's ID of a fixture's commit (see Harness.IDs); a
// commit the host did not report reads as an ID no store has, so that the
// check comparing it fails and names it.
func (h Harness) storeID(id string) string {
	if h.IDs == nil || id == "" {
		return id
	}
	if s, ok := h.IDs(id); ok {
		return s
	}
	return "(not loaded: " + id + ")"
}

// storeCommit is a fixture's commit with the store's IDs.
func (h Harness) storeCommit(c retention.Commit) retention.Commit {
	c.ID = h.storeID(c.ID)
	c.Parents = slices.Clone(c.Parents)
	for i, p := range c.Parents {
		c.Parents[i] = h.storeID(p)
	}
	return c
}

// storeBranches are a fixture's branches at the store's IDs.
func (h Harness) storeBranches(bs []Branch) []Branch {
	out := slices.Clone(bs)
	for i := range out {
		out[i].Head = h.storeID(out[i].Head)
	}
	return out
}

// Run runs the conformance suite as subtests of t. load must load f into a
// new, empty store of the host and return the host's adapter over it (it
// may register cleanups on its t). Options adapt the fixtures to a store
// that lacks part of lakeFS's data model (WithoutMetaRanges,
// WithoutVersions).
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
	noMetaRanges, noVersions bool
}

// WithoutMetaRanges is for a store whose commits have no metarange (no
// tree object naming their contents apart from the commit): the fixtures'
// commits then have an empty MetaRangeID, and the Source leaves it empty.
// Collect hands each kept commit's MetaRangeID back to Committed unread,
// and the commits report's metarange_id column is then empty.
func WithoutMetaRanges() Option {
	return func(o *options) { o.noMetaRanges = true }
}

// WithoutVersions is for a store whose commits have no version: every
// merge lists its main parent (the history of the branch merged into)
// first. The fixtures' commits then all have Version 1 and their main
// parent first, and the Source sets Version to 1 on every commit: the
// zero Version means lakeFS before version 1, which listed a merge's main
// parent last.
func WithoutVersions() Option {
	return func(o *options) { o.noVersions = true }
}

// loader is what a check runs on: the host's load function and the
// options of the run.
type loader struct {
	load func(Fixture) Harness
	options
}

// reporter is what a check reports to: a *testing.T, or the self-tests' recorder.
type reporter = suite.Reporter

// check is one named check of the suite.
type check = suite.Check[*loader]

var checks = []check{
	{Name: "Heads", Run: checkHeads},
	{Name: "ListEveryCommit", Run: checkListEveryCommit},
	{Name: "Parents", Run: checkParents},
	{Name: "Get", Run: checkGet},
	{Name: "GetMissing", Run: checkGetMissing},
	{Name: "GetCommitAfterListBegan", Run: checkGetAfterList},
	{Name: "CommitsImmutable", Run: checkCommitsImmutable},
	{Name: "EarlyBreak", Run: checkEarlyBreak},
	{Name: "CancelledContext", Run: checkCancelledContext},
	{Name: "CancelDuringList", Run: checkCancelDuringList},
	{Name: "ErrorsPassedThrough", Run: checkErrorsPassedThrough},
	{Name: "ActiveCommits", Run: checkActiveCommits},
}

// ID returns the commit ID of a fixture's commit named name: 64
// hexadecimal digits, as lakeFS's.
func ID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// baseTime is the creation time of the fixtures' first commit.
var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// history builds a fixture, commit by commit: a commit named n has the ID
// ID(n), the metarange "mr-n", and parents named by their names.
type history struct {
	f Fixture
	options
}

func (h *history) commit(name string, day int, parents ...string) *history {
	return h.commitV(name, day, 1, parents...)
}

func (h *history) commitV(name string, day, version int, parents ...string) *history {
	c := retention.Commit{
		ID:           ID(name),
		CreationDate: baseTime.AddDate(0, 0, day).Add(time.Duration(len(h.f.Commits)) * time.Second),
		MetaRangeID:  "mr-" + name,
		Version:      version,
	}
	for _, p := range parents {
		c.Parents = append(c.Parents, ID(p))
	}
	if h.noVersions && c.Version < 1 {
		// The same history with its main parent first.
		if n := len(c.Parents); n > 1 {
			c.Parents = append(c.Parents[n-1:], c.Parents[:n-1]...)
		}
		c.Version = 1
	}
	if h.noMetaRanges {
		c.MetaRangeID = ""
	}
	h.f.Commits = append(h.f.Commits, c)
	return h
}

func (h *history) branch(id, head string, hidden bool) *history {
	h.f.Branches = append(h.f.Branches, Branch{ID: id, Head: ID(head), Hidden: hidden})
	return h
}

// richFixture has a linear main, a feature branch merged into main, a
// legacy merge (main parent last), an octopus merge, a hidden branch, a
// dangling commit (its branch deleted) and branch IDs that sort
// differently in many databases.
func (l *loader) richFixture() Fixture {
	h := &history{options: l.options}
	h.commit("c1", 0).commit("c2", 1, "c1").commit("c3", 2, "c2")
	h.commit("f1", 3, "c2").commit("f2", 4, "f1")
	h.commit("m1", 5, "c3", "f2")                         // main first
	h.commitV("l1", 6, 0, "f2", "m1")                     // legacy: main parent m1, last
	h.commit("o1", 7, "l1", "f1", "c1")                   // octopus
	h.commit("d1", 8, "c3").commit("d2", 9, "d1")         // dangling
	h.commit("x1", 10, "o1")                              // hidden branch's
	h.commit("b1", 11, "o1").commit("b2", 12, "b1")       // branch a-b
	h.commit("u1", 13, "o1").commit("u2", 14, "u1", "b2") // branch a_b, merging a-b
	h.branch("main", "o1", false).branch("feature", "f2", false).branch("import-x", "x1", true)
	h.branch("a-b", "b2", false).branch("a_b", "u2", false).branch("A", "c1", false)
	return h.f
}

// checkHeads checks Heads against the fixture, hidden branches included.
func checkHeads(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	expectHeads(r, h.Source, h.storeBranches(f.Branches))
}

func checkListEveryCommit(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	got := listAll(r, h.Source)
	want := map[string]retention.Commit{}
	for _, c := range f.Commits {
		c = h.storeCommit(c)
		want[c.ID] = c
	}
	seen := map[string]bool{}
	for _, c := range got {
		w, ok := want[c.ID]
		switch {
		case !ok:
			r.Errorf("List yielded commit %s, not in the store", c.ID)
		case seen[c.ID]:
			r.Errorf("List yielded commit %s twice", c.ID)
		default:
			expectCommit(r, "List", c, w)
		}
		seen[c.ID] = true
	}
	for id := range want {
		if !seen[id] {
			r.Errorf("List left out commit %s", id)
		}
	}
}

// checkParents checks the main parent of every merge, the one whose
// history retention follows, through Get.
func checkParents(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	for _, w := range f.Commits {
		w = h.storeCommit(w)
		c, err := h.Source.Get(context.Background(), w.ID)
		if err != nil {
			r.Errorf("Get(%s): %v", w.ID, err)
			continue
		}
		if got, want := mainParent(c), mainParent(w); got != want {
			r.Errorf("commit %s: main parent %q (Parents %q, Version %d), want %q", w.ID, got, c.Parents, c.Version, want)
		}
	}
}

func checkGet(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	for _, w := range f.Commits {
		w = h.storeCommit(w)
		c, err := h.Source.Get(context.Background(), w.ID)
		if err != nil {
			r.Errorf("Get(%s): %v", w.ID, err)
			continue
		}
		expectCommit(r, "Get", c, w)
	}
}

// checkGetMissing checks that Get of a commit that does not exist is an
// error: retention cannot tell a zero commit from a root.
func checkGetMissing(r reporter, l *loader) {
	h := l.load(l.richFixture())
	for _, id := range []string{ID("never-made"), ""} {
		c, err := h.Source.Get(context.Background(), id)
		if err == nil {
			r.Errorf("Get(%q), a commit that does not exist, = %+v and no error", id, c)
		}
	}
}

// checkGetAfterList commits on main and creates a branch while List runs:
// Get must return the new commits, and Heads show them.
func checkGetAfterList(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	if h.Add == nil {
		r.Fatalf("Harness.Add is nil")
	}
	late := (&history{options: l.options}).commit("late1", 20, "o1").commit("late2", 21, "late1").commit("late3", 22, "f2")
	late.branch("main", "late2", false).branch("late-branch", "late3", false)
	added := false
	for _, err := range h.Source.List(context.Background()) {
		if err != nil {
			r.Fatalf("List: %v", err)
		}
		if !added {
			added = true
			if err := h.Add(context.Background(), late.f); err != nil {
				r.Fatalf("Add: %v", err)
			}
		}
	}
	for _, w := range late.f.Commits {
		w = h.storeCommit(w)
		c, err := h.Source.Get(context.Background(), w.ID)
		if err != nil {
			r.Errorf("Get(%s), committed after List began: %v", w.ID, err)
			continue
		}
		expectCommit(r, "Get", c, w)
	}
	branches := slices.DeleteFunc(slices.Clone(f.Branches), func(b Branch) bool { return b.ID == "main" })
	expectHeads(r, h.Source, h.storeBranches(append(branches, late.f.Branches...)))
}

// checkCommitsImmutable adds commits under IDs the store already holds,
// with another date, metarange or parents: a store that takes them has
// commits that change, and a GC may keep the objects of one version and
// delete those of the other. Add must fail or change nothing.
func checkCommitsImmutable(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	if h.Add == nil {
		r.Fatalf("Harness.Add is nil")
	}
	if h.IDs != nil {
		// A store that derives IDs from content gives other content
		// another ID: it cannot reuse one.
		return
	}
	want := map[string]retention.Commit{}
	for _, c := range f.Commits {
		want[c.ID] = c
	}
	for i, name := range []string{"c1", "m1", "o1", "d2"} {
		c := want[ID(name)]
		c.Parents = slices.Clone(c.Parents)
		switch i {
		case 0:
			c.CreationDate = c.CreationDate.AddDate(0, 0, 30)
		case 1:
			c.MetaRangeID += "-rewritten"
			if l.noMetaRanges {
				c.CreationDate = c.CreationDate.Add(time.Hour)
			}
		case 2:
			c.Parents = c.Parents[:1]
		case 3:
			c.Parents = []string{ID("x1")}
		}
		_ = h.Add(context.Background(), Fixture{Commits: []retention.Commit{c}}) // an error is a refusal
	}
	for _, name := range []string{"c1", "m1", "o1", "d2"} {
		got, err := h.Source.Get(context.Background(), ID(name))
		if err != nil {
			r.Errorf("Get(%s) after an Add that reused its ID: %v", ID(name), err)
			continue
		}
		expectCommit(r, "Get after an Add that reused the ID", got, want[ID(name)])
	}
	seen := map[string]int{}
	for _, c := range listAll(r, h.Source) {
		seen[c.ID]++
		if w, ok := want[c.ID]; ok {
			expectCommit(r, "List after an Add that reused the ID", c, w)
		}
	}
	for id, n := range seen {
		if n > 1 {
			r.Errorf("List yields commit %s %d times", id, n)
		}
	}
}

func checkEarlyBreak(r reporter, l *loader) {
	f := l.richFixture()
	h := l.load(f)
	suite.NotBlocked(r, "breaking out of Heads and List", func() {
		for range 3 {
			for _, err := range h.Source.Heads(context.Background()) {
				if err != nil {
					r.Fatalf("Heads: %v", err)
				}
				break
			}
			for _, err := range h.Source.List(context.Background()) {
				if err != nil {
					r.Fatalf("List: %v", err)
				}
				break
			}
		}
	})
	suite.NotBlocked(r, "Heads after an early break", func() { expectHeads(r, h.Source, h.storeBranches(f.Branches)) })
}

// A done context must end every call with its error: an adapter that stops
// quietly hides commits.
func checkCancelledContext(r reporter, l *loader) {
	h := l.load(l.richFixture())
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		if n, err := suite.Drain(h.Source.Heads(ctx)); !errors.Is(err, ctx.Err()) {
			r.Errorf("Heads with a done context yielded %d branches and then %v; want an error wrapping %v", len(n), err, ctx.Err())
		}
		if n, err := suite.Drain(h.Source.List(ctx)); !errors.Is(err, ctx.Err()) {
			r.Errorf("List with a done context yielded %d commits and then %v; want an error wrapping %v", len(n), err, ctx.Err())
		}
		if _, err := h.Source.Get(ctx, h.storeID(ID("c1"))); !errors.Is(err, ctx.Err()) {
			r.Errorf("Get with a done context: %v; want an error wrapping %v", err, ctx.Err())
		}
	}
}

func checkCancelDuringList(r reporter, l *loader) {
	h := &history{options: l.options}
	h.commit("n0", 0)
	for i := 1; i < 300; i++ {
		h.commit(fmt.Sprintf("n%d", i), 0, fmt.Sprintf("n%d", i-1))
	}
	for i := range 300 {
		h.branch(fmt.Sprintf("b%03d", i), fmt.Sprintf("n%d", i), false)
	}
	s := l.load(h.f).Source
	for _, call := range []struct {
		name string
		seq  func(ctx context.Context) iter.Seq2[any, error]
	}{
		{"Heads", func(ctx context.Context) iter.Seq2[any, error] { return suite.Any(s.Heads(ctx)) }},
		{"List", func(ctx context.Context) iter.Seq2[any, error] { return suite.Any(s.List(ctx)) }},
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
	f := l.richFixture()
	h := l.load(f)
	if h.FailReads == nil {
		return // the host cannot inject faults
	}
	boom := errors.New("sourcetest: injected store failure")
	c1 := h.storeID(ID("c1"))
	h.FailReads(boom)
	if _, err := suite.Drain(h.Source.Heads(context.Background())); !errors.Is(err, boom) {
		r.Errorf("Heads while the store fails: %v; want an error wrapping the store's", err)
	}
	if _, err := suite.Drain(h.Source.List(context.Background())); !errors.Is(err, boom) {
		r.Errorf("List while the store fails: %v; want an error wrapping the store's", err)
	}
	if _, err := h.Source.Get(context.Background(), c1); !errors.Is(err, boom) {
		r.Errorf("Get while the store fails: %v; want an error wrapping the store's", err)
	}
	h.FailReads(nil)

	// A failure during List ends it with the error, or not at all (an
	// adapter may read a snapshot first): never quietly short.
	n := 0
	var err error
	for _, e := range h.Source.List(context.Background()) {
		if err = e; e != nil {
			break
		}
		if n++; n == 1 {
			h.FailReads(boom)
		}
	}
	h.FailReads(nil)
	if !errors.Is(err, boom) && n != len(f.Commits) {
		r.Errorf("List with the store failing after the first commit: %d of %d commits, then %v; want every commit or an error wrapping the store's", n, len(f.Commits), err)
	}
}

// checkActiveCommits runs retention.ActiveCommits over the adapter and over
// the fixture itself, on random histories, at several dates: the results
// must agree.
func checkActiveCommits(r reporter, l *loader) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 6 {
		f := l.randomFixture(rng, round)
		h := l.load(f)
		model := &fixtureSource{f: f}
		rules := &retention.Rules{DefaultRetentionDays: 5, BranchRetentionDays: map[string]int32{"main": 12, "b1": 2}}
		for _, day := range []int{3, 10, 25, 60} {
			now := baseTime.AddDate(0, 0, day)
			want, err := retention.ActiveCommits(context.Background(), model.Heads(context.Background()), model, rules, now)
			if err != nil {
				r.Fatalf("ActiveCommits of the fixture: %v", err)
			}
			for i := range want {
				want[i].CommitID = h.storeID(want[i].CommitID)
			}
			slices.SortFunc(want, func(a, b retention.ActiveCommit) int { return strings.Compare(a.CommitID, b.CommitID) })
			got, err := retention.ActiveCommits(context.Background(), h.Source.Heads(context.Background()), h.Source, rules, now)
			if err != nil {
				r.Errorf("round %d, day %d: ActiveCommits over the Source: %v", round, day, err)
				continue
			}
			if !slices.Equal(got, want) {
				r.Errorf("round %d, day %d: ActiveCommits over the Source:\n got  %v\n want %v", round, day, got, want)
			}
		}
	}
}

// randomFixture is a random history of about 60 commits over 30 days, with
// merges, branches (one hidden) and dangling commits.
func (l *loader) randomFixture(rng *rand.Rand, round int) Fixture {
	h := &history{options: l.options}
	var names []string
	heads := map[string]string{}
	branches := []string{"main", "b1", "b2", "b3"}
	for i := range 60 {
		name := fmt.Sprintf("r%d-%d", round, i)
		var parents []string
		b := branches[rng.IntN(len(branches))]
		if head, ok := heads[b]; ok {
			parents = append(parents, head)
		} else if len(names) > 0 {
			parents = append(parents, names[rng.IntN(len(names))])
		}
		if len(names) > 2 && rng.IntN(5) == 0 {
			parents = append(parents, names[rng.IntN(len(names))])
		}
		version := 1
		if len(parents) > 1 && rng.IntN(3) == 0 {
			version = 0
			parents[0], parents[len(parents)-1] = parents[len(parents)-1], parents[0]
		}
		h.commitV(name, i/2, version, parents...)
		names = append(names, name)
		heads[b] = name
	}
	for _, b := range branches[:3] {
		if head, ok := heads[b]; ok {
			h.branch(b, head, b == "b2")
		}
	}
	return h.f
}

// fixtureSource is the reference adapter: the fixture itself.
type fixtureSource struct{ f Fixture }

func (s *fixtureSource) Heads(context.Context) iter.Seq2[retention.Branch, error] {
	return func(yield func(retention.Branch, error) bool) {
		for _, b := range s.f.Branches {
			if !yield(retention.Branch{ID: b.ID, CommitID: b.Head}, nil) {
				return
			}
		}
	}
}

func (s *fixtureSource) List(context.Context) iter.Seq2[retention.Commit, error] {
	return func(yield func(retention.Commit, error) bool) {
		for _, c := range s.f.Commits {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (s *fixtureSource) Get(_ context.Context, id string) (retention.Commit, error) {
	for _, c := range s.f.Commits {
		if c.ID == id {
			return c, nil
		}
	}
	return retention.Commit{}, fmt.Errorf("no commit %s", id)
}

// mainParent is the parent whose history retention follows.
func mainParent(c retention.Commit) string {
	switch {
	case len(c.Parents) == 0:
		return ""
	case c.Version < 1:
		return c.Parents[len(c.Parents)-1]
	}
	return c.Parents[0]
}

// expectCommit compares a commit as retention reads it: its ID, date,
// metarange, main parent and set of parents.
func expectCommit(r reporter, call string, got, want retention.Commit) {
	r.Helper()
	switch {
	case got.ID != want.ID:
		r.Errorf("%s(%s): ID %q", call, want.ID, got.ID)
	case !got.CreationDate.Equal(want.CreationDate):
		r.Errorf("%s(%s): CreationDate %v, want %v", call, want.ID, got.CreationDate, want.CreationDate)
	case got.MetaRangeID != want.MetaRangeID:
		r.Errorf("%s(%s): MetaRangeID %q, want %q", call, want.ID, got.MetaRangeID, want.MetaRangeID)
	case mainParent(got) != mainParent(want):
		r.Errorf("%s(%s): main parent %q (Parents %q, Version %d), want %q", call, want.ID, mainParent(got), got.Parents, got.Version, mainParent(want))
	case !slices.Equal(sorted(got.Parents), sorted(want.Parents)):
		r.Errorf("%s(%s): Parents %q, want %q", call, want.ID, got.Parents, want.Parents)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func expectHeads(r reporter, s Source, want []Branch) {
	r.Helper()
	got, err := suite.Drain(s.Heads(context.Background()))
	if err != nil {
		r.Errorf("Heads: %v", err)
		return
	}
	g := make([]string, len(got))
	for i, b := range got {
		g[i] = b.ID + "=" + b.CommitID
	}
	w := make([]string, len(want))
	for i, b := range want {
		w[i] = b.ID + "=" + b.Head
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		r.Errorf("Heads:\n got  %q\n want %q", g, w)
	}
}

func listAll(r reporter, s Source) []retention.Commit {
	r.Helper()
	cs, err := suite.Drain(s.List(context.Background()))
	if err != nil {
		r.Fatalf("List: %v", err)
	}
	return cs
}
