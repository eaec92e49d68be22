package inventory

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// An object the report names, quarantined by a sweep after the report and
// restored (sweep.Restore writes it back at its address with a new
// modification time), is young to a listing; the report still gives its
// old time. A mark from that report keeps it all the same: it keeps what
// was quarantined since the report. Without that, it is marked again.
func TestRestoredAfterReport(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	start := now.Add(-5 * 24 * time.Hour)
	slice := "data/" + layout.DescendingID(start).String() + "/"
	restored := slice + xid.NewWithTime(start).String()
	other := slice + xid.NewWithTime(start.Add(time.Second)).String() // garbage, left alone
	report := now.Add(-6 * time.Hour)
	// A live object of a newer slice: an optimized run lists only from it
	// (less the margin) on.
	later := start.Add(2 * 24 * time.Hour)
	newer := "data/" + layout.DescendingID(later).String() + "/" + xid.NewWithTime(later).String()

	root := filepath.Join(t.TempDir(), "ns")
	for k, mod := range map[string]time.Time{restored: start, other: start, newer: later} {
		p := filepath.Join(root, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	store, err := fileblob.OpenBucket(root, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dest := memblob.OpenBucket(nil)
	defer dest.Close()
	mkey := writeS3(t, dest, "inv/", s3Report{Source: "src", Time: report, Format: "CSV", Rows: []s3Row{
		{Key: "ns/" + restored, Size: 3, Mod: start}, {Key: "ns/" + other, Size: 3, Mod: start}, {Key: "ns/" + newer, Size: 3, Mod: later},
	}})
	rep, err := OpenS3(ctx, dest, mkey, "s3://src/ns", WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	in := func(keep ...string) sweep.Inputs {
		return sweep.Inputs{Uncommitted: seq(nil), Committed: seq(append(keep, newer)), ExportStart: now}
	}
	clock := sweep.WithClock(func() time.Time { return now })
	mark := func(run string, keep []string, more ...sweep.MarkOption) []string {
		t.Helper()
		if _, err := sweep.Mark(ctx, store, run, in(keep...), append([]sweep.MarkOption{clock, sweep.WithTempDir(t.TempDir())}, more...)...); err != nil {
			t.Fatal(err)
		}
		return candidates(t, store, run)
	}

	// The first run quarantines the restored one (the other is kept by the
	// keep set then), which is then put back.
	runA := xid.New().String()
	if got := mark(runA, []string{other}, sweep.WithInventory(rep)); !slices.Equal(got, []string{restored}) {
		t.Fatalf("first run marks %q", got)
	}
	if _, err := sweep.Sweep(ctx, store, runA, sweep.WithQuarantine()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Exists(ctx, restored); ok {
		t.Fatal("not quarantined")
	}
	if res, err := sweep.Restore(ctx, store, runA, nil); err != nil || res.Restored != 1 {
		t.Fatalf("restore: %+v, %v", res, err)
	}

	// Now the keep set holds neither: a listing keeps the restored one as
	// young, and so does a mark from the report taken before it.
	if got := mark(xid.New().String(), nil); !slices.Equal(got, []string{other}) {
		t.Fatalf("LIST marks %q", got)
	}
	runB := xid.New().String()
	if got := mark(runB, nil, sweep.WithInventory(rep)); !slices.Equal(got, []string{other}) {
		t.Fatalf("inventory marks %q; want only %q (%q was restored after the report)", got, other, restored)
	}
	// Nor does an optimized run that starts from that run's records: the
	// restored object's slice is listed again.
	runC := xid.New().String()
	got := mark(runC, nil, sweep.WithPrevious(runB))
	if sumC, err := sweep.ReadSummary(ctx, store, "_lakefs", runC); err != nil || sumC.RunKind != sweep.RunOptimized || sumC.SlicesListed+sumC.SlicesSkipped != 2 {
		t.Fatalf("optimized run: %+v, %v", sumC, err)
	}
	if slices.Contains(got, restored) {
		t.Fatalf("optimized run from the inventory run marks %q, restored after the report", got)
	}
}
