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

// putAt writes key under root with the modification time mod.
func putAt(t *testing.T, root, key string, mod time.Time) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(key), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// An object the report names that was written again at its address after
// the report (sweep.Restore puts a quarantined object back so, with a new
// modification time) is young to a listing; the report still gives its old
// time. It fails today: see package sweep's documentation, "Inventory
// reports" (the fix: Restore leaves a record that a mark from an older
// report reads, keeping what was restored since as young, or refusing
// the report).
func TestRewrittenAfterReport(t *testing.T) {
	if os.Getenv("LAKEGC_KNOWN_BUGS") == "" {
		t.Skip("known: a restore after the report; LAKEGC_KNOWN_BUGS=1 runs it")
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	start := now.Add(-5 * 24 * time.Hour)
	key := "data/" + layout.DescendingID(start).String() + "/" + xid.NewWithTime(start).String()
	report := now.Add(-6 * time.Hour)

	dir := t.TempDir()
	root := filepath.Join(dir, "ns")
	putAt(t, root, key, now.Add(-10*time.Minute)) // written again after the report
	store, err := fileblob.OpenBucket(root, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dest := memblob.OpenBucket(nil)
	defer dest.Close()
	mkey := writeS3(t, dest, "inv/", s3Report{Source: "src", Time: report, Format: "CSV", Rows: []s3Row{{Key: "ns/" + key, Size: 3, Mod: start}}})
	rep, err := OpenS3(ctx, dest, mkey, "s3://src/ns", WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	in := func() sweep.Inputs { return sweep.Inputs{Uncommitted: seq(nil), Committed: seq(nil), ExportStart: now} }
	opts := []sweep.MarkOption{sweep.WithClock(func() time.Time { return now }), sweep.WithTempDir(t.TempDir())}
	runL, runI := xid.New().String(), xid.New().String()
	if _, err := sweep.Mark(ctx, store, runL, in(), opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Mark(ctx, store, runI, in(), append(opts, sweep.WithInventory(rep))...); err != nil {
		t.Fatal(err)
	}
	candL, candI := candidates(t, store, runL), candidates(t, store, runI)
	if len(candL) != 0 {
		t.Fatalf("LIST marks %q", candL)
	}
	if slices.Contains(candI, key) {
		t.Fatalf("inventory marks %q, young in the store (written after the report)", key)
	}
}
