package lakegc_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// Review, then sweep: the dry run's candidates, statted, are the garbage;
// SweepRun deletes exactly them.
func TestSweepRunDeletesExactlyTheCandidates(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for c, err := range lakegc.Candidates(ctx, w.config(), rep.RunID) {
		if err != nil {
			t.Fatal(err)
		}
		why, ok := w.garbage[c.Address]
		switch {
		case !ok:
			t.Errorf("candidate %s is not garbage (live: %q)", c.Address, w.live[c.Address])
		case c.Gone || c.Size != int64(len(why)) || c.ModTime.IsZero() || !c.ModTime.Before(rep.Mark.Summary.CutoffTime):
			t.Errorf("candidate %+v: want size %d, a time before the cutoff %v", c, len(why), rep.Mark.Summary.CutoffTime)
		case !strings.Contains(c.Reason, "include prefix data/old/"):
			t.Errorf("candidate %s: reason %q", c.Address, c.Reason)
		}
		listed = append(listed, c.Address)
	}
	slices.Sort(listed)
	if want := slices.Sorted(maps.Keys(w.garbage)); !slices.Equal(listed, want) {
		t.Errorf("candidates %q, want %q", listed, want)
	}
	swept, err := lakegc.SweepRun(ctx, w.config(), rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if gone := w.expectLiveKept(); !slices.Equal(gone, listed) {
		t.Errorf("swept %q, want the candidates %q", gone, listed)
	}
	if swept.Sweep == nil || swept.Sweep.Deleted != int64(len(listed)) {
		t.Errorf("sweep report %+v", swept.Sweep)
	}
	// Swept: the candidates are now gone.
	for c, err := range lakegc.Candidates(ctx, w.config(), rep.RunID) {
		if err != nil || !c.Gone || c.Size != 0 {
			t.Errorf("after the sweep: %+v, %v", c, err)
		}
	}
}

// A mark that a later mark superseded is not swept unless forced, through
// SweepRun and through Collect's ResumeMark alike.
func TestSweepRunRefusesASupersededMark(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	first, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	// Alone, the first mark is not superseded.
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", first.RunID); err != nil || len(later) != 0 {
		t.Fatalf("later runs of the only mark: %q, %v", later, err)
	}
	cfg := w.config()
	cfg.Clock = func() time.Time { return gcTime.Add(time.Minute) }
	second, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", first.RunID); err != nil || !slices.Equal(later, []string{second.RunID}) {
		t.Fatalf("later runs of the first mark: %q, %v; want %s", later, err, second.RunID)
	}
	_, err = lakegc.SweepRun(ctx, w.config(), first.RunID)
	if !errors.Is(err, lakegc.ErrSuperseded) || !strings.Contains(err.Error(), second.RunID) || !strings.Contains(err.Error(), "live again") {
		t.Fatalf("SweepRun of a superseded mark: %v, want ErrSuperseded naming %s", err, second.RunID)
	}
	resume := w.config()
	resume.ResumeMark, resume.Sweep = first.RunID, true
	if _, err := lakegc.Collect(ctx, lakegc.Host{}, resume); !errors.Is(err, lakegc.ErrSuperseded) {
		t.Fatalf("Collect resuming a superseded mark: %v, want ErrSuperseded", err)
	}
	if gone := w.expectLiveKept(); len(gone) != 0 {
		t.Fatalf("a refused sweep deleted %q", gone)
	}
	// A dry run of the superseded mark reads it still.
	resume.Sweep = false
	if _, err := lakegc.Collect(ctx, lakegc.Host{}, resume); err != nil {
		t.Fatalf("reporting a superseded mark: %v", err)
	}
	// The latest is swept; the first only when forced.
	if _, err := lakegc.SweepRun(ctx, w.config(), second.RunID); err != nil {
		t.Fatal(err)
	}
	forced := w.config()
	forced.SweepSuperseded = true
	if _, err := lakegc.SweepRun(ctx, forced, first.RunID); err != nil {
		t.Fatalf("forced sweep: %v", err)
	}
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("swept %q, want the %d garbage objects", gone, len(w.garbage))
	}
}

// Explain names why each object of the world was marked or kept.
func TestExplainNamesTheReason(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// Another repository nested in the namespace, and a file of another
	// tenant: neither is collected.
	w.object("data/old/nested/_lakefs/dummy", 90*24*time.Hour, true, "a nested repository's marker")
	w.object("data/old/nested/x", 90*24*time.Hour, true, "a nested repository's object")
	w.object("tenant/report.csv", 90*24*time.Hour, true, "another tenant's file")
	w.object("data/tenant.csv", 90*24*time.Hour, true, "another tenant's file in the data folder")
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
	want := map[string]struct{ verdict, reason, commit string }{
		"data/old/a1":           {lakegc.VerdictMarked, "referenced by no kept commit", ""},
		w.ns + "/data/old/d":    {lakegc.VerdictMarked, "referenced by no kept commit", ""},
		"data/old/a2":           {lakegc.VerdictKept, "kept commit c2", "c2"},
		"data/old/b":            {lakegc.VerdictKept, "kept commit c2", "c2"},
		"data/old/c":            {lakegc.VerdictKept, "young: modified", ""},
		"data/old/s1":           {lakegc.VerdictKept, "staged on a branch", ""},
		"data/old/young":        {lakegc.VerdictKept, "young: modified", ""},
		"data/old/nested/x":     {lakegc.VerdictKept, "walled", ""},
		"tenant/report.csv":     {lakegc.VerdictNotListed, "outside the data folder", ""},
		"data/tenant.csv":       {lakegc.VerdictKept, "unrecognized", ""},
		"_lakefs/dummy":         {lakegc.VerdictNotListed, "lakeFS's own files", ""},
		"s3://elsewhere/data/x": {lakegc.VerdictNotListed, "outside the namespace", ""},
	}
	queries := slices.Sorted(maps.Keys(want))
	got, err := lakegc.Explain(ctx, w.host.host(), w.config(), rep.RunID, queries)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(queries) {
		t.Fatalf("%d explanations for %d queries", len(got), len(queries))
	}
	for i, q := range queries {
		e, x := got[i], want[q]
		if e.Query != q || e.Verdict != x.verdict || !strings.Contains(e.Reason, x.reason) || e.Commit != x.commit {
			t.Errorf("%s: %+v\n want verdict %q, a reason with %q, commit %q", q, e, x.verdict, x.reason, x.commit)
		}
	}
	if _, err := lakegc.Explain(ctx, w.host.host(), w.config(), "g0ootg1ksdudqv37g7d0", queries); !errors.Is(err, sweep.ErrNoRun) {
		t.Errorf("explain an unknown run: %v", err)
	}
}

// The shards of one sharded mark do not supersede each other; a later
// mark supersedes them all.
func TestSweepRunShardsOfOneMark(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	none := func(yield func(string, error) bool) {}
	var shards []string
	for i := range 2 {
		id := retention.NewRunID(gcTime.Add(time.Duration(i) * time.Second))
		clock := func() time.Time { return gcTime.Add(time.Duration(i) * time.Second) }
		if _, err := sweep.Mark(ctx, w.bucket, id, sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: gcTime.Add(-time.Minute)},
			sweep.WithShard(i, 2), sweep.WithClock(clock), sweep.WithInclude("data/old/"), sweep.WithTempDir(t.TempDir())); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, id)
	}
	for _, id := range shards {
		if later, err := lakegc.LaterRuns(ctx, w.bucket, "", id); err != nil || len(later) != 0 {
			t.Errorf("shard %s: later runs %q, %v; want none", id, later, err)
		}
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), shards[0]); err != nil {
		t.Errorf("sweep of shard 0 beside shard 1: %v", err)
	}
	// Each shard its own run, with its own export and cutoff (lakegc gc
	// --shard i/n): shard 0 of a later split does supersede shard 0, and
	// its shard 1 does not supersede shard 1.
	later0 := retention.NewRunID(gcTime.Add(10 * time.Second))
	if _, err := sweep.Mark(ctx, w.bucket, later0, sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: gcTime.Add(5 * time.Second)},
		sweep.WithShard(0, 2), sweep.WithClock(func() time.Time { return gcTime.Add(10 * time.Second) }), sweep.WithInclude("data/old/"), sweep.WithTempDir(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", shards[0]); err != nil || !slices.Equal(later, []string{later0}) {
		t.Errorf("shard 0 after a later shard 0: later runs %q, %v; want %s", later, err, later0)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", shards[1]); err != nil || len(later) != 0 {
		t.Errorf("shard 1 beside a later mark's shard 0 of another cutoff: later runs %q, %v; want none", later, err)
	}
	cfg := w.config()
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	if _, err := lakegc.Collect(ctx, w.host.host(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), shards[1]); !errors.Is(err, lakegc.ErrSuperseded) {
		t.Errorf("sweep of a shard after a later mark: %v, want ErrSuperseded", err)
	}
}

// Explain names the copy record that kept an object.
func TestExplainNamesACopyRecord(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tracker, err := copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(func() time.Time { return gcTime }))
	if err != nil {
		t.Fatal(err)
	}
	if err := tracker.Track(ctx, copytrack.Copy{Repository: "repo1", Branch: "main", SrcPath: "a.csv", DstPath: "b.csv", PhysicalAddress: "data/old/orphan"}); err != nil {
		t.Fatal(err)
	}
	delete(w.garbage, "data/old/orphan")
	host := w.host.host()
	host.Copies = tracker
	rep, err := lakegc.Collect(ctx, host, w.config())
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
	got, err := lakegc.Explain(ctx, host, w.config(), rep.RunID, []string{"data/old/orphan", "data/old/s1"})
	if err != nil {
		t.Fatal(err)
	}
	if e := got[0]; e.Verdict != lakegc.VerdictKept || !strings.Contains(e.Reason, "copy record: a.csv copied to b.csv on branch main") {
		t.Errorf("copied object: %+v", e)
	}
	if e := got[1]; e.Verdict != lakegc.VerdictKept || !strings.Contains(e.Reason, "staged on a branch") {
		t.Errorf("staged object: %+v", e)
	}
}

// A run whose summary gives no start time may be later than any: it
// supersedes, and the mark is not swept unless forced.
func TestSweepRunUnknownStartSupersedes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	first, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	const other = "6f1f3a52-7a4e-4d0e-9a51-3c1f2b9d8e70" // a Spark client's run ID
	if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/unified/"+other+"/summary.json",
		[]byte(`{"run_id":"`+other+`","success":true,"first_slice":"","start_time":"","cutoff_time":"","num_deleted_objects":0}`), nil); err != nil {
		t.Fatal(err)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", first.RunID); err != nil || !slices.Equal(later, []string{other}) {
		t.Fatalf("later runs: %q, %v; want the run of unknown start %s", later, err, other)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), first.RunID); !errors.Is(err, lakegc.ErrSuperseded) {
		t.Fatalf("SweepRun beside a run of unknown start: %v, want ErrSuperseded", err)
	}
	if gone := w.expectLiveKept(); len(gone) != 0 {
		t.Fatalf("a refused sweep deleted %q", gone)
	}
}

// Explain of one shard of a sharded mark says an object of another
// shard's slice was not listed by that run, rather than kept by its inputs.
func TestExplainShardOfAShardedMark(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var objects []string
	inShard := map[string]int{}
	for i := range 12 {
		slice := pathprovider.DescendingID(gcTime.Add(-time.Duration(60*24+i) * time.Hour)).String()
		key := w.object("data/"+slice+"/"+pathprovider.DescendingID(gcTime.Add(-time.Duration(i)*time.Minute)).String(), 60*24*time.Hour, false, "in a slice, in nothing")
		objects = append(objects, key)
		inShard[key] = sweep.SliceShard(slice, 2)
	}
	if n := slices.Collect(maps.Values(inShard)); !slices.Contains(n, 0) || !slices.Contains(n, 1) {
		t.Fatalf("the slices fall in one shard: %v", n)
	}
	none := func(yield func(string, error) bool) {}
	var shards []string
	for i := range 2 {
		id := retention.NewRunID(gcTime.Add(time.Duration(i) * time.Second))
		if _, err := sweep.Mark(ctx, w.bucket, id, sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: gcTime.Add(-time.Minute)},
			sweep.WithShard(i, 2), sweep.WithClock(func() time.Time { return gcTime }), sweep.WithInclude("data/old/"), sweep.WithTempDir(t.TempDir())); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, id)
	}
	for i, id := range shards {
		got, err := lakegc.Explain(ctx, lakegc.Host{}, w.config(), id, objects)
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range got {
			if inShard[objects[j]] == i {
				if e.Verdict != lakegc.VerdictMarked {
					t.Errorf("shard %d, its own %s: %+v", i, objects[j], e)
				}
			} else if e.Verdict != lakegc.VerdictNotListed || !strings.Contains(e.Reason, fmt.Sprintf("listed by shard %d", 1-i)) {
				t.Errorf("shard %d, shard %d's %s: %+v", i, 1-i, objects[j], e)
			}
		}
	}
}

// A run is told by its folder, not by the run_id its summary says: a
// summary whose run_id is not its folder's (empty, here) does not make the
// run supersede itself.
func TestSweepRunByItsFolder(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	key := "_lakefs/retention/gc/unified/" + rep.RunID + "/summary.json"
	b, err := w.bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"run_id":"`+rep.RunID+`"`, `"run_id":""`, 1))
	if !strings.Contains(string(b), `"run_id":""`) {
		t.Fatalf("summary %s", b)
	}
	if err := w.bucket.WriteAll(ctx, key, b, nil); err != nil {
		t.Fatal(err)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", rep.RunID); err != nil || len(later) != 0 {
		t.Fatalf("later runs of the only run: %q, %v", later, err)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), rep.RunID); err != nil {
		t.Fatalf("SweepRun of the only run: %v", err)
	}
}

// countingCommitted counts the commits whose objects it is asked for.
type countingCommitted struct {
	lakegc.Committed
	asked map[string]int // metarange → times asked
}

func (c *countingCommitted) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	for _, a := range active {
		c.asked[a.MetaRangeID]++
	}
	return c.Committed.CommittedAddresses(ctx, active)
}

// Explain reads each metarange of the run's kept commits once: commits
// that share one (a branch made from another, a revert) hold the same
// objects.
func TestExplainReadsEachMetarangeOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	// The commits report, with every kept commit twice: a second ID of the
	// same metarange.
	key := "_lakefs/retention/gc/commits/run_id=" + rep.RunID + "/commits.csv"
	b, err := w.bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var more []string
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 3 {
			t.Fatalf("commits report line %q", l)
		}
		more = append(more, f[0]+"x,"+f[1]+","+f[2])
	}
	if len(more) < 2 {
		t.Fatalf("commits report %q: want at least 2 commits", b)
	}
	if err := w.bucket.WriteAll(ctx, key, []byte(strings.Join(append(lines, more...), "\n")+"\n"), nil); err != nil {
		t.Fatal(err)
	}
	host := w.host.host()
	counting := &countingCommitted{Committed: host.Committed, asked: map[string]int{}}
	host.Committed = counting
	// A staged object is in no commit: every commit is read.
	got, err := lakegc.Explain(ctx, host, w.config(), rep.RunID, []string{"data/old/s1"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Verdict != lakegc.VerdictKept {
		t.Errorf("staged object: %+v", got[0])
	}
	if len(counting.asked) != len(more) {
		t.Errorf("read metaranges %v, want the %d of the report", counting.asked, len(more))
	}
	for mr, n := range counting.asked {
		if n != 1 {
			t.Errorf("metarange %s read %d times", mr, n)
		}
	}
}

// Paging through the candidates with any limit yields the same sequence as
// Candidates, each once, in order, and the last page's next offset is 0;
// an offset past the end gives an empty page.
func TestCandidatePagesAreStable(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := range 150 {
		w.object(fmt.Sprintf("data/old/many%03d", i), 20*24*time.Hour, false, "in nothing")
	}
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for c, err := range lakegc.Candidates(ctx, w.config(), rep.RunID) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c.Address)
	}
	if int64(len(all)) != rep.Mark.Summary.NumDeletedObjects || len(all) < 150 {
		t.Fatalf("%d candidates, the summary says %d", len(all), rep.Mark.Summary.NumDeletedObjects)
	}
	for _, limit := range []int{1, 7, 64, 65, 100, len(all) - 1, len(all), len(all) + 1} {
		var paged []string
		offset, pages := 0, 0
		for {
			page, next, err := lakegc.CandidatePage(ctx, w.config(), rep.RunID, offset, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit || next != 0 && (len(page) != limit || next != offset+limit) {
				t.Fatalf("limit %d, offset %d: %d candidates, next %d", limit, offset, len(page), next)
			}
			for _, c := range page {
				paged = append(paged, c.Address)
			}
			pages++
			if next == 0 {
				break
			}
			offset = next
		}
		if !slices.Equal(paged, all) {
			t.Errorf("limit %d: the pages hold %d candidates, not the %d of Candidates in order", limit, len(paged), len(all))
		}
		if want := (len(all) + limit - 1) / limit; pages != want {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
		}
	}
	if page, next, err := lakegc.CandidatePage(ctx, w.config(), rep.RunID, len(all)+5, 10); err != nil || len(page) != 0 || next != 0 {
		t.Errorf("a page past the end: %d candidates, next %d, %v", len(page), next, err)
	}
}

// An optimized run's candidates, those it copied from the previous run's
// records for the slices it skipped included, are what SweepRun deletes;
// the previous run, superseded, is refused.
func TestSweepRunOptimized(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := range 12 {
		slice := pathprovider.DescendingID(gcTime.Add(-time.Duration(60+i) * 24 * time.Hour)).String()
		w.object("data/"+slice+"/"+pathprovider.DescendingID(gcTime.Add(-time.Duration(i)*time.Minute)).String(), 60*24*time.Hour, false, "in a slice, in nothing")
	}
	cfg := w.config()
	cfg.Optimized = true
	first, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	next, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := next.Mark.Summary; s.RunKind != sweep.RunOptimized || s.SlicesSkipped == 0 {
		t.Fatalf("the second run is not optimized: %+v", s)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), first.RunID); !errors.Is(err, lakegc.ErrSuperseded) {
		t.Fatalf("sweep of the run the optimized one started from: %v, want ErrSuperseded", err)
	}
	want := w.candidates(next.RunID)
	if len(want) != len(w.garbage) {
		t.Fatalf("optimized run's candidates %q, want the %d garbage objects", want, len(w.garbage))
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), next.RunID); err != nil {
		t.Fatal(err)
	}
	if gone := w.expectLiveKept(); !slices.Equal(gone, want) {
		t.Errorf("swept %q, want the optimized run's candidates %q", gone, want)
	}
}

// A later mark supersedes even when it failed (when in doubt, keep), and a
// killed one, without a summary, does not; an earlier one never does.
func TestSweepRunFailedAndKilledLaterMarks(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	first, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	summary := func(id string, at time.Time, success bool) {
		t.Helper()
		b := fmt.Sprintf(`{"run_id":%q,"success":%v,"first_slice":"","start_time":%q,"cutoff_time":%q,"num_deleted_objects":0}`,
			id, success, at.Format(time.RFC3339), at.Add(-time.Hour).Format(time.RFC3339))
		if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/unified/"+id+"/summary.json", []byte(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	start := first.Mark.Summary.StartTime
	summary("earlier-failed", start.Add(-time.Hour), false)
	summary("earlier", start.Add(-time.Minute), true)
	if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/unified/killed/deleted/part-0.parquet", []byte("half"), nil); err != nil {
		t.Fatal(err)
	}
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", first.RunID); err != nil || len(later) != 0 {
		t.Fatalf("later runs beside earlier and killed ones: %q, %v", later, err)
	}
	summary("later-failed", start.Add(time.Minute), false)
	if later, err := lakegc.LaterRuns(ctx, w.bucket, "", first.RunID); err != nil || !slices.Equal(later, []string{"later-failed"}) {
		t.Fatalf("later runs beside a failed later mark: %q, %v", later, err)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), first.RunID); !errors.Is(err, lakegc.ErrSuperseded) || !strings.Contains(err.Error(), "later-failed") {
		t.Fatalf("SweepRun beside a failed later mark: %v, want ErrSuperseded", err)
	}
	if gone := w.expectLiveKept(); len(gone) != 0 {
		t.Fatalf("a refused sweep deleted %q", gone)
	}
}
