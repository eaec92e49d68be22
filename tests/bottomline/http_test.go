package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// TestHTTPMode runs a small bottom line through the driver and through
// s3blob and the SDK over loopback HTTP (both listing decoders): each
// deletes exactly the garbage, and the HTTP runs list, mark and delete
// what the driver's does, with as many listing pages and delete batches.
func TestHTTPMode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc := Scale{Objects: 20_000, Slices: 10, Branches: 10, Commits: 120}
	base := Options{Latency: s3sim.NoLatency, MemoryBudget: 8 << 20, TempDir: t.TempDir()}
	driver, err := run(ctx, sc, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, sdk := range []bool{false, true} {
		o := base
		o.HTTP, o.SDKList = true, sdk
		res, err := run(ctx, sc, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkDeleted(res.Host, nil, res.Store); err != nil {
			t.Errorf("sdk-list %v: %v", sdk, err)
		}
		r, d := res.Report, driver.Report
		if r.Mark.Listed != d.Mark.Listed || r.Mark.Marked != d.Mark.Marked || r.Sweep.Deleted != d.Sweep.Deleted || r.Sweep.Deleted != int64(sc.garbage()) {
			t.Errorf("sdk-list %v: listed %d, marked %d, deleted %d; the driver's run %d, %d, %d",
				sdk, r.Mark.Listed, r.Mark.Marked, r.Sweep.Deleted, d.Mark.Listed, d.Mark.Marked, d.Sweep.Deleted)
		}
		if q, dq := res.Total.Requests, driver.Total.Requests; res.DataList != driver.DataList || q.DeleteBatches != dq.DeleteBatches || q.BatchKeys != dq.BatchKeys {
			t.Errorf("sdk-list %v: %d slice pages, %d batches of %d keys; the driver's run %d, %d of %d",
				sdk, res.DataList, q.DeleteBatches, q.BatchKeys, driver.DataList, dq.DeleteBatches, dq.BatchKeys)
		}
		if !strings.Contains(printed(res), "through HTTP") {
			t.Errorf("the table does not say it ran over HTTP:\n%s", printed(res))
		}
	}
}
