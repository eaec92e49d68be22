package lakegc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
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
	rr, err := sweep.Restore(ctx, w.bucket, rep.RunID, nil)
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
