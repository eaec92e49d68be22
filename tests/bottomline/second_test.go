package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// secondScale is the bottom line at 100 K objects in 1000 slices of 100
// (a page each), so that the slices an optimized run lists again are as
// small a part of the namespace as at full size. An optimized run lists
// the slices that started within the slice margin (25 h 5 min by default)
// of the first cycle's newest one, 26 when they start an hour apart, and
// the churn's new slices, c·S of S: (26 + c·S)/(S + c·S) of the slices'
// pages, at most 5 % from S = 642 slices at 1 % churn. Here 36 of 1010
// pages, 3.6 %; at full size (2000 slices of 10 pages) 46 of 2020 slices,
// 2.3 %. The other LIST requests (the top level, the data folder's
// slices, the report folders) are a dozen in either run.
var secondScale = Scale{Objects: 100_000, Slices: 1000, Branches: 100, Commits: 2_000}

// TestSecondCycle runs the scaled-down bottom line, churns 1 % of it, and
// runs a clean and an optimized second cycle from the same state: each
// deletes exactly the garbage, and the optimized one lists only the slices
// the margin and the churn make it list, at most 5 % of the clean one's
// pages and of its LIST requests.
//
// With parts (the committed keep set as ranges of secondRange entries),
// the clean cycle reads every range and the optimized one only those the
// churn changed: the new ones and those they replaced.
//
// With own memory (Options.OwnMemory: each second cycle in a child
// process of its own, against the store over loopback HTTP), as with
// parts, and each child's peak resident set within the budget + 64 MiB:
// the GC's own memory, with the synthetic host and the S3 client (about
// 21 MiB before the GC starts). The bound is loose at this size (the
// children peak near 55 MiB here, at load 12 too), so that it holds on a
// loaded machine: it fails on some 20 MiB more, not on a few. It is
// skipped under the race detector.
func TestSecondCycle(t *testing.T) {
	t.Run("flat", func(t *testing.T) { testSecondCycle(t, ciOptions(t)) })
	t.Run("parts", func(t *testing.T) {
		o := ciOptions(t)
		o.Parts, o.RangeEntries = true, secondRange
		testSecondCycle(t, o)
	})
	t.Run("own memory", func(t *testing.T) {
		if raceEnabled {
			// The bound says nothing under the race detector, and the
			// cycles' checks run in the plain run (.ci/run's memory step).
			t.Skip("the race detector's shadow memory: the resident set says nothing of the budget")
		}
		o := ciOptions(t)
		o.Parts, o.RangeEntries, o.OwnMemory = true, secondRange, true
		testSecondCycle(t, o)
	})
}

// secondRange is the entries of a range in TestSecondCycle: 70 ranges of
// the 70 K committed objects, the churn's region (737 objects) in one or
// two of them.
const secondRange = 1000

func testSecondCycle(t *testing.T, o Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sec, err := runSecond(ctx, secondScale, o, 0.01, true)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sec.print(&b)
	t.Logf("figures:\n%s", b.String())
	if err := sec.err(); err != nil {
		t.Fatal(err)
	}
	ch, h := sec.ch, sec.First.Host
	for _, c := range []struct {
		name string
		r    *Result
		kind string
	}{{"clean", sec.Clean, sweep.RunClean}, {"optimized", sec.Optimized, sweep.RunOptimized}} {
		rep := c.r.Report
		if k := rep.Mark.Summary.RunKind; k != c.kind {
			t.Errorf("%s second cycle ran %s (%s)", c.name, k, rep.Mark.Summary.CleanReason)
		}
		if rep.Mark.Marked != int64(ch.garbage()) || rep.Sweep.Deleted != int64(ch.garbage()) ||
			rep.Sweep.AlreadyGone+rep.Sweep.Failed+rep.Sweep.Refused != 0 {
			t.Errorf("%s second cycle: marked %d, deleted %d (gone %d, failed %d, refused %d); want %d",
				c.name, rep.Mark.Marked, rep.Sweep.Deleted, rep.Sweep.AlreadyGone, rep.Sweep.Failed, rep.Sweep.Refused, ch.garbage())
		}
	}

	// The slices' pages: the clean cycle lists every slice, the optimized
	// one those within the margin of the first cycle's newest slice and the
	// new ones. A slice's pages count the late objects written into it.
	margin := sweep.DefaultSliceInterval + lakegc.DefaultLinkTTL + sweep.DefaultClockSkew
	late := map[int]int{} // late objects by slice, from their keys
	for _, key := range ch.late {
		for s, sl := range h.slices {
			if strings.HasPrefix(key, sl.Prefix) {
				late[s]++
			}
		}
	}
	pages := func(n int) int64 { return int64((n + 999) / 1000) }
	var wantClean, wantOpt int64
	newest := h.slices[0].ModTime // slice s started s hours before it
	for s, sl := range h.slices {
		p := pages(sl.Count + late[s])
		wantClean += p
		if start := newest.Add(-time.Duration(s) * time.Hour); !start.Before(newest.Add(-margin)) {
			wantOpt += p
		}
	}
	for _, sl := range ch.slices {
		wantClean += pages(sl.Count)
		wantOpt += pages(sl.Count)
	}
	if sec.Clean.DataList != wantClean || sec.Optimized.DataList != wantOpt {
		t.Errorf("slices' pages: clean %d, optimized %d; want %d and %d", sec.Clean.DataList, sec.Optimized.DataList, wantClean, wantOpt)
	}
	if o.Parts {
		checkParts(t, sec)
	}
	if o.OwnMemory {
		checkOwnMemory(t, sec)
	}
	lists := func(r *Result) int64 { return r.Total.Requests.ListPages }
	if o, c := sec.Optimized, sec.Clean; 20*o.DataList > c.DataList || 20*lists(o) > lists(c) {
		t.Errorf("optimized second cycle: %d slices' pages of the clean one's %d, %d LIST requests of its %d; want at most 5 %%",
			o.DataList, c.DataList, lists(o), lists(c))
	}
}

// TestNoChurn: without churn a second cycle finds no garbage, and the
// optimized one lists only the slices within the margin.
func TestNoChurn(t *testing.T) {
	sec, err := runSecond(context.Background(), Scale{Objects: 2_000, Slices: 100, Branches: 1, Commits: 12},
		Options{Latency: s3sim.NoLatency, MemoryBudget: 1 << 20, TempDir: t.TempDir()}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Result{sec.Clean, sec.Optimized} {
		if r.Report.Mark.Marked != 0 || r.Report.Sweep.Deleted != 0 {
			t.Errorf("%s second cycle without churn: marked %d, deleted %d; want none",
				r.Report.Mark.Summary.RunKind, r.Report.Mark.Marked, r.Report.Sweep.Deleted)
		}
	}
	if sec.Clean.DataList != 100 || sec.Optimized.DataList != 26 {
		t.Errorf("slices' pages: clean %d, optimized %d; want 100 and 26", sec.Clean.DataList, sec.Optimized.DataList)
	}
}

// checkParts checks the ranges the second cycles read: the clean one every
// range of the keep set, the optimized one the ranges the churn changed,
// new and gone, each once, and no other.
func checkParts(t *testing.T, sec *Second) {
	t.Helper()
	h := sec.First.Host
	now := h.ranges()
	saved := h.ch
	h.ch = nil
	before := h.ranges()
	h.ch = saved
	var changed int64
	for i := range now {
		if now[i].id() != before[i].id() {
			changed += 2
		}
	}
	if changed == 0 || changed > 4 {
		t.Fatalf("the churn changed %d ranges' worth; want 1 or 2 ranges", changed/2)
	}
	for _, c := range []struct {
		name   string
		r      *Result
		source string
		read   int64
		misses int
	}{
		// The clean cycle misses the new ranges; the optimized one runs
		// against the store without the clean one's caches, and misses
		// them too.
		{"clean", sec.Clean, sweep.KeepParts, int64(len(now)), int(changed / 2)},
		{"optimized", sec.Optimized, sweep.KeepPartsChanged, changed, int(changed / 2)},
	} {
		// Collect opens a part once, or twice if it does not fit its
		// buffer (lakegc.CommittedParts); the first open of a new range
		// reads its table.
		sum, opens := c.r.Report.Mark.Summary, int64(c.r.RangeHits+c.r.RangeMisses)
		if sum.KeepSource != c.source || sum.PartsRead != c.read || int64(c.r.RangesRead) != c.read ||
			opens < c.read || opens > 2*c.read || c.r.RangeMisses != c.misses {
			t.Errorf("%s second cycle: keep source %q, %d parts read, %d ranges read in %d opens (%d from their table); want %q, %d (%d from their table)",
				c.name, sum.KeepSource, sum.PartsRead, c.r.RangesRead, opens, c.r.RangeMisses, c.source, c.read, c.misses)
		}
	}
}

// checkOwnMemory checks that each second cycle ran in a child process and
// that its peak resident set was read and is within the budget + 64 MiB.
func checkOwnMemory(t *testing.T, sec *Second) {
	t.Helper()
	for _, r := range []*Result{sec.Clean, sec.Optimized} {
		kind := r.Report.Mark.Summary.RunKind
		if !r.Child || r.StartRSS <= 0 || r.Total.PeakRSS < r.StartRSS {
			t.Errorf("%s second cycle: in a child %v, its RSS %d at the start and %d at most; want a child's, read", kind, r.Child, r.StartRSS, r.Total.PeakRSS)
			continue
		}
		t.Logf("%s: %s", kind, ownPeak(r))
		if bound := r.Opts.MemoryBudget + budgetSlack; !raceEnabled && r.Total.PeakRSS > bound {
			t.Errorf("%s second cycle: the GC's own peak RSS %d MiB, above the budget + 64 MiB (%d MiB)", kind, r.Total.PeakRSS>>20, bound>>20)
		}
	}
}
