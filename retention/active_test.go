package retention

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// daysAgo returns the time d days before testNow.
func daysAgo(d int) time.Time { return testNow.AddDate(0, 0, -d) }

// fakeSource is a CommitSource over fixed commits. List yields listed, in
// order; Get returns any commit of all and records the call.
type fakeSource struct {
	listed    []Commit
	all       map[string]Commit
	listErrAt int // yield listErr instead of listed[listErrAt-1] (0: never)
	listErr   error
	getErr    error
	gets      []string
}

func newFakeSource(listed []Commit, getOnly ...Commit) *fakeSource {
	s := &fakeSource{listed: listed, all: map[string]Commit{}}
	for _, c := range slices.Concat(listed, getOnly) {
		s.all[c.ID] = c
	}
	return s
}

var errNoCommit = errors.New("no such commit")

func (s *fakeSource) List(ctx context.Context) iter.Seq2[Commit, error] {
	return func(yield func(Commit, error) bool) {
		for i, c := range s.listed {
			if i+1 == s.listErrAt {
				yield(Commit{}, s.listErr)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (s *fakeSource) Get(ctx context.Context, id string) (Commit, error) {
	s.gets = append(s.gets, id)
	if s.getErr != nil {
		return Commit{}, s.getErr
	}
	c, ok := s.all[id]
	if !ok {
		return Commit{}, fmt.Errorf("%w: %s", errNoCommit, id)
	}
	return c, nil
}

func branchSeq(branches ...Branch) iter.Seq2[Branch, error] {
	return func(yield func(Branch, error) bool) {
		for _, b := range branches {
			if !yield(b, nil) {
				return
			}
		}
	}
}

func commitIDs(active []ActiveCommit) []string {
	ids := make([]string, len(active))
	for i, c := range active {
		ids[i] = c.CommitID
	}
	return ids
}

func commit(id string, created time.Time, parents ...string) Commit {
	return Commit{ID: id, Parents: parents, CreationDate: created, MetaRangeID: "mr-" + id, Version: 1}
}

// TestActiveCommitsSituations lists situations and the commits they keep.
func TestActiveCommitsSituations(t *testing.T) {
	rules := &Rules{DefaultRetentionDays: 10, BranchRetentionDays: map[string]int32{"main": 30, "tmp": 1, "forever": math.MaxInt32}}
	merge0 := commit("m0", daysAgo(2), "side", "trunk") // version 0: main parent is the last one
	merge0.Version = 0
	cases := []struct {
		name     string
		branches []Branch
		commits  []Commit
		want     []string
	}{{
		name:     "a HEAD is active however old it is",
		branches: []Branch{{"tmp", "a"}},
		commits:  []Commit{commit("a", daysAgo(400))},
		want:     []string{"a"},
	}, {
		name:     "every commit newer than T keeps its parent, so the first one at or before T is kept",
		branches: []Branch{{"main", "d"}},
		commits: []Commit{
			commit("a", daysAgo(50)), commit("b", daysAgo(40), "a"),
			commit("c", daysAgo(20), "b"), commit("d", daysAgo(1), "c"),
		},
		want: []string{"b", "c", "d"},
	}, {
		name:     "a child created exactly at T does not keep its parent",
		branches: []Branch{{"main", "b"}},
		commits:  []Commit{commit("a", daysAgo(60)), commit("b", daysAgo(30), "a")},
		want:     []string{"b"},
	}, {
		name:     "the walk goes on past an old commit (dates not monotonic)",
		branches: []Branch{{"tmp", "d"}},
		commits: []Commit{
			commit("a", daysAgo(90)), commit("b", testNow, "a"), // clock skew: b looks fresh
			commit("c", daysAgo(80), "b"), commit("d", testNow, "c"),
		},
		want: []string{"a", "c", "d"},
	}, {
		name:     "only main ancestry is followed",
		branches: []Branch{{"main", "m"}},
		commits: []Commit{
			commit("trunk", daysAgo(3)), commit("side", daysAgo(3)),
			commit("m", daysAgo(2), "trunk", "side"),
		},
		// side is the main parent of no commit: dangling, default 10 days, and fresh.
		want: []string{"m", "side", "trunk"},
	}, {
		name:     "a version 0 merge follows its last parent",
		branches: []Branch{{"main", "m0"}},
		commits: []Commit{
			commit("side-root", daysAgo(100)), commit("side", daysAgo(50), "side-root"),
			commit("trunk", daysAgo(50)), merge0,
		},
		// side is dangling (default 10 days) and older than its threshold, so
		// neither it nor side-root is kept; trunk is kept by the HEAD's step.
		want: []string{"m0", "trunk"},
	}, {
		name:     "a dangling commit is active iff it is newer than the default threshold",
		branches: []Branch{{"main", "h"}},
		commits: []Commit{
			commit("h", daysAgo(1)),
			commit("old-root", daysAgo(40)), commit("old", daysAgo(11), "old-root"),
			commit("new-root", daysAgo(40)), commit("new", daysAgo(9), "new-root"),
		},
		want: []string{"h", "new", "new-root"},
	}, {
		name:     "the most days an int32 holds keep the whole history",
		branches: []Branch{{"forever", "c"}},
		commits: []Commit{
			commit("a", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), commit("b", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), "a"),
			commit("c", daysAgo(20), "b"),
		},
		want: []string{"a", "b", "c"},
	}, {
		name:     "two branches on one HEAD: the longer retention counts",
		branches: []Branch{{"tmp", "c"}, {"main", "c"}},
		commits: []Commit{
			commit("a", daysAgo(50)), commit("b", daysAgo(25), "a"), commit("c", daysAgo(20), "b"),
		},
		want: []string{"a", "b", "c"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ActiveCommits(t.Context(), branchSeq(tc.branches...), newFakeSource(tc.commits), rules, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if ids := commitIDs(got); !slices.Equal(ids, tc.want) {
				t.Errorf("active = %v, want %v", ids, tc.want)
			}
			for _, c := range got {
				if c.MetaRangeID != "mr-"+c.CommitID {
					t.Errorf("commit %s has metarange %q", c.CommitID, c.MetaRangeID)
				}
			}
		})
	}
}

// TestActiveCommitsForkPoint is the case lakeFS gets wrong. main keeps 30
// days but its HEAD is 40 days old, so its walk passes the fork point F
// without keeping it. feature keeps 1 day; its HEAD X is an hour old, so the
// step X → F keeps F. lakeFS stops feature's walk at F, which main's older
// threshold passed, before deciding F, and expires it.
func TestActiveCommitsForkPoint(t *testing.T) {
	commits := []Commit{
		commit("R", daysAgo(60)),
		commit("F", daysAgo(45), "R"),
		commit("M", daysAgo(40), "F"),
		commit("X", testNow.Add(-time.Hour), "F"),
	}
	rules := &Rules{DefaultRetentionDays: 30, BranchRetentionDays: map[string]int32{"feature": 1}}
	want := []string{"F", "M", "X"}
	for _, branches := range [][]Branch{
		{{"main", "M"}, {"feature", "X"}},
		{{"feature", "X"}, {"main", "M"}},
	} {
		for _, listed := range [][]Commit{commits, reversed(commits)} {
			got, err := ActiveCommits(t.Context(), branchSeq(branches...), newFakeSource(listed), rules, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if ids := commitIDs(got); !slices.Equal(ids, want) {
				t.Errorf("branches %v: active = %v, want %v", branches, ids, want)
			}
		}
	}
}

// TestActiveCommitsForkPointEqualRetention is the package documentation's
// example: both branches keep 30 days, and F, the parent of main's fresh
// HEAD m, is kept whatever the ID of feature's old HEAD (lakeFS keeps it
// only when that ID sorts after m).
func TestActiveCommitsForkPointEqualRetention(t *testing.T) {
	for _, old := range []string{"a", "z"} {
		commits := []Commit{
			commit("R", daysAgo(60)),
			commit("F", daysAgo(50), "R"),
			commit(old, daysAgo(40), "F"),
			commit("m", daysAgo(1), "F"),
		}
		branches := []Branch{{"main", "m"}, {"feature", old}}
		rules := &Rules{DefaultRetentionDays: 30}
		got, err := ActiveCommits(t.Context(), branchSeq(branches...), newFakeSource(commits), rules, testNow)
		if err != nil {
			t.Fatal(err)
		}
		if ids, want := commitIDs(got), slices.Sorted(slices.Values([]string{"F", "m", old})); !slices.Equal(ids, want) {
			t.Errorf("feature at %q: active = %v, want %v", old, ids, want)
		}
		lk := lakeFSActiveCommits(repo{commits: commits, listed: commits, branches: branches, rules: rules}, testNow)
		if lk.active["F"] != (old == "z") {
			t.Errorf("feature at %q: the lakeFS model keeps F: %v", old, lk.active["F"])
		}
	}
}

// TestActiveCommitsVersion0MergeOfThree is a merge M of version 0 with
// parents P0, P1, P2: its walk follows P2, the last, but lakeFS's dangling
// test counts P1 as M's parent. So lakeFS starts a walk at P2 (default
// retention, which keeps it) and none at P1; the walk-parent reading starts
// one at P1 and none at P2. ActiveCommits starts both and keeps what either
// keeps.
func TestActiveCommitsVersion0MergeOfThree(t *testing.T) {
	commits := []Commit{
		commit("R", daysAgo(10)),
		commit("P0", daysAgo(3), "R"),
		commit("P1", daysAgo(3)),
		commit("P2", daysAgo(3), "R"),
		{ID: "M", Parents: []string{"P0", "P1", "P2"}, CreationDate: daysAgo(2), MetaRangeID: "mr-M", Version: 0},
	}
	rules := &Rules{DefaultRetentionDays: 30, BranchRetentionDays: map[string]int32{"main": 1}}
	got, err := ActiveCommits(t.Context(), branchSeq(Branch{"main", "M"}), newFakeSource(commits), rules, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if ids, want := commitIDs(got), []string{"M", "P0", "P1", "P2", "R"}; !slices.Equal(ids, want) {
		t.Errorf("active = %v, want %v", ids, want)
	}
	lk := lakeFSActiveCommits(repo{commits: commits, listed: commits, branches: []Branch{{"main", "M"}}, rules: rules}, testNow)
	if got, want := slices.Sorted(mapKeys(lk.active)), []string{"M", "P0", "P2", "R"}; !slices.Equal(got, want) {
		t.Errorf("lakeFS model keeps %v, want %v", got, want)
	}
}

// TestActiveCommitsLakeFSParentOnly covers commits known first, or only, as
// the lakeFSParent of a version-0 merge of three parents: one that does not
// exist is never fetched, and one that turns out to be the main parent of a
// commit fetched later is fetched, so its ancestry is walked.
func TestActiveCommitsLakeFSParentOnly(t *testing.T) {
	n := Commit{ID: "N", Parents: []string{"Q", "X", "Q"}, CreationDate: daysAgo(20), MetaRangeID: "mr-N", Version: 0}
	q := commit("Q", daysAgo(30))
	m := commit("M", daysAgo(1), "B")
	b := commit("B", daysAgo(2), "X")  // not listed: fetched, after X was indexed
	x := commit("X", daysAgo(3), "XP") // not listed
	xp := commit("XP", daysAgo(4))     // listed
	src := newFakeSource([]Commit{n, q, m, xp}, b, x)
	got, err := ActiveCommits(t.Context(), branchSeq(Branch{"main", "M"}), src, &Rules{DefaultRetentionDays: 10}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if ids, want := commitIDs(got), []string{"B", "M", "X", "XP"}; !slices.Equal(ids, want) {
		t.Errorf("active = %v, want %v", ids, want)
	}
	if !slices.Equal(src.gets, []string{"B", "X"}) {
		t.Errorf("Get calls = %v, want [B X]", src.gets)
	}

	// N's lakeFSParent does not exist: it is not fetched.
	ghost := Commit{ID: "G", Parents: []string{"Q", "missing", "Q"}, CreationDate: daysAgo(1), MetaRangeID: "mr-G", Version: 0}
	src = newFakeSource([]Commit{ghost, q})
	got, err = ActiveCommits(t.Context(), branchSeq(Branch{"main", "G"}), src, &Rules{DefaultRetentionDays: 10}, testNow)
	if err != nil || len(src.gets) != 0 {
		t.Fatalf("ActiveCommits = %v, %v after Gets %v; want no Get", got, err, src.gets)
	}
	if ids, want := commitIDs(got), []string{"G", "Q"}; !slices.Equal(ids, want) {
		t.Errorf("active = %v, want %v", ids, want)
	}
}

// TestActiveCommitsFetchIsLinear is a source whose unlisted commits form a
// chain H → x0 → x1 → … that Get walks, where each x(k+1) was indexed
// before x(k), as the lakeFS parent of a listed version-0 merge. Fetching
// must cost time linear in the commits, not a scan of every index per Get:
// 100,000 commits take well under a second, and a scan per Get takes
// minutes, which the deadline stops.
func TestActiveCommitsFetchIsLinear(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("100,000 commits: a test of time, not of concurrency")
	}
	const n = 100_000
	x := func(k int) string { return fmt.Sprintf("x%06d", k) }
	listed := []Commit{commit("A", daysAgo(100))}
	for k := range n {
		// Listed in this order, x(n-1) is indexed first and x(0) last.
		listed = append(listed, Commit{ID: fmt.Sprintf("m%06d", k), Parents: []string{"A", x(n - 1 - k), "A"}, CreationDate: daysAgo(50)})
	}
	getOnly := []Commit{commit("H", daysAgo(1), x(0))}
	for k := range n - 1 {
		getOnly = append(getOnly, commit(x(k), daysAgo(2), x(k+1)))
	}
	getOnly = append(getOnly, commit(x(n-1), daysAgo(2)))
	src := newFakeSource(listed, getOnly...)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := ActiveCommits(ctx, branchSeq(Branch{"main", "H"}), src, &Rules{DefaultRetentionDays: 10}, testNow)
	if err != nil {
		t.Fatalf("ActiveCommits after %d Gets: %v", len(src.gets), err)
	}
	if len(got) != n+1 || len(src.gets) != n+1 {
		t.Errorf("%d active commits after %d Gets; want H and every x, %d, after as many Gets", len(got), len(src.gets), n+1)
	}
}

func reversed[S ~[]E, E any](s S) S {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// repo is a random repository: its commits, the order List yields some of
// them, its branches and rules.
type repo struct {
	commits  []Commit // in creation order
	listed   []Commit
	getOnly  []Commit
	branches []Branch
	rules    *Rules

	// Extended rules (extended_test.go): nil ext is lakeFS's rules alone.
	ext           *Extended
	tags          []Tag  // the repository's tags
	withTags      bool   // the source implements Tags
	defaultBranch string // the source's DefaultBranch ("": it has none)
}

// randomRepo makes a commit graph with forks, merges of both versions,
// dangling chains, dates that go back and forth (some exactly on a
// threshold), up to hundreds of branches with mixed rules, and some commits
// that List misses but Get returns.
func randomRepo(r *rand.Rand) repo {
	n := 1 + r.IntN(40)
	if r.IntN(8) == 0 {
		n = 1 + r.IntN(250)
	}
	idStyle := r.IntN(4)
	monotonic := r.IntN(3) == 0
	var rp repo
	for k := range n {
		c := Commit{ID: randomID(r, idStyle, k), Version: r.IntN(3)}
		switch x := r.IntN(20); {
		case k == 0 || x == 0: // a root
		case x < 14: // one parent, usually a recent one: chains with forks
			c.Parents = []string{rp.commits[recentIndex(r, k)].ID}
		default: // a merge of two or three commits
			for range 2 + r.IntN(2) {
				c.Parents = append(c.Parents, rp.commits[r.IntN(k)].ID)
			}
		}
		c.CreationDate = randomDate(r, monotonic, k, n)
		c.MetaRangeID = fmt.Sprintf("%x", r.Uint64())
		if r.IntN(10) == 0 {
			c.MetaRangeID = "" // lakeFS's first commit has no metarange
		}
		rp.commits = append(rp.commits, c)
	}
	rp.rules = &Rules{DefaultRetentionDays: int32(r.IntN(35)), BranchRetentionDays: map[string]int32{}}
	nb := r.IntN(8)
	if r.IntN(8) == 0 {
		nb = r.IntN(400)
	}
	for b := range nb {
		id := fmt.Sprintf("branch-%d", b)
		rp.branches = append(rp.branches, Branch{ID: id, CommitID: rp.commits[recentIndex(r, n)].ID})
		if r.IntN(2) == 0 {
			rp.rules.BranchRetentionDays[id] = int32(r.IntN(45))
		}
	}
	rp.rules.BranchRetentionDays["no-such-branch"] = int32(r.IntN(45))
	holdOut := r.IntN(3) == 0
	for _, c := range rp.commits {
		if holdOut && r.IntN(8) == 0 {
			rp.getOnly = append(rp.getOnly, c)
			continue
		}
		rp.listed = append(rp.listed, c)
		if r.IntN(50) == 0 {
			rp.listed = append(rp.listed, c) // a source may yield a commit twice
		}
	}
	r.Shuffle(len(rp.listed), func(i, j int) { rp.listed[i], rp.listed[j] = rp.listed[j], rp.listed[i] })
	return rp
}

// recentIndex picks one of the first k commits, favouring the latest.
func recentIndex(r *rand.Rand, k int) int {
	if r.IntN(4) == 0 {
		return r.IntN(k)
	}
	return max(0, k-1-r.IntN(3))
}

func randomID(r *rand.Rand, style, k int) string {
	switch style {
	case 0: // lakeFS: hex SHA-256
		return fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), uint64(k))
	case 1:
		return fmt.Sprintf("c%d", k)
	case 2: // uppercase hex is not compacted: it must stay distinct from lowercase
		if k%2 == 0 {
			return fmt.Sprintf("%X", k<<8|0xab)
		}
		return fmt.Sprintf("%x", k<<8|0xab)
	default: // any bytes at all, odd-length hex among them
		return fmt.Sprintf("%x\xff%d", k, r.IntN(3))[:1+r.IntN(3)] + fmt.Sprint(k)
	}
}

// randomDate returns a date within about 60 days of testNow: increasing with
// k, or anywhere, and now and then exactly a whole number of days ago, which
// is where a threshold falls.
func randomDate(r *rand.Rand, monotonic bool, k, n int) time.Time {
	if r.IntN(6) == 0 {
		return daysAgo(r.IntN(50))
	}
	if monotonic {
		return testNow.Add(-time.Duration(n-k) * time.Duration(1+r.IntN(int(48*time.Hour))))
	}
	return testNow.Add(-time.Duration(r.Int64N(int64(60 * 24 * time.Hour))))
}

// modelActiveCommits is the definition, computed the slow way: from every
// starting point, walk the whole main ancestry and apply the per-step rule.
// It sees the commits List yields plus those that are HEADs or main parents of
// what it sees (the ones ActiveCommits must Get). A commit it sees is
// dangling when it is no HEAD and no commit it sees has it as its main
// parent, or none as its parent in lakeFS's dangling test (lakeFSParent,
// which differs for a version-0 merge of three or more parents).
func modelActiveCommits(rp repo, now time.Time) []ActiveCommit {
	// The model finds main parents itself (walkParent, lakeFSParent): a bug
	// in Commit.mainParent must not be copied into the expected result.
	mainParent := walkParent
	byID := map[string]Commit{}
	for _, c := range rp.commits {
		byID[c.ID] = c
	}
	seen := map[string]Commit{}
	var add func(id string)
	add = func(id string) {
		if _, ok := seen[id]; ok {
			return
		}
		c := byID[id]
		seen[id] = c
		if p := mainParent(c); p != "" {
			add(p)
		}
	}
	for _, c := range rp.listed {
		add(c.ID)
	}
	isHead, isParent, isLakeFSParent := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range rp.branches {
		add(b.CommitID)
		isHead[b.CommitID] = true
	}
	keepTags := rp.ext != nil && rp.ext.KeepTags && rp.withTags
	if keepTags {
		for _, t := range rp.tags {
			add(t.CommitID)
		}
	}
	for _, c := range seen {
		isParent[mainParent(c)] = true
		isLakeFSParent[lakeFSParent(c)] = true
	}
	active := map[string]bool{}
	walk := func(id string, days int32, head bool) {
		t := now.AddDate(0, 0, -int(days))
		c := seen[id]
		if head || c.CreationDate.After(t) {
			active[id] = true
		}
		for p := mainParent(c); p != ""; p = mainParent(c) {
			if c.CreationDate.After(t) {
				active[p] = true
			}
			c = seen[p]
		}
	}
	for _, b := range rp.branches {
		days, keepLast := rp.rules.RetentionDays(b.ID), 0
		if r := modelRule(rp.ext, b.ID); r != nil {
			if _, own := rp.rules.BranchRetentionDays[b.ID]; !own && r.RetentionDays != nil {
				days = *r.RetentionDays
			}
			keepLast = int(r.KeepLast)
		}
		protected := true
		if rp.ext != nil && rp.ext.StaleBranchDays > 0 && b.ID != rp.defaultBranch {
			protected = seen[b.CommitID].CreationDate.After(now.AddDate(0, 0, -int(rp.ext.StaleBranchDays)))
		}
		walk(b.CommitID, days, protected)
		for id, k := b.CommitID, 0; id != "" && k < keepLast; id, k = mainParent(seen[id]), k+1 {
			active[id] = true
		}
	}
	if keepTags {
		for _, t := range rp.tags {
			walk(t.CommitID, rp.rules.DefaultRetentionDays, true)
		}
	}
	for id := range seen {
		if !isHead[id] && (!isParent[id] || !isLakeFSParent[id]) {
			walk(id, rp.rules.DefaultRetentionDays, false)
		}
	}
	var out []ActiveCommit
	for id := range active {
		out = append(out, ActiveCommit{CommitID: id, MetaRangeID: seen[id].MetaRangeID})
	}
	slices.SortFunc(out, func(a, b ActiveCommit) int { return strings.Compare(a.CommitID, b.CommitID) })
	return out
}

func TestActiveCommitsMatchesModel(t *testing.T) {
	cases := 3000
	switch {
	case testing.Short():
		cases = 300
	case raceEnabled:
		cases = 1000
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	// What the cases exercised: commits found active, listed commits left
	// inactive, and Gets of commits List missed.
	var active, inactive, gets int
	for i := range cases {
		rp := randomRepo(r)
		src := newFakeSource(rp.listed, rp.getOnly...)
		got, err := ActiveCommits(t.Context(), branchSeq(rp.branches...), src, rp.rules, testNow)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := modelActiveCommits(rp, testNow)
		active += len(want)
		for _, c := range rp.listed {
			if !slices.ContainsFunc(want, func(a ActiveCommit) bool { return a.CommitID == c.ID }) {
				inactive++
			}
		}
		gets += len(src.gets)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (seed %d): %d commits, %d branches, rules %+v:\ngot  %v\nwant %v",
				i, seed, len(rp.commits), len(rp.branches), *rp.rules, got, want)
		}
		listed := map[string]bool{}
		for _, c := range rp.listed {
			listed[c.ID] = true
		}
		for _, id := range src.gets {
			if listed[id] {
				t.Fatalf("case %d: Get(%q), a commit List yielded", i, id)
			}
		}
		if len(src.gets) != len(slices.Compact(slices.Sorted(slices.Values(src.gets)))) {
			t.Fatalf("case %d: Get called twice for one commit: %v", i, src.gets)
		}
	}
	if active == 0 || inactive == 0 || gets == 0 {
		t.Errorf("the cases never exercised a case: %d commits active, %d inactive, %d Gets", active, inactive, gets)
	}
}

func TestActiveCommitsGetsWhatListMissed(t *testing.T) {
	// HEAD h was committed after List began, and so was p, its parent: List
	// yields neither, and q, p's parent, only.
	q := commit("q", daysAgo(3))
	p := commit("p", daysAgo(2), "q")
	h := commit("h", daysAgo(1), "p")
	src := newFakeSource([]Commit{q}, p, h)
	got, err := ActiveCommits(t.Context(), branchSeq(Branch{"main", "h"}), src, &Rules{DefaultRetentionDays: 5}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if ids := commitIDs(got); !slices.Equal(ids, []string{"h", "p", "q"}) {
		t.Errorf("active = %v", ids)
	}
	if !slices.Equal(src.gets, []string{"h", "p"}) {
		t.Errorf("Get calls = %v, want [h p]", src.gets)
	}
}

func TestActiveCommitsErrors(t *testing.T) {
	errSource := errors.New("source failed")
	rules := &Rules{DefaultRetentionDays: 5}
	chain := []Commit{commit("a", daysAgo(3)), commit("b", daysAgo(2), "a"), commit("c", daysAgo(1), "b")}
	cases := []struct {
		name     string
		branches iter.Seq2[Branch, error]
		src      func() *fakeSource
		rules    *Rules
		want     error // nil: any error
	}{{
		name: "List fails midway",
		src: func() *fakeSource {
			s := newFakeSource(chain)
			s.listErrAt, s.listErr = 2, errSource
			return s
		},
		want: errSource,
	}, {
		name: "List fails at once",
		src: func() *fakeSource {
			s := newFakeSource(chain)
			s.listErrAt, s.listErr = 1, errSource
			return s
		},
		want: errSource,
	}, {
		name: "branches fail",
		branches: func(yield func(Branch, error) bool) {
			if yield(Branch{"main", "c"}, nil) {
				yield(Branch{}, errSource)
			}
		},
		want: errSource,
	}, {
		name: "Get fails",
		src: func() *fakeSource {
			s := newFakeSource(chain[:2], chain[2])
			s.getErr = errSource
			return s
		},
		want: errSource,
	}, {
		name: "a main parent nobody has",
		src:  func() *fakeSource { return newFakeSource(chain[1:]) },
		want: errNoCommit,
	}, {
		name: "Get returns another commit",
		src: func() *fakeSource {
			s := newFakeSource(chain[:2])
			s.all["c"] = chain[1]
			return s
		},
	}, {
		name: "a commit without ID",
		src:  func() *fakeSource { return newFakeSource(append(slices.Clone(chain), Commit{CreationDate: testNow})) },
	}, {
		name: "a commit with an empty parent ID",
		src:  func() *fakeSource { return newFakeSource(append(slices.Clone(chain), commit("d", testNow, ""))) },
	}, {
		name: "a commit ID longer than 64 KiB",
		src: func() *fakeSource {
			return newFakeSource(append(slices.Clone(chain), commit(strings.Repeat("d", maxIDLen+1), testNow, "c")))
		},
	}, {
		name:     "a branch without HEAD",
		branches: branchSeq(Branch{"main", "c"}, Branch{"empty", ""}),
	}, {
		name:  "invalid rules",
		rules: &Rules{DefaultRetentionDays: -1},
		want:  ErrInvalidRules,
	}, {
		name:  "nil rules",
		rules: (*Rules)(nil),
		want:  ErrInvalidRules,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			branches := tc.branches
			if branches == nil {
				branches = branchSeq(Branch{"main", "c"})
			}
			src := newFakeSource(chain)
			if tc.src != nil {
				src = tc.src()
			}
			r := rules
			if tc.rules != nil || tc.name == "nil rules" {
				r = tc.rules
			}
			got, err := ActiveCommits(t.Context(), branches, src, r, testNow)
			if err == nil {
				t.Fatalf("no error; active = %v", commitIDs(got))
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
			if got != nil {
				t.Errorf("a result with the error: %v", got)
			}
		})
	}
}

func TestActiveCommitsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	src := newFakeSource([]Commit{commit("a", testNow)})
	if _, err := ActiveCommits(ctx, branchSeq(Branch{"main", "a"}), src, &Rules{DefaultRetentionDays: 1}, testNow); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	// A cancellation in the middle of a long List: the context is checked
	// once per branch, then every ctxCheckEvery commits.
	rp := newSynthRepo(5*ctxCheckEvery, 10, testNow)
	nb := 0
	for range rp.branchSeq() {
		nb++
	}
	ctx2 := &cancelAfter{Context: t.Context()}
	ctx2.n.Store(int64(nb + 2))
	listed := 0
	counting := &countingSource{CommitSource: rp, listed: &listed}
	if _, err := ActiveCommits(ctx2, rp.branchSeq(), counting, &Rules{DefaultRetentionDays: 1}, testNow); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled during List: %v", err)
	}
	if listed != 2*ctxCheckEvery {
		t.Errorf("List went on for %d commits, want it to stop at %d", listed, 2*ctxCheckEvery)
	}
}

// TestActiveCommitsSynthRepo runs the benchmark's repository, small, against
// the model, and checks that its branches keep a share of commits.
func TestActiveCommitsSynthRepo(t *testing.T) {
	rp := newSynthRepo(3000, 50, testNow)
	var all []Commit
	for c, err := range rp.List(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c)
	}
	var branches []Branch
	for b, err := range rp.branchSeq() {
		if err != nil {
			t.Fatal(err)
		}
		branches = append(branches, b)
	}
	model := repo{commits: all, listed: all, branches: branches, rules: rp.rules()}
	got, err := ActiveCommits(t.Context(), rp.branchSeq(), rp, model.rules, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := modelActiveCommits(model, testNow); !slices.Equal(got, want) {
		t.Fatalf("got %d active commits, model %d", len(got), len(want))
	}
	if len(got) < len(all)/20 || len(got) > len(all)/2 {
		t.Errorf("%d of %d commits active: the benchmark's repository is not realistic", len(got), len(all))
	}
}

// countingSource counts the commits its List yields.
type countingSource struct {
	CommitSource
	listed *int
}

func (s *countingSource) List(ctx context.Context) iter.Seq2[Commit, error] {
	return func(yield func(Commit, error) bool) {
		for c, err := range s.CommitSource.List(ctx) {
			*s.listed++
			if !yield(c, err) {
				return
			}
		}
	}
}
