package retention

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modelRule is the first rule of ext that matches branch, found the slow
// way: each pattern compiled again.
func modelRule(ext *Extended, branch string) *BranchRule {
	if ext == nil {
		return nil
	}
	for i, r := range ext.Branches {
		if r.Branch == branch {
			return &ext.Branches[i]
		}
		if r.Pattern != "" && regexp.MustCompile("^(?:"+r.Pattern+")$").MatchString(branch) {
			return &ext.Branches[i]
		}
	}
	return nil
}

// extSource is a fakeSource that knows its tags and default branch.
type extSource struct {
	*fakeSource
	tags          []Tag
	defaultBranch string
}

func (s *extSource) Tags(ctx context.Context) iter.Seq2[Tag, error] {
	return func(yield func(Tag, error) bool) {
		for _, t := range s.tags {
			if !yield(t, nil) {
				return
			}
		}
	}
}

func (s *extSource) DefaultBranch(ctx context.Context) (string, error) {
	return s.defaultBranch, nil
}

// defaultOnly is a fakeSource that names its default branch but has no
// tags.
type defaultOnly struct {
	*fakeSource
	defaultBranch string
}

func (s *defaultOnly) DefaultBranch(ctx context.Context) (string, error) {
	return s.defaultBranch, nil
}

// source returns the commit source of rp, with the optional interfaces rp
// says it has.
func (rp *repo) source() (CommitSource, *fakeSource) {
	fs := newFakeSource(rp.listed, rp.getOnly...)
	switch {
	case rp.withTags:
		return &extSource{fakeSource: fs, tags: rp.tags, defaultBranch: rp.defaultBranch}, fs
	case rp.defaultBranch != "":
		return &defaultOnly{fakeSource: fs, defaultBranch: rp.defaultBranch}, fs
	}
	return fs, fs
}

// addExtended gives rp random extended rules: tags on any commits (old ones
// too), rules by name and by pattern with days, counts or both, a stale
// rule, a default branch; sometimes a source without tags.
func addExtended(r *rand.Rand, rp *repo) {
	if r.IntN(5) == 0 {
		return // lakeFS's rules alone
	}
	ext := &Extended{KeepTags: r.IntN(3) != 0}
	for range r.IntN(5) {
		var br BranchRule
		switch r.IntN(4) {
		case 0:
			br.Branch = fmt.Sprintf("branch-%d", r.IntN(10))
		case 1:
			br.Pattern = fmt.Sprintf("branch-[0-%d]", r.IntN(10))
		case 2:
			br.Pattern = fmt.Sprintf("branch-%d.*", 1+r.IntN(9))
		default:
			br.Pattern = "branch-.*"
		}
		if r.IntN(2) == 0 {
			d := int32(r.IntN(45))
			br.RetentionDays = &d
		}
		if br.RetentionDays == nil || r.IntN(2) == 0 {
			br.KeepLast = int32(1 + r.IntN(6))
			if r.IntN(20) == 0 {
				br.KeepLast = 1 << 30 // beyond any history
			}
		}
		ext.Branches = append(ext.Branches, br)
	}
	if r.IntN(2) == 0 {
		ext.StaleBranchDays = int32(1 + r.IntN(40))
	}
	rp.ext = ext
	rp.withTags = r.IntN(4) != 0
	if len(rp.branches) > 0 {
		rp.defaultBranch = rp.branches[r.IntN(len(rp.branches))].ID
	} else {
		rp.defaultBranch = "main"
	}
	for range r.IntN(6) {
		c := rp.commits[r.IntN(len(rp.commits))]
		rp.tags = append(rp.tags, Tag{ID: fmt.Sprintf("v%d", len(rp.tags)), CommitID: c.ID})
	}
}

// TestActiveCommitsExtendedMatchesModel compares ActiveCommitsExtended with
// the model on random histories with random extended rules, and counts what
// each rule changed against lakeFS's rules alone, so that a rule the cases
// never exercise fails the test.
func TestActiveCommitsExtendedMatchesModel(t *testing.T) {
	cases := 3000
	switch {
	case testing.Short():
		cases = 400
	case raceEnabled:
		cases = 1000
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	// How often each rule kept more, or less, than lakeFS's rules alone.
	var tagsKept, lastKept, daysChanged, staleDropped int
	for i := range cases {
		rp := randomRepo(r)
		addExtended(r, &rp)
		src, _ := rp.source()
		got, err := ActiveCommitsExtended(t.Context(), branchSeq(rp.branches...), src, rp.rules, rp.ext, testNow)
		if err != nil {
			t.Fatalf("case %d (seed %d): %v", i, seed, err)
		}
		want := modelActiveCommits(rp, testNow)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (seed %d): %d commits, branches %v, rules %+v, extended %s, tags %v (source has tags: %v), default %q:\ngot  %v\nwant %v",
				i, seed, len(rp.commits), rp.branches, *rp.rules, rp.ext, rp.tags, rp.withTags, rp.defaultBranch, commitIDs(got), commitIDs(want))
		}
		if rp.ext == nil {
			continue
		}
		// What each rule alone changes, by the model.
		base := modelActiveCommits(repo{commits: rp.commits, listed: rp.listed, getOnly: rp.getOnly, branches: rp.branches, rules: rp.rules}, testNow)
		one := func(e Extended) int {
			alone := rp
			alone.ext = &e
			return len(modelActiveCommits(alone, testNow)) - len(base)
		}
		var lastOnly, daysOnly []BranchRule
		for _, br := range rp.ext.Branches {
			l, d := br, br
			l.RetentionDays, d.KeepLast = nil, 0
			if l.KeepLast > 0 {
				lastOnly = append(lastOnly, l)
			}
			if d.RetentionDays != nil {
				daysOnly = append(daysOnly, d)
			}
		}
		if rp.ext.KeepTags && one(Extended{KeepTags: true}) > 0 {
			tagsKept++
		}
		if one(Extended{Branches: lastOnly}) > 0 {
			lastKept++
		}
		if one(Extended{Branches: daysOnly}) != 0 {
			daysChanged++
		}
		if d := rp.ext.StaleBranchDays; d > 0 && one(Extended{StaleBranchDays: d}) < 0 {
			staleDropped++
		}
	}
	t.Logf("cases where a rule alone changed the result: tags %d, keep_last %d, retention_days %d, stale %d", tagsKept, lastKept, daysChanged, staleDropped)
	if tagsKept == 0 || lastKept == 0 || daysChanged == 0 || staleDropped == 0 {
		t.Errorf("a rule never changed the result: tags %d, keep_last %d, retention_days %d, stale %d", tagsKept, lastKept, daysChanged, staleDropped)
	}
}

// TestExtendedOnlyKeepsMore checks the direction of each rule against the
// model: tags and keep_last never drop a commit lakeFS's rules keep, the
// stale rule never keeps one they do not, and never drops the default
// branch's HEAD.
func TestExtendedOnlyKeepsMore(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		rp := randomRepo(r)
		addExtended(r, &rp)
		if rp.ext == nil {
			continue
		}
		base := modelActiveCommits(repo{commits: rp.commits, listed: rp.listed, getOnly: rp.getOnly, branches: rp.branches, rules: rp.rules}, testNow)
		for _, e := range []Extended{{KeepTags: true}, {Branches: keepLastOnly(rp.ext.Branches)}} {
			alone := rp
			alone.ext = &e
			src, _ := alone.source()
			got, err := ActiveCommitsExtended(t.Context(), branchSeq(rp.branches...), src, rp.rules, &e, testNow)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range base {
				if _, found := slices.BinarySearchFunc(got, c.CommitID, func(a ActiveCommit, id string) int { return strings.Compare(a.CommitID, id) }); !found {
					t.Fatalf("case %d: %s dropped %s, which lakeFS's rules keep", i, &e, c.CommitID)
				}
			}
		}
		if rp.ext.StaleBranchDays == 0 {
			continue
		}
		e := Extended{StaleBranchDays: rp.ext.StaleBranchDays}
		src, _ := rp.source()
		got, err := ActiveCommitsExtended(t.Context(), branchSeq(rp.branches...), src, rp.rules, &e, testNow)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			if _, found := slices.BinarySearchFunc(base, c.CommitID, func(a ActiveCommit, id string) int { return strings.Compare(a.CommitID, id) }); !found {
				t.Fatalf("case %d: the stale rule kept %s, which lakeFS's rules do not", i, c.CommitID)
			}
		}
		for _, b := range rp.branches {
			if b.ID == rp.defaultBranch && !slices.ContainsFunc(got, func(a ActiveCommit) bool { return a.CommitID == b.CommitID }) {
				t.Fatalf("case %d: the stale rule dropped the default branch's HEAD %s", i, b.CommitID)
			}
		}
	}
}

func keepLastOnly(rules []BranchRule) []BranchRule {
	var out []BranchRule
	for _, r := range rules {
		if r.KeepLast > 0 {
			r.RetentionDays = nil
			out = append(out, r)
		}
	}
	return out
}

// TestActiveCommitsExtendedSituations spells out each rule on a small
// history: main a←b←c←d, dates 90, 60, 45, 40 days ago; feature at b (90
// days old); rules: 30 days.
func TestActiveCommitsExtendedSituations(t *testing.T) {
	commits := []Commit{
		commit("a", daysAgo(90)), commit("b", daysAgo(60), "a"),
		commit("c", daysAgo(45), "b"), commit("d", daysAgo(40), "c"),
		commit("e", daysAgo(91), "a"),
	}
	branches := []Branch{{ID: "main", CommitID: "d"}, {ID: "feature-1", CommitID: "e"}}
	rules := &Rules{DefaultRetentionDays: 30}
	days := func(d int32) *int32 { return &d }
	for _, tc := range []struct {
		name string
		ext  *Extended
		tags []Tag
		want []string
	}{
		{"lakeFS's rules", nil, nil, []string{"d", "e"}},
		{"tags off", &Extended{}, []Tag{{"v1", "b"}}, []string{"d", "e"}},
		{"tag on an old commit", &Extended{KeepTags: true}, []Tag{{"v1", "b"}}, []string{"b", "d", "e"}},
		{"tag and 50 days", &Extended{KeepTags: true, Branches: []BranchRule{{Pattern: "zzz", RetentionDays: days(1)}}}, []Tag{{"v1", "c"}}, []string{"c", "d", "e"}},
		{"keep last 3 of main", &Extended{Branches: []BranchRule{{Branch: "main", KeepLast: 3}}}, nil, []string{"b", "c", "d", "e"}},
		{"pattern days", &Extended{Branches: []BranchRule{{Pattern: "feat.*", RetentionDays: days(100)}}}, nil, []string{"a", "d", "e"}},
		{"pattern must match the whole name", &Extended{Branches: []BranchRule{{Pattern: "feat", RetentionDays: days(100)}}}, nil, []string{"d", "e"}},
		{"first rule wins", &Extended{Branches: []BranchRule{{Branch: "feature-1", KeepLast: 1}, {Pattern: "feat.*", RetentionDays: days(100)}}}, nil, []string{"d", "e"}},
		{"stale feature", &Extended{StaleBranchDays: 60}, nil, []string{"d"}},
		{"stale never the default branch", &Extended{StaleBranchDays: 10}, nil, []string{"d"}},
		{"stale but kept last", &Extended{StaleBranchDays: 60, Branches: []BranchRule{{Pattern: ".*", KeepLast: 1}}}, nil, []string{"d", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &extSource{fakeSource: newFakeSource(commits), tags: tc.tags, defaultBranch: "main"}
			got, err := ActiveCommitsExtended(t.Context(), branchSeq(branches...), src, rules, tc.ext, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if ids := commitIDs(got); !slices.Equal(ids, tc.want) {
				t.Errorf("got %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestActiveCommitsExtendedErrors(t *testing.T) {
	commits := []Commit{commit("a", daysAgo(90))}
	branches := branchSeq(Branch{ID: "main", CommitID: "a"})
	rules := &Rules{DefaultRetentionDays: 30}
	stale := &Extended{StaleBranchDays: 5}
	if _, err := ActiveCommitsExtended(t.Context(), branches, newFakeSource(commits), rules, stale, testNow); err == nil || !strings.Contains(err.Error(), "default branch") || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("stale rule without a default branch: %v", err)
	}
	if _, err := ActiveCommitsExtended(t.Context(), branches, &defaultOnly{fakeSource: newFakeSource(commits)}, rules, stale, testNow); err == nil || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("stale rule with an empty default branch: %v, want ErrInvalidInput", err)
	}
	// A default branch that is not among the branches (renamed, or
	// changed between the reads): the default branch could be stale.
	if _, err := ActiveCommitsExtended(t.Context(), branches, &defaultOnly{fakeSource: newFakeSource(commits), defaultBranch: "master"}, rules, stale, testNow); err == nil || !strings.Contains(err.Error(), `"master" is not among the branches`) {
		t.Errorf("stale rule with a default branch not listed: %v", err)
	}
	// Without the stale rule, the default branch is not asked for.
	if _, err := ActiveCommitsExtended(t.Context(), branches, &defaultOnly{fakeSource: newFakeSource(commits), defaultBranch: "master"}, rules, &Extended{}, testNow); err != nil {
		t.Errorf("no stale rule, default branch not listed: %v", err)
	}
	bad := &Extended{Branches: []BranchRule{{Pattern: "(", KeepLast: 1}}}
	if _, err := ActiveCommitsExtended(t.Context(), branches, newFakeSource(commits), rules, bad, testNow); !errors.Is(err, ErrInvalidRules) {
		t.Errorf("bad pattern: %v", err)
	}
	errTags := errors.New("tags down")
	src := &failingTags{fakeSource: newFakeSource(commits), err: errTags}
	if _, err := ActiveCommitsExtended(t.Context(), branches, src, rules, &Extended{KeepTags: true}, testNow); !errors.Is(err, errTags) {
		t.Errorf("failing tags: %v", err)
	}
	// A tag on a commit the source does not have is an error, as a missing
	// HEAD is: its ancestry cannot be known.
	missing := &extSource{fakeSource: newFakeSource(commits), tags: []Tag{{"v1", "zz"}}}
	if _, err := ActiveCommitsExtended(t.Context(), branches, missing, rules, &Extended{KeepTags: true}, testNow); !errors.Is(err, errNoCommit) {
		t.Errorf("tag on a missing commit: %v", err)
	}
}

type failingTags struct {
	*fakeSource
	err error
}

func (s *failingTags) Tags(ctx context.Context) iter.Seq2[Tag, error] {
	return func(yield func(Tag, error) bool) { yield(Tag{}, s.err) }
}

func TestExtendedJSON(t *testing.T) {
	var e Extended
	if err := json.Unmarshal([]byte(`{"version":1,"branches":[{"branch":"main","keep_last":10},{"pattern":"tmp-.*","retention_days":1}],"stale_branch_days":90}`), &e); err != nil {
		t.Fatal(err)
	}
	if !e.KeepTags {
		t.Error("keep_tags absent: want true")
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"version":1,"keep_tags":true,"stale_branch_days":90,"branches":[{"branch":"main","keep_last":10},{"pattern":"tmp-.*","retention_days":1}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if err := json.Unmarshal([]byte(`{"version":1,"keep_tags":false}`), &e); err != nil || e.KeepTags || !e.IsZero() {
		t.Errorf("keep_tags false: %+v, %v", e, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, "version is required"},
		{`{"version":2}`, "version 2"},
		{`{"version":1,"keep_tag":true}`, `unknown field "keep_tag"`},
		{`{"version":1,"stale_branch_days":-1}`, "negative stale_branch_days"},
		{`{"version":1,"branches":[{"branch":"x","retention_days":-3}]}`, "negative retention_days"},
		{`{"version":1,"branches":[{"branch":"x","keep_last":-3}]}`, "negative keep_last"},
		{`{"version":1,"branches":[{"pattern":"a(b","keep_last":1}]}`, "does not compile"},
		{`{"version":1,"branches":[{"branch":"x","pattern":"y","keep_last":1}]}`, "exactly one of branch and pattern"},
		{`{"version":1,"branches":[{"keep_last":1}]}`, "exactly one of branch and pattern"},
		{`{"version":1,"branches":[{"branch":"x"}]}`, "says nothing"},
		{`{"version":1} {}`, "more after"},
		{`{"version":1,"stale_branch_days":1e99}`, "cannot unmarshal"},
		{"{\"version\":1,\"branches\":[{\"branch\":\"\xff\",\"keep_last\":1}]}", "not valid UTF-8"},
		{`{"version":1,"branches":[{"pattern":"` + strings.Repeat("a", MaxPatternLen+1) + `","keep_last":1}]}`, "more than 1024"},
		{`null`, "version is required"},
	} {
		before := e
		err := e.UnmarshalJSON([]byte(tc.in))
		if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: got %v, want an ErrInvalidRules saying %q", tc.in, err, tc.want)
		}
		if !strings.HasPrefix(fmt.Sprint(err), "retention: ") {
			t.Errorf("%.60s: %v does not start with the package name", tc.in, err)
		}
		if !slices.EqualFunc(before.Branches, e.Branches, func(a, b BranchRule) bool { return a.Branch == b.Branch }) || before.KeepTags != e.KeepTags {
			t.Errorf("%.60s: a failed decode changed the rules", tc.in)
		}
	}
	if err := e.UnmarshalJSON(make([]byte, MaxExtendedSize+1)); !errors.Is(err, ErrInvalidRules) {
		t.Errorf("oversized: %v", err)
	}
}

// TestExtendedPatternCost checks that patterns whose counted repetitions
// expand to large programs are refused before they are compiled: a 1 KiB
// pattern of ".{1000}" would take some 150,000 instructions and 45 MB to
// compile, and a file could hold a thousand of them.
func TestExtendedPatternCost(t *testing.T) {
	rule := func(p string) string { return `{"pattern":` + strconv.Quote(p) + `,"keep_last":1}` }
	file := func(rules ...string) []byte {
		return []byte(`{"version":1,"branches":[` + strings.Join(rules, ",") + `]}`)
	}
	var hostile []string
	for _, p := range []string{".{1000}", "[a-z]{1000}", `\pL{999}`, "(a|b|c){500}", "(x{30}){30}"} {
		hostile = append(hostile, strings.Repeat(p, MaxPatternLen/len(p)))
	}
	for _, p := range hostile {
		var e Extended
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := e.UnmarshalJSON(file(rule(p), rule(p), rule(p), rule(p)))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), "instructions") {
			t.Errorf("%.20s…: %v, want a refusal for its size", p, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%.20s…: refusing it allocated %d MiB", p, alloc>>20)
		}
	}
	// Ordinary patterns, long ones too, are accepted; many of them reach
	// the total.
	long := strings.Repeat("feature/[a-z0-9_-]+/", MaxPatternLen/20)
	for _, p := range []string{"release/v[0-9]+(\\.[0-9]+)*", "(?i)main|dev-[0-9]{1,6}", strings.Repeat("a", MaxPatternLen), long} {
		var e Extended
		if err := e.UnmarshalJSON(file(rule(p))); err != nil {
			t.Errorf("%.20s…: %v", p, err)
		}
	}
	big := &Extended{}
	for i := range MaxBranchRules {
		big.Branches = append(big.Branches, BranchRule{Pattern: fmt.Sprintf("%s%d", strings.Repeat("[a-z]{3}", 100), i), KeepLast: 1})
	}
	if err := big.Validate(); !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), "in all") {
		t.Errorf("%d patterns of 300 instructions each: %v", len(big.Branches), err)
	}
}

// TestExtendedGolden decodes every file of testdata/extended (the fuzz
// target's seeds): those named bad-* fail, the others round-trip.
func TestExtendedGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/extended/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("seeds: %v, %v", files, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var e Extended
		err = json.Unmarshal(b, &e)
		if bad := strings.HasPrefix(filepath.Base(file), "bad-"); bad != (err != nil) {
			t.Errorf("%s: error %v", file, err)
		}
	}
}

func FuzzExtendedUnmarshalJSON(f *testing.F) {
	files, err := filepath.Glob("testdata/extended/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"branches":[{"pattern":"((((a{1000}){1000}){1000}){1000})","keep_last":1}]}`))
	f.Add([]byte(`{"version":1,"branches":[{"pattern":"(?i)Main|dev-[0-9]+","retention_days":0}]}`))
	f.Add([]byte(`{"version":1,"branches":[{"pattern":"` + strings.Repeat(".{1000}", 140) + `","keep_last":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Extended
		if err := e.UnmarshalJSON(b); err != nil {
			if !errors.Is(err, ErrInvalidRules) {
				t.Fatalf("error %v does not wrap ErrInvalidRules", err)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted %q but invalid: %v", b, err)
		}
		enc, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode: %v", b, err)
		}
		var again Extended
		if err := again.UnmarshalJSON(enc); err != nil {
			t.Fatalf("cannot decode own encoding %s: %v", enc, err)
		}
		if enc2, _ := again.MarshalJSON(); string(enc2) != string(enc) {
			t.Fatalf("round trip: %s, then %s", enc, enc2)
		}
		_ = e.String()
	})
}
