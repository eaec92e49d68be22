package retention

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// This file models lakeFS's own computation of active commits, as its
// source has it (pkg/graveler/retention: GetGarbageCollectionCommits, the
// GCStartingPointIterator, and the ref manager's GCBranchIterator and
// GCCommitIterator), to compare ActiveCommits with it. Written from reading
// that code; the comments say where lakeFS departs from the definition in
// the package documentation.

// lakeFSRun is what the model of lakeFS found: its active commits, and the
// commits a step of a walk would have kept but for one of lakeFS's quirks.
type lakeFSRun struct {
	active map[string]bool
	// stopEqual and stopLonger hold commits at which a walk stopped, before
	// deciding them, that the step would have kept: because a walk with an
	// equal threshold went through them first (equal), or one with an older
	// threshold (longer retention).
	stopEqual, stopLonger map[string]bool
	// truncated holds commits a step did not keep only because lakeFS
	// compares the child's creation time truncated to microseconds.
	truncated map[string]bool
}

// lakeFSStart is a GCStartingPoint: a branch HEAD (branch set) or a dangling
// commit (branch "").
type lakeFSStart struct{ branch, commit string }

// lakeFSParent is the parent getAllFirstParents (pkg/graveler/ref) marks as
// having a child, which decides what is dangling: Parents[1] for a commit of
// version 0 with several parents, else Parents[0]. For a version-0 merge of
// three or more parents it is not the parent the walk follows (the last).
func lakeFSParent(c Commit) string {
	switch {
	case len(c.Parents) == 0:
		return ""
	case c.Version < 1 && len(c.Parents) > 1:
		return c.Parents[1]
	}
	return c.Parents[0]
}

// walkParent is the main parent a walk follows (nodeFromCommit): the last
// parent for version 0, else the first.
func walkParent(c Commit) string {
	switch {
	case len(c.Parents) == 0:
		return ""
	case c.Version < 1:
		return c.Parents[len(c.Parents)-1]
	}
	return c.Parents[0]
}

// lakeFSStarts returns lakeFS's starting points, in its order: branches by
// HEAD commit ID (sort.Slice over the branches in name order, which is how
// KV lists them), merged with the dangling commits in commit ID order; a
// dangling commit that is also a HEAD appears once, as the HEAD.
func lakeFSStarts(listed []Commit, branches []Branch) []lakeFSStart {
	byName := slices.Clone(branches)
	slices.SortFunc(byName, func(a, b Branch) int { return strings.Compare(a.ID, b.ID) })
	sort.Slice(byName, func(i, j int) bool { return byName[i].CommitID <= byName[j].CommitID })

	firstParents := map[string]bool{}
	for _, c := range listed {
		if p := lakeFSParent(c); p != "" {
			firstParents[p] = true
		}
	}
	var dangling []string
	for _, c := range listed {
		if !firstParents[c.ID] {
			dangling = append(dangling, c.ID)
		}
	}
	slices.Sort(dangling)

	// The merge of GCStartingPointIterator.Next.
	var starts []lakeFSStart
	bi, ci := 0, 0
	for bi < len(byName) || ci < len(dangling) {
		if bi < len(byName) && ci < len(dangling) && byName[bi].CommitID == dangling[ci] {
			ci++ // the commit is this branch's HEAD: skip it
		}
		switch {
		case ci == len(dangling) || bi < len(byName) && dangling[ci] > byName[bi].CommitID:
			starts = append(starts, lakeFSStart{branch: byName[bi].ID, commit: byName[bi].CommitID})
			bi++
		default:
			starts = append(starts, lakeFSStart{commit: dangling[ci]})
			ci++
		}
	}
	return starts
}

// lakeFSActiveCommits runs lakeFS's algorithm on rp at now. It reads the
// commits List yields (its commits map), and gets the others by ID.
func lakeFSActiveCommits(rp repo, now time.Time) lakeFSRun {
	all := map[string]Commit{}
	for _, c := range rp.commits {
		all[c.ID] = c
	}
	var listed []Commit // KV holds each commit once
	seen := map[string]bool{}
	for _, c := range rp.listed {
		if !seen[c.ID] {
			seen[c.ID] = true
			listed = append(listed, c)
		}
	}
	// CommitNode keeps the creation time in microseconds.
	type node struct {
		usecs  int64
		real   time.Time // for the test's accounting only
		parent string
	}
	nodeOf := func(id string) node {
		c := all[id]
		return node{usecs: c.CreationDate.UnixMicro(), real: c.CreationDate, parent: walkParent(c)}
	}

	run := lakeFSRun{active: map[string]bool{}, stopEqual: map[string]bool{}, stopLonger: map[string]bool{}, truncated: map[string]bool{}}
	processed := map[string]time.Time{}
	for _, sp := range lakeFSStarts(listed, rp.branches) {
		days := rp.rules.DefaultRetentionDays
		n := nodeOf(sp.commit)
		if sp.branch == "" {
			// A dangling commit gets a hypothetical child of its own time.
			n = node{usecs: n.usecs, real: n.real, parent: sp.commit}
		} else {
			if d, ok := rp.rules.BranchRetentionDays[sp.branch]; ok {
				days = d
			}
			run.active[sp.commit] = true
		}
		threshold := now.AddDate(0, 0, -int(days))
		if sp.branch != "" {
			processed[sp.commit] = threshold // overwrites an older threshold too
		}
		for n.parent != "" {
			next := n.parent
			if prev, ok := processed[next]; ok && !prev.After(threshold) {
				// lakeFS stops here, before deciding next.
				switch {
				case !n.real.After(threshold):
				case !time.UnixMicro(n.usecs).After(threshold):
					run.truncated[next] = true
				case prev.Equal(threshold):
					run.stopEqual[next] = true
				default:
					run.stopLonger[next] = true
				}
				break
			}
			if time.UnixMicro(n.usecs).After(threshold) {
				run.active[next] = true
			} else if n.real.After(threshold) {
				run.truncated[next] = true
			}
			n = nodeOf(next)
			processed[next] = threshold
		}
	}
	return run
}

// TestLakeFSModelKnownCases checks the model on hand-made graphs, so that the
// property test below compares ActiveCommits with lakeFS, not with a wrong
// model.
func TestLakeFSModelKnownCases(t *testing.T) {
	for _, tc := range []struct {
		name     string
		commits  []Commit
		branches []Branch
		rules    *Rules
		want     []string // lakeFS's active commits, sorted
	}{{
		// Equal retention: main's HEAD "m" is fresh, feature's HEAD "a" is
		// old; both are children of F. "a" sorts first, so feature's walk
		// passes F without keeping it, and main's walk stops at F before
		// deciding it: F expires although m, a day old, is its child.
		name: "equal retention, ID order",
		commits: []Commit{
			commit("R", daysAgo(60)),
			commit("F", daysAgo(50), "R"),
			commit("a", daysAgo(40), "F"),
			commit("m", daysAgo(1), "F"),
		},
		branches: []Branch{{"main", "m"}, {"feature", "a"}},
		rules:    &Rules{DefaultRetentionDays: 30},
		want:     []string{"a", "m"},
	}, {
		name: "equal retention, the fresh HEAD sorts first",
		commits: []Commit{
			commit("R", daysAgo(60)),
			commit("F", daysAgo(50), "R"),
			commit("z", daysAgo(40), "F"),
			commit("m", daysAgo(1), "F"),
		},
		branches: []Branch{{"main", "m"}, {"feature", "z"}},
		rules:    &Rules{DefaultRetentionDays: 30},
		want:     []string{"F", "m", "z"},
	}, {
		// A version-0 merge M of P0, P1, P2 follows P2, but lakeFS's
		// dangling test marks P1 as its parent: P2 is a dangling start,
		// and P1, walked by nobody, expires.
		name: "version-0 merge of three parents",
		commits: []Commit{
			commit("P0", daysAgo(3)),
			commit("P1", daysAgo(3)),
			commit("P2", daysAgo(3)),
			{ID: "M", Parents: []string{"P0", "P1", "P2"}, CreationDate: daysAgo(2), Version: 0},
		},
		branches: []Branch{{"main", "M"}},
		rules:    &Rules{DefaultRetentionDays: 5},
		want:     []string{"M", "P0", "P2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rp := repo{commits: tc.commits, listed: tc.commits, branches: tc.branches, rules: tc.rules}
			run := lakeFSActiveCommits(rp, testNow)
			if got := slices.Sorted(mapKeys(run.active)); !slices.Equal(got, tc.want) {
				t.Errorf("lakeFS model keeps %v, want %v", got, tc.want)
			}
		})
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// definitionFrom returns the commits the definition keeps when its walks
// start at starts (a HEAD or a dangling commit each): the per-step rule over
// the whole main ancestry, to the nanosecond, without lakeFS's early stop.
func definitionFrom(rp repo, now time.Time, starts []lakeFSStart) map[string]bool {
	all := map[string]Commit{}
	for _, c := range rp.commits {
		all[c.ID] = c
	}
	active := map[string]bool{}
	for _, sp := range starts {
		days := rp.rules.DefaultRetentionDays
		if sp.branch != "" {
			days = rp.rules.RetentionDays(sp.branch)
		}
		t := now.AddDate(0, 0, -int(days))
		c := all[sp.commit]
		if sp.branch != "" || c.CreationDate.After(t) {
			active[c.ID] = true
		}
		for p := walkParent(c); p != ""; p = walkParent(c) {
			if c.CreationDate.After(t) {
				active[p] = true
			}
			c = all[p]
		}
	}
	return active
}

// nearThresholds moves some commits of rp to less than a microsecond after
// a threshold of its rules, where lakeFS's microsecond times decide
// otherwise than nanoseconds.
func nearThresholds(r *rand.Rand, rp *repo) {
	days := []int32{rp.rules.DefaultRetentionDays}
	for _, d := range rp.rules.BranchRetentionDays {
		days = append(days, d)
	}
	moved := map[string]time.Time{}
	for _, c := range rp.commits {
		if r.IntN(4) == 0 {
			d := days[r.IntN(len(days))]
			moved[c.ID] = testNow.AddDate(0, 0, -int(d)).Add(time.Duration(1 + r.IntN(999)))
		}
	}
	for _, s := range []*[]Commit{&rp.commits, &rp.listed, &rp.getOnly} {
		for i, c := range *s {
			if t, ok := moved[c.ID]; ok {
				(*s)[i].CreationDate = t
			}
		}
	}
}

// TestActiveCommitsKeepsWhatLakeFSKeeps runs ActiveCommits and the model of
// lakeFS on random repositories: every commit lakeFS keeps, ActiveCommits
// must keep. It counts the commits ActiveCommits keeps and lakeFS does not,
// by cause, and fails on one it cannot explain.
func TestActiveCommitsKeepsWhatLakeFSKeeps(t *testing.T) {
	cases := 17000
	switch {
	case testing.Short():
		cases = 1000
	case raceEnabled:
		cases = 2000
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 19))
	const (
		causeEqual    = "lakeFS stopped a walk at it, after a walk of EQUAL retention that started at a lower commit ID"
		causeLonger   = "lakeFS stopped a walk at it, after a walk of longer retention"
		causeStarts   = "lakeFS's dangling test reads parent 2 of a version-0 merge of 3+ parents: no lakeFS walk starts where ours does"
		causeTruncate = "lakeFS compares creation times in microseconds"
	)
	causes := map[string]int{}
	var graphs, graphsMore, keptByLakeFS, keptMore int
	for i := range cases {
		rp := randomRepo(r)
		// lakeFS reads its commits twice (its commits map, and the scan for
		// dangling commits), ActiveCommits once plus Gets: the comparison
		// holds when all of them see every commit.
		rp.listed, rp.getOnly = append(rp.listed, rp.getOnly...), nil
		if r.IntN(10) == 0 {
			nearThresholds(r, &rp)
		}
		got, err := ActiveCommits(t.Context(), branchSeq(rp.branches...), newFakeSource(rp.listed, rp.getOnly...), rp.rules, testNow)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		ours := map[string]bool{}
		for _, a := range got {
			ours[a.CommitID] = true
		}
		lk := lakeFSActiveCommits(rp, testNow)
		for id := range lk.active {
			if !ours[id] {
				t.Fatalf("case %d (seed %d): lakeFS keeps %q, ActiveCommits does not\ncommits %v\nbranches %v\nrules %+v",
					i, seed, id, rp.commits, rp.branches, *rp.rules)
			}
		}
		graphs++
		keptByLakeFS += len(lk.active)
		var listed []Commit
		for _, c := range rp.listed {
			if !slices.ContainsFunc(listed, func(l Commit) bool { return l.ID == c.ID }) {
				listed = append(listed, c)
			}
		}
		lakeFSDefinition := definitionFrom(rp, testNow, lakeFSStarts(listed, rp.branches))
		more := 0
		for id := range ours {
			if lk.active[id] {
				continue
			}
			more++
			switch {
			case !lakeFSDefinition[id]:
				causes[causeStarts]++
				if !slices.ContainsFunc(rp.commits, func(c Commit) bool { return lakeFSParent(c) != walkParent(c) }) {
					t.Errorf("case %d (seed %d): %q kept for lakeFS's dangling test, in a repository without a version-0 merge of 3+ parents", i, seed, id)
				}
			case lk.stopEqual[id]:
				causes[causeEqual]++
			case lk.stopLonger[id]:
				causes[causeLonger]++
			case lk.truncated[id]:
				causes[causeTruncate]++
			default:
				t.Errorf("case %d (seed %d): ActiveCommits keeps %q, lakeFS does not, for no known reason\ncommits %v\nbranches %v\nrules %+v",
					i, seed, id, rp.commits, rp.branches, *rp.rules)
			}
		}
		if more > 0 {
			graphsMore++
			keptMore += more
		}
	}
	t.Logf("%d random repositories: in %d (%.1f%%) ActiveCommits keeps %d commits lakeFS expires (lakeFS keeps %d in all); by cause:",
		graphs, graphsMore, 100*float64(graphsMore)/float64(graphs), keptMore, keptByLakeFS)
	for _, c := range []string{causeEqual, causeLonger, causeStarts, causeTruncate} {
		t.Logf("  %6d  %s", causes[c], c)
	}
	for _, c := range []string{causeEqual, causeLonger, causeStarts, causeTruncate} {
		if causes[c] == 0 && !testing.Short() {
			t.Errorf("no case of: %s", c)
		}
	}
}

// String makes failure messages of this file readable.
func (c Commit) String() string {
	return fmt.Sprintf("%s(%v %s v%d)", c.ID, c.Parents, c.CreationDate.Format(time.RFC3339Nano), c.Version)
}
