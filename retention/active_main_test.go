package retention

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// mainActiveCommits is ActiveCommits as it was before the extended rules
// (commit 1259e4f), frozen: the reference of
// TestActiveCommitsExtendedZeroIsUnchanged. It shares the graph's unchanged
// parts (index, list, load, walk, result) and keeps its own copies of the
// parts the extended rules changed (ActiveCommits, readBranches,
// fetchMissing, startingPoints). Do not update it with ActiveCommits: it is
// the behaviour lakeFS's rules alone must keep.
func mainActiveCommits(ctx context.Context, branches iter.Seq2[Branch, error], commits CommitSource, rules *Rules, now time.Time) ([]ActiveCommit, error) {
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	if rules.isZero() {
		return nil, fmt.Errorf("%w: ActiveCommits given 0 days and no branch rules", ErrNotFound)
	}
	if branches == nil || commits == nil {
		return nil, errors.New("retention: ActiveCommits needs branches and a commit source")
	}
	g := graph{ids: newInterner()}
	var heads []branchHead
	for b, err := range branches {
		if err != nil {
			return nil, fmt.Errorf("retention: list branches: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i, err := g.index(b.CommitID)
		if err != nil {
			return nil, fmt.Errorf("retention: branch %q HEAD %q: %w", b.ID, b.CommitID, err)
		}
		g.flags[i] |= head
		heads = append(heads, branchHead{commit: i, days: rules.RetentionDays(b.ID)})
	}
	if err := g.list(ctx, commits); err != nil {
		return nil, err
	}
	// fetchMissing, before tags.
	var queue []int32
	for i, f := range g.flags {
		if f&loaded == 0 && f&(head|hasChild) != 0 {
			queue = append(queue, int32(i))
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if g.flags[i]&loaded != 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := g.ids.id(i)
		c, err := commits.Get(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("retention: get commit %s, not listed: %w", id, err)
		}
		if c.ID != id {
			return nil, fmt.Errorf("retention: get commit %s returned commit %q", id, c.ID)
		}
		if err := g.load(i, &c); err != nil {
			return nil, err
		}
		if p := g.nodes[i].parent; p >= 0 && g.flags[p]&loaded == 0 {
			queue = append(queue, p)
		}
	}
	g.ids.dropIndex()
	// startingPoints, before tags and stale branches.
	thresholds := map[int32]instant{}
	threshold := func(days int32) instant {
		t, ok := thresholds[days]
		if !ok {
			t = instantOf(now.AddDate(0, 0, -int(days)))
			thresholds[days] = t
		}
		return t
	}
	starts := make([]startPoint, 0, len(heads))
	for _, h := range heads {
		starts = append(starts, startPoint{commit: h.commit, head: true, threshold: threshold(h.days)})
	}
	dangling := threshold(rules.DefaultRetentionDays)
	for i, f := range g.flags {
		if f&(loaded|head) == loaded && f&(hasChild|hasLakeFSChild) != hasChild|hasLakeFSChild {
			starts = append(starts, startPoint{commit: int32(i), threshold: dangling})
		}
	}
	slices.SortStableFunc(starts, func(a, b startPoint) int { return a.threshold.compare(b.threshold) })
	for _, s := range starts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g.walk(s)
	}
	return g.result(), nil
}

// TestActiveCommitsExtendedZeroIsUnchanged is the differential test of the
// extended rules: on random histories, ActiveCommits, and
// ActiveCommitsExtended with extended rules that change nothing, return
// exactly what ActiveCommits returned before the extended rules existed
// (mainActiveCommits), errors included. "Change nothing": no rules; tags
// off with a source that has tags; tags on with a source without them;
// branch rules that match no branch; days for branches lakeFS's own rules
// name (lakeFS's rule wins); a stale rule no HEAD is old enough for.
func TestActiveCommitsExtendedZeroIsUnchanged(t *testing.T) {
	cases := 2000
	switch {
	case testing.Short():
		cases = 300
	case raceEnabled:
		cases = 600
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	zero := int32(0)
	var active, inactive, failed int
	for i := range cases {
		rp := randomRepo(r)
		if r.IntN(2) == 0 {
			nearThresholds(r, &rp)
		}
		want, wantErr := mainActiveCommits(t.Context(), branchSeq(rp.branches...), newFakeSource(rp.listed, rp.getOnly...), rp.rules, testNow)
		if wantErr != nil {
			failed++
		}
		active += len(want)
		inactive += len(rp.commits) - len(want)
		var own []BranchRule // days for the branches lakeFS's rules name
		for _, b := range rp.branches {
			if _, ok := rp.rules.BranchRetentionDays[b.ID]; ok {
				own = append(own, BranchRule{Branch: b.ID, RetentionDays: &zero})
			}
		}
		def := "main"
		if len(rp.branches) > 0 {
			def = rp.branches[r.IntN(len(rp.branches))].ID
		}
		tags := []Tag{{"v1", rp.commits[r.IntN(len(rp.commits))].ID}}
		for _, v := range []struct {
			name string
			ext  *Extended
			src  func(*fakeSource) CommitSource
		}{
			{"ActiveCommits", nil, nil},
			{"nil", nil, func(fs *fakeSource) CommitSource { return fs }},
			{"zero", &Extended{}, func(fs *fakeSource) CommitSource { return fs }},
			{"tags off, source with tags", &Extended{}, func(fs *fakeSource) CommitSource {
				return &extSource{fakeSource: fs, tags: tags, defaultBranch: def}
			}},
			{"tags on, source without", &Extended{KeepTags: true}, func(fs *fakeSource) CommitSource { return fs }},
			{"rules matching no branch", &Extended{Branches: []BranchRule{{Pattern: "zz.*", KeepLast: 3}, {Branch: "no-such", RetentionDays: &zero}}}, func(fs *fakeSource) CommitSource { return fs }},
			{"days of branches lakeFS names", &Extended{Branches: own}, func(fs *fakeSource) CommitSource { return fs }},
			{"stale beyond every HEAD", &Extended{StaleBranchDays: 100_000}, func(fs *fakeSource) CommitSource {
				return &defaultOnly{fakeSource: fs, defaultBranch: def}
			}},
		} {
			fs := newFakeSource(rp.listed, rp.getOnly...)
			var got []ActiveCommit
			var err error
			if v.src == nil {
				got, err = ActiveCommits(t.Context(), branchSeq(rp.branches...), fs, rp.rules, testNow)
			} else {
				got, err = ActiveCommitsExtended(t.Context(), branchSeq(rp.branches...), v.src(fs), rp.rules, v.ext, testNow)
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
				t.Fatalf("case %d (seed %d), %s: %d commits, branches %v, rules %+v:\ngot  %v, %v\nwant %v, %v",
					i, seed, v.name, len(rp.commits), rp.branches, *rp.rules, commitIDs(got), err, commitIDs(want), wantErr)
			}
		}
	}
	t.Logf("%d commits active, %d not, %d cases failing", active, inactive, failed)
	if active == 0 || inactive == 0 {
		t.Errorf("the cases never exercised a case: %d commits active, %d not", active, inactive)
	}
}
