package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
)

// invScale is small and has many slices of one page each (4 objects), so that the
// slices within the slice margin of the report (25 of them, an hour apart)
// are under 1 % of the LIST-based run's pages, as at the benchmark's size.
var invScale = Scale{Objects: 20_000, Slices: 5_000, Branches: 10, Commits: 200}

// goneSince is how many garbage objects of the oldest slice the tests
// delete after the report and before the cycle: the report names them,
// the store no longer has them.
const goneSince = 7

// TestInventoryMark runs the -inventory mode at a small size, in both
// formats (Parquet as a mark alone, the store's written objects on disk), beside a LIST-based run of the same
// namespace, and checks the documented equality: the inventory run's
// candidates are the LIST-based run's plus the objects gone since the
// report; exactly the garbage is deleted (or marked); the slices listed
// through the store are those started within the slice margin of the
// report's time, the rest read from the report; and the inventory run
// makes under 1 % of the LIST-based run's LIST requests.
func TestInventoryMark(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sc := invScale
	run := func(o Options) *Result {
		t.Helper()
		o.Latency, o.MemoryBudget, o.TempDir = time.Millisecond, ciBudget, t.TempDir()
		bn, err := newBench(ctx, sc, o)
		if err != nil {
			t.Fatal(err)
		}
		// Garbage objects of the oldest slice, gone after the report.
		b := bn.store.Bucket()
		defer b.Close()
		for j := range goneSince {
			if err := b.Delete(ctx, bn.h.address(sc.Objects-period*(j+1))); err != nil {
				t.Fatal(err)
			}
		}
		res, err := bn.cycle(ctx, bn.store, false)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		t.Logf("%+v:\n%s", o, printed(res))
		return res
	}
	list := run(Options{})
	if err := checkDeleted(list.Host, nil, list.Store); err != nil {
		t.Fatalf("LIST-based run: %v", err)
	}
	if m := list.Report.Mark.Marked; m != int64(sc.garbage()-goneSince) {
		t.Fatalf("LIST-based run marked %d, want the %d garbage objects left", m, sc.garbage()-goneSince)
	}
	margin := lakegc.DefaultSliceInterval + lakegc.DefaultLinkTTL + sweep.DefaultClockSkew
	for _, o := range []Options{{Inventory: "csv"}, {Inventory: "parquet", MarkOnly: true, StoreDir: t.TempDir()}} {
		t.Run(fmt.Sprintf("%s/markonly=%v", o.Inventory, o.MarkOnly), func(t *testing.T) {
			res := run(o)
			if res.Check != nil {
				t.Error(res.Check)
			}
			rep, sum := res.Report, res.Report.Mark.Summary
			// Candidates: the LIST-based run's and the objects gone since
			// the report, which the sweep finds gone.
			if rep.Mark.Marked != list.Report.Mark.Marked+goneSince {
				t.Errorf("marked %d, want the LIST-based run's %d + %d gone since the report", rep.Mark.Marked, list.Report.Mark.Marked, goneSince)
			}
			if sw := rep.Sweep; !o.MarkOnly && (sw.Deleted+sw.AlreadyGone != int64(sc.garbage()) || sw.Failed+sw.Refused != 0) {
				t.Errorf("sweep: deleted %d, already gone %d, failed %d, refused %d; want the %d garbage objects", sw.Deleted, sw.AlreadyGone, sw.Failed, sw.Refused, sc.garbage())
			}
			// The slices listed: those started at or after the report's
			// time less the margin, one page each; the rest from the report.
			boundary := sum.InventoryTime.Add(-margin)
			var newer int64
			for s, sl := range res.Host.slices { // slice s started s hours before its objects
				if !sl.ModTime.Add(-time.Duration(s) * time.Hour).Before(boundary) {
					newer++
				}
			}
			if newer == 0 || sum.SlicesListed != newer || res.DataList != newer || sum.SlicesSkipped != int64(sc.Slices)-newer {
				t.Errorf("slices listed %d (pages %d), from the report %d; want %d listed and %d from the report",
					sum.SlicesListed, res.DataList, sum.SlicesSkipped, newer, int64(sc.Slices)-newer)
			}
			if sum.InventoryObjects != res.Published.Inv.Rows || res.Published.Inv.Rows != int64(sc.Objects) {
				t.Errorf("read %d objects of the report, published %d rows; want the %d objects", sum.InventoryObjects, res.Published.Inv.Rows, sc.Objects)
			}
			if min := int64(len(res.Published.Inv.Files) + 2); res.InvGets < min {
				t.Errorf("%d GETs of the report, want at least the manifest, its checksum and the %d files", res.InvGets, len(res.Published.Inv.Files))
			}
			// Under 1 % of the LIST-based run's LIST requests.
			if l, c := res.Total.Requests.ListPages, list.Total.Requests.ListPages; 100*l >= c {
				t.Errorf("%d LIST requests, the LIST-based run's %d: not under 1 %%", l, c)
			}
		})
	}
}

// TestInventoryCompare runs -compare: a LIST-based cycle on a clone of the
// store, then one from the report on the store; both delete exactly the
// garbage, the first lists every slice, the second the newest 25.
func TestInventoryCompare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list, inv, err := runCompare(ctx, invScale, Options{Latency: time.Millisecond, MemoryBudget: ciBudget, TempDir: t.TempDir(), Inventory: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printCompare(&b, list, inv)
	t.Logf("figures:\n%s", b.String())
	for _, r := range []*Result{list, inv} {
		if r.Check != nil {
			t.Error(r.Check)
		}
		if r.Report.Mark.Marked != int64(invScale.garbage()) {
			t.Errorf("marked %d, want %d", r.Report.Mark.Marked, invScale.garbage())
		}
	}
	if list.Published != nil || list.DataList != int64(invScale.Slices) || inv.Published == nil || inv.Report.Mark.Summary.SlicesListed >= 100 ||
		inv.DataList != inv.Report.Mark.Summary.SlicesListed {
		t.Errorf("slices' pages: LIST-based %d, from the report %d (slices listed %d); want every slice, then only the newest",
			list.DataList, inv.DataList, inv.Report.Mark.Summary.SlicesListed)
	}
}
