package lakegc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/sweep/quarantine"
)

// A sweep into the quarantine moves exactly the garbage; the next mark,
// which lists the whole namespace, marks nothing in the quarantine; a
// restore brings the garbage back.
func TestCollectQuarantineThenRestore(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	cfg := w.config()
	cfg.Sweep, cfg.Quarantine = true, true
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("moved %q, want all of %d garbage objects", gone, len(w.garbage))
	}
	if rep.Sweep == nil || rep.Sweep.Deleted != int64(len(w.garbage)) || !strings.Contains(rep.Sweep.Quarantine, rep.RunID) {
		t.Fatalf("sweep report %+v", rep.Sweep)
	}
	// A day later, the next mark: the quarantined objects are old and in
	// no kept commit, yet never candidates.
	cfg.Sweep = false
	cfg.Clock = func() time.Time { return gcTime.Add(24 * time.Hour) }
	rep2, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range w.candidates(rep2.RunID) {
		if strings.HasPrefix(c, lakegc.DefaultStoragePrefix+"/") {
			t.Errorf("the next mark marked %s", c)
		}
	}
	rr, err := quarantine.Restore(ctx, w.bucket, rep.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Restored != int64(len(w.garbage)) || len(rr.Refused) > 0 {
		t.Errorf("restore %+v", rr)
	}
	if gone := w.expectLiveKept(); len(gone) != 0 {
		t.Errorf("not restored: %q", gone)
	}
}

// A second Collect on a namespace whose lease another run holds fails
// before it reads or writes anything, naming the holder; once released, it
// runs.
func TestCollectLeaseHeld(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	held, err := lease.Acquire(ctx, w.bucket, layout.LeaseFolder(lakegc.DefaultStoragePrefix), lease.Options{Holder: "the-other-gc", Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.config()
	cfg.Lease = &lease.Options{Holder: "this-gc", Settle: -1}
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "the-other-gc") {
		t.Fatalf("Collect under another's lease: %v", err)
	}
	exports, err := w.bucket.List(&blob.ListOptions{Prefix: layout.Runs(lakegc.DefaultStoragePrefix, layout.Uncommitted)}).Next(ctx)
	if rep.RunID != "" || rep.ExportRunID != "" || err == nil {
		t.Errorf("Collect under another's lease started: %+v, export %v", rep, exports)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := lakegc.Collect(ctx, w.host.host(), cfg); err != nil {
		t.Fatalf("Collect after the release: %v", err)
	}
}
