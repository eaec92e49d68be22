package sourcetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/suite"
	"github.com/lakegc/lakegc/retention"
)

func TestFakeSource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none, false, false) })
}

// A store that derives commit IDs from their content, as lakeFS does, passes
// through Harness.IDs.
func TestContentAddressedSource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none, true, false) })
}

// A store without metaranges and versions passes with WithoutMetaRanges
// and WithoutVersions.
func TestBareSource(t *testing.T) {
	Run(t, func(t *testing.T, f Fixture) Harness { return newFake(f, none, false, true) }, WithoutMetaRanges(), WithoutVersions())
}

// Without the options, a store without metaranges and versions fails: it
// loses the fixtures' metaranges and the main parent of legacy merges.
func TestBareStoreNeedsOptions(t *testing.T) {
	l := &loader{load: func(f Fixture) Harness { return newFake(f, none, false, true) }}
	for _, name := range []string{"Get", "Parents", "ActiveCommits"} {
		i := slices.IndexFunc(checks, func(c check) bool { return c.Name == name })
		if failed, _ := suite.RunCheck(checks[i], l); !failed {
			t.Errorf("%s passes for a store without metaranges and versions, run without the options", name)
		}
	}
}

// fakes loads fixtures into fakes with bug b: content-addressed ones with
// content, and with bare ones that keep no metarange and no version,
// checked with WithoutMetaRanges and WithoutVersions.
func fakes(content, bare bool) func(b bug) *loader {
	return func(b bug) *loader {
		o := options{noMetaRanges: bare, noVersions: bare}
		return &loader{load: func(f Fixture) Harness { return newFake(f, b, content, bare) }, options: o}
	}
}

// TestSuiteCatchesBrokenSources proves that each check fails for an
// adapter with the bug it is meant to catch, and that the correct adapter
// passes them all: over a store that keeps the fixture's IDs, and over one
// that derives them from content (Harness.IDs), with the bugs only such a
// store can have.
func TestSuiteCatchesBrokenSources(t *testing.T) {
	for _, mode := range []struct{ content, bare bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("content-addressed=%t,bare=%t", mode.content, mode.bare), func(t *testing.T) {
			suiteCatchesBrokenSources(t, mode.content, mode.bare)
		})
	}
}

func suiteCatchesBrokenSources(t *testing.T, content, bare bool) {
	cases := []suite.Case[bug]{
		{Bug: hiddenOmitted, Caught: []string{"Heads"}},
		{Bug: headsLastPageLost, Caught: []string{"Heads"}},
		{Bug: listLastPageLost, Caught: []string{"ListEveryCommit", "ActiveCommits"}},
		{Bug: parentsSorted, Caught: []string{"Parents", "ListEveryCommit", "Get", "ActiveCommits"}},
		{Bug: versionZero, Caught: []string{"Parents", "Get", "ActiveCommits"}},
		{Bug: secondParentDropped, Caught: []string{"Get", "ListEveryCommit"}},
		{Bug: dateToDay, Caught: []string{"Get", "ListEveryCommit", "ActiveCommits"}},
		{Bug: getMissingZero, Caught: []string{"GetMissing"}},
		{Bug: getFromSnapshot, Caught: []string{"GetCommitAfterListBegan"}},
		{Bug: headsFromSnapshot, Caught: []string{"GetCommitAfterListBegan"}},
		{Bug: continueAfterBreak, Caught: []string{"EarlyBreak"}},
		{Bug: quietOnCancel, Caught: []string{"CancelledContext", "CancelDuringList"}},
		{Bug: contextAtStartOnly, Caught: []string{"CancelDuringList"}},
		{Bug: getIgnoresContext, Caught: []string{"CancelledContext"}},
		{Bug: swallowsErrors, Caught: []string{"ErrorsPassedThrough"}},
		{Bug: quietFailureMidway, Caught: []string{"ErrorsPassedThrough"}},
	}
	if !bare { // bugs of a store that keeps metaranges and versions
		cases = append(cases,
			suite.Case[bug]{Bug: versionDropped, Caught: []string{"Parents", "Get", "ActiveCommits"}},
			suite.Case[bug]{Bug: metarangeDropped, Caught: []string{"Get", "ActiveCommits"}},
		)
	}
	var exempt []string
	if !content {
		cases = append(cases, suite.Case[bug]{Bug: commitRewritten, Caught: []string{"CommitsImmutable"}})
	} else {
		// A store that derives IDs from content cannot reuse one for
		// other content: CommitsImmutable does not apply to it.
		exempt = append(exempt, "CommitsImmutable")
		cases = append(cases,
			suite.Case[bug]{Bug: parentsUntranslated, Caught: []string{"Parents", "Get", "ListEveryCommit", "ActiveCommits", "GetCommitAfterListBegan"}},
			suite.Case[bug]{Bug: headsUntranslated, Caught: []string{"Heads", "GetCommitAfterListBegan", "EarlyBreak", "ActiveCommits"}},
			suite.Case[bug]{Bug: idsUnreported, Caught: []string{"Heads", "ListEveryCommit", "Parents", "Get", "GetCommitAfterListBegan", "ActiveCommits"}},
			suite.Case[bug]{Bug: lateIDsUnreported, Caught: []string{"GetCommitAfterListBegan"}},
		)
	}
	load := fakes(content, bare)
	correct := []func() *loader{func() *loader { return load(none) }}
	suite.SelfTest(t, checks, correct, load, cases, exempt...)
}

type bug int

const (
	none bug = iota
	hiddenOmitted
	headsLastPageLost
	listLastPageLost
	parentsSorted
	versionDropped
	secondParentDropped
	dateToDay
	metarangeDropped
	getMissingZero
	getFromSnapshot
	headsFromSnapshot
	continueAfterBreak
	quietOnCancel
	contextAtStartOnly
	getIgnoresContext
	swallowsErrors
	quietFailureMidway
	commitRewritten
	versionZero // a store without versions leaves Version zero
	// Bugs of a content-addressed store's host (Harness.IDs).
	parentsUntranslated // writes the fixture's parent IDs, not the store's
	headsUntranslated   // points branches at the fixture's IDs
	idsUnreported       // IDs reports the fixture's IDs as the store's
	lateIDsUnreported   // IDs knows the commits of the load, not of Add
)

func (b bug) String() string {
	return [...]string{"none", "hiddenOmitted", "headsLastPageLost", "listLastPageLost", "parentsSorted",
		"versionDropped", "secondParentDropped", "dateToDay", "metarangeDropped", "getMissingZero",
		"getFromSnapshot", "headsFromSnapshot", "continueAfterBreak", "quietOnCancel", "contextAtStartOnly",
		"getIgnoresContext", "swallowsErrors", "quietFailureMidway", "commitRewritten",
		"versionZero", "parentsUntranslated", "headsUntranslated", "idsUnreported", "lateIDsUnreported"}[b]
}

// fake is a commit store in memory whose adapter has at most one bug.
type fake struct {
	bug  bug
	bare bool // the store keeps no metarange and no version
	mu   sync.Mutex
	data *fakeData
	snap *fakeData // what the snapshot bugs read: the data as loaded
	fail error
	// ids maps the fixture's commit IDs to the store's, for a store that
	// derives them from content, as lakeFS does; nil: the fixture's.
	ids map[string]string
}

type fakeData struct {
	commits  map[string]retention.Commit
	order    []string
	branches map[string]Branch
}

func (d *fakeData) add(f Fixture) {
	for _, c := range f.Commits {
		if _, ok := d.commits[c.ID]; !ok {
			d.order = append(d.order, c.ID)
		}
		d.commits[c.ID] = c
	}
	for _, b := range f.Branches {
		d.branches[b.ID] = b
	}
}

func (d *fakeData) clone() *fakeData {
	c := &fakeData{commits: map[string]retention.Commit{}, branches: map[string]Branch{}}
	c.add(Fixture{})
	for _, id := range d.order {
		c.commits[id] = d.commits[id]
	}
	c.order = slices.Clone(d.order)
	for id, b := range d.branches {
		c.branches[id] = b
	}
	return c
}

func newFake(f Fixture, b bug, content, bare bool) Harness {
	s := &fake{bug: b, bare: bare, data: &fakeData{commits: map[string]retention.Commit{}, branches: map[string]Branch{}}}
	if content {
		s.ids = map[string]string{}
	}
	s.data.add(s.toStore(f, true))
	s.snap = s.data.clone()
	h := Harness{Source: s, Add: s.add, FailReads: s.failReads}
	if content {
		h.IDs = s.storeID
	}
	return h
}

func (s *fake) add(_ context.Context, f Fixture) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf := s.toStore(f, false)
	for _, c := range sf.Commits {
		if old, ok := s.data.commits[c.ID]; ok && s.bug != commitRewritten && !reflect.DeepEqual(old, c) {
			return fmt.Errorf("fake: commit %s exists with other content", c.ID)
		}
	}
	s.data.add(sf)
	return nil
}

// toStore writes f as a content-addressed store would: each commit's ID
// derived from its content, its parents' IDs the store's (recorded in
// s.ids); the fixture as it is without s.ids. Called with s.mu held, or
// before s is shared.
func (s *fake) toStore(f Fixture, loading bool) Fixture {
	if s.ids == nil {
		return f
	}
	out := Fixture{}
	for _, c := range f.Commits {
		c.Parents = slices.Clone(c.Parents)
		if s.bug != parentsUntranslated {
			for i, p := range c.Parents {
				c.Parents[i] = s.ids[p]
			}
		}
		sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d|%q", c.MetaRangeID, c.CreationDate.Unix(), c.Version, c.Parents))
		id := hex.EncodeToString(sum[:])
		if loading || s.bug != lateIDsUnreported {
			s.ids[c.ID] = id
		}
		c.ID = id
		out.Commits = append(out.Commits, c)
	}
	for _, b := range f.Branches {
		if id, ok := s.ids[b.Head]; ok && s.bug != headsUntranslated {
			b.Head = id
		}
		out.Branches = append(out.Branches, b)
	}
	return out
}

// storeID is the fake host's Harness.IDs.
func (s *fake) storeID(fixtureID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bug == idsUnreported {
		return fixtureID, true
	}
	id, ok := s.ids[fixtureID]
	return id, ok
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

// read returns the data a call reads.
func (s *fake) read(snapshot bool) *fakeData {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snapshot {
		return s.snap
	}
	return s.data.clone()
}

// convert returns a commit as the buggy adapter reports it.
func (s *fake) convert(c retention.Commit) retention.Commit {
	c.Parents = slices.Clone(c.Parents)
	if s.bare {
		c.MetaRangeID, c.Version = "", 1
	}
	switch s.bug {
	case parentsSorted:
		slices.Sort(c.Parents)
	case versionDropped:
		c.Version = 1
	case secondParentDropped:
		if len(c.Parents) > 1 {
			c.Parents = c.Parents[:1]
		}
	case dateToDay:
		c.CreationDate = c.CreationDate.Truncate(24 * time.Hour)
	case metarangeDropped:
		c.MetaRangeID = ""
	case versionZero:
		c.Version = 0
	}
	return c
}

func (s *fake) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	d := s.read(s.bug == headsFromSnapshot)
	var out []retention.Branch
	for _, b := range d.branches {
		if !(b.Hidden && s.bug == hiddenOmitted) {
			out = append(out, retention.Branch{ID: b.ID, CommitID: b.Head})
		}
	}
	slices.SortFunc(out, func(a, b retention.Branch) int { return strings.Compare(a.ID, b.ID) })
	if s.bug == headsLastPageLost {
		out = out[:len(out)/4*4]
	}
	return iterate(s, ctx, out)
}

func (s *fake) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	d := s.read(false)
	var out []retention.Commit
	for _, id := range d.order {
		out = append(out, s.convert(d.commits[id]))
	}
	if s.bug == listLastPageLost {
		out = out[:len(out)/8*8]
	}
	return iterate(s, ctx, out)
}

func (s *fake) Get(ctx context.Context, id string) (retention.Commit, error) {
	if err := ctx.Err(); err != nil && s.bug != getIgnoresContext {
		return retention.Commit{}, err
	}
	if err := s.failure(); err != nil && s.bug != swallowsErrors {
		return retention.Commit{}, fmt.Errorf("fake: get: %w", err)
	}
	c, ok := s.read(s.bug == getFromSnapshot).commits[id]
	if !ok {
		if s.bug == getMissingZero {
			return retention.Commit{}, nil
		}
		return retention.Commit{}, fmt.Errorf("fake: commit %q not found", id)
	}
	return s.convert(c), nil
}

// iterate yields items, checking ctx and the injected failure before each,
// as the bug allows.
func iterate[T any](s *fake, ctx context.Context, items []T) iter.Seq2[T, error] {
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
			if !yield(v, nil) && s.bug != continueAfterBreak {
				return
			}
		}
		if err := ctx.Err(); err != nil && s.bug != quietOnCancel && s.bug != contextAtStartOnly {
			yield(zero, err)
		}
	}
}
