package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
)

// ciScale is the bottom line scaled down a hundredfold (objects) for CI:
// 200 K objects in 40 slices of 5 K, 50 K staged on 100 branches, 2 K
// commits, 10 K garbage.
var ciScale = Scale{Objects: 200_000, Slices: 40, Branches: 100, Commits: 2_000}

// Memory bounds of TestBottomLine. The budget is small enough that the
// keep set (190 K keys, about 9 MiB) spills. The heap may reach about
// twice the budget with the default GOGC (sweep.WithMemoryBudget says so),
// plus what the budget does not cover: 8 listing pages of 1000 entries
// in flight, the Parquet writers' and readers' buffers, the host's table
// of kept commits and the test's sampler; heapSlack covers those. The
// store's overlay (the reports it holds in memory) is not the GC's and is
// taken off. The resident set adds the runtime and the binary to that;
// the bound Mark promises for it is the budget plus 64 MiB.
const (
	ciBudget  = 8 << 20
	heapSlack = 16 << 20
	rssSlack  = 64 << 20
)

// TestBottomLine runs the scaled-down bottom line through lakegc.Collect
// and checks what it did, not how long it took: the requests (a page per
// 1000 keys of each slice, a batch per 1000 candidates), that exactly the
// garbage is deleted, and the memory bound.
func TestBottomLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := run(ctx, ciScale, ciOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures:\n%s", printed(res))
	sc, rep, q := ciScale, res.Report, res.Total.Requests

	// Pages: each slice listed once, a page per 1000 of its keys; the top
	// level and the data folder a page each.
	var wantPages int64
	for _, s := range res.Host.slices {
		wantPages += int64((s.Count + 999) / 1000)
	}
	if res.DataList != wantPages {
		t.Errorf("list pages of the slices = %d, want %d", res.DataList, wantPages)
	}
	// Batches: one per 1000 candidates, each a request, none retried; the
	// sweep deletes nothing one by one.
	wantBatches := int64((sc.garbage() + 999) / 1000)
	var sweepDeletes int64
	for _, p := range res.Phases {
		if strings.HasPrefix(p.Name, lakegc.PhaseSweep) {
			sweepDeletes += p.Requests.Deletes
		}
	}
	if q.DeleteBatches != wantBatches || q.BatchKeys != int64(sc.garbage()) || sweepDeletes != 0 || q.Throttled != 0 {
		t.Errorf("delete batches = %d of %d keys, single deletes in the sweep %d, throttled %d; want %d batches of %d keys",
			q.DeleteBatches, q.BatchKeys, sweepDeletes, q.Throttled, wantBatches, sc.garbage())
	}

	// The cycle's own counts.
	if rep.Export.Rows != int64(sc.staged()) || rep.Commits.Active != sc.Branches*(recentCommits+1) ||
		rep.Mark.Listed != int64(sc.Objects) || rep.Mark.Marked != int64(sc.garbage()) ||
		rep.Sweep.Deleted != int64(sc.garbage()) || rep.Sweep.Failed+rep.Sweep.Refused+rep.Sweep.AlreadyGone != 0 {
		t.Errorf("report: exported %d, active %d, listed %d, marked %d, deleted %d (failed %d, refused %d, gone %d)",
			rep.Export.Rows, rep.Commits.Active, rep.Mark.Listed, rep.Mark.Marked, rep.Sweep.Deleted,
			rep.Sweep.Failed, rep.Sweep.Refused, rep.Sweep.AlreadyGone)
	}

	// Exactly the garbage is gone from the store: every object gone is at a
	// garbage position, and there are as many as garbage objects.
	if err := checkDeleted(res.Host, nil, res.Store); err != nil {
		t.Error(err)
	}

	// Memory.
	if heap := res.Total.PeakHeap - res.Overlay; heap > 2*ciBudget+heapSlack {
		t.Errorf("peak heap %d MiB (the store's %d MiB taken off) above twice the budget %d MiB + %d MiB",
			heap>>20, res.Overlay>>20, ciBudget>>20, heapSlack>>20)
	}
	if rss := res.Total.PeakRSS; !raceEnabled && rss > 0 && rss > ciBudget+rssSlack {
		t.Errorf("peak RSS %d MiB above the budget %d MiB + %d MiB", rss>>20, ciBudget>>20, rssSlack>>20)
	}
}

// ciOptions is how the tests run the bottom line: a millisecond of latency
// a request, the CI memory budget, and the default concurrencies.
func ciOptions(t *testing.T) Options {
	return Options{
		Latency: time.Millisecond, MemoryBudget: ciBudget, TempDir: t.TempDir(),
		ListConcurrency: defaultListConcurrency, DeleteConcurrency: defaultDeleteConcurrency,
	}
}
