package sweep_test

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// failingInventory yields its objects, then its error.
type failingInventory struct {
	at      time.Time
	objects []sweep.InventoryObject
	err     error
}

func (f failingInventory) Time() time.Time { return f.at }
func (f failingInventory) Source() string  { return "test://failing" }
func (f failingInventory) Objects(context.Context) iter.Seq2[sweep.InventoryObject, error] {
	return func(yield func(sweep.InventoryObject, error) bool) {
		for _, o := range f.objects {
			if !yield(o, nil) {
				return
			}
		}
		if f.err != nil {
			yield(sweep.InventoryObject{}, f.err)
		}
	}
}

func noKeys(yield func(string, error) bool) {}

// A report that fails after some rows fails the mark, which writes no
// candidates and a summary that says it failed; a report without a time
// is refused before anything is listed.
func TestMarkInventoryFailures(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b := memblob.OpenBucket(nil)
	defer b.Close()
	old := now.Add(-5 * 24 * time.Hour)
	slice := layout.DescendingID(old).String()
	objs := []sweep.InventoryObject{{Key: "data/" + slice + "/" + layout.DescendingID(old).String(), Size: 1, ModTime: old}}
	in := sweep.Inputs{Uncommitted: noKeys, Committed: noKeys, ExportStart: now}
	opts := []sweep.MarkOption{sweep.WithClock(func() time.Time { return now }), sweep.WithTempDir(t.TempDir())}

	boom := errors.New("report cut")
	run := layout.NewRunID(now)
	_, err := sweep.Mark(ctx, b, run, in, append(opts, sweep.WithInventory(failingInventory{at: now.Add(-time.Hour), objects: objs, err: boom}))...)
	if !errors.Is(err, boom) {
		t.Fatalf("mark with a failing report: %v", err)
	}
	sum, err := sweep.ReadSummary(ctx, b, "", run)
	if err != nil || sum.Success || sum.NumDeletedObjects != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if _, err := sweep.Mark(ctx, b, layout.NewRunID(now.Add(time.Second)), in, append(opts, sweep.WithInventory(failingInventory{objects: objs}))...); !errors.Is(err, sweep.ErrInvalidInput) {
		t.Fatalf("mark with a report without a time: %v", err)
	}
	// A report dated after the mark's start, beyond the clock skew, is
	// refused: it cannot hold what the store holds now.
	if _, err := sweep.Mark(ctx, b, layout.NewRunID(now.Add(3*time.Second)), in, append(opts, sweep.WithInventory(failingInventory{at: now.Add(sweep.DefaultClockSkew + 2*time.Second), objects: objs}))...); !errors.Is(err, sweep.ErrInvalidInput) {
		t.Fatalf("mark with a report from the future: %v", err)
	}
	// The same report without its error: the object is a candidate.
	run = layout.NewRunID(now.Add(2 * time.Second))
	sum2, err := sweep.Mark(ctx, b, run, in, append(opts, sweep.WithInventory(failingInventory{at: now.Add(-time.Hour), objects: objs}))...)
	if err != nil || sum2.NumDeletedObjects != 1 || sum2.SlicesSkipped != 0 || sum2.InventoryObjects != 1 {
		t.Fatalf("summary %+v, %v", sum2, err)
	}
}

// A report that names a key twice (rows repeated across its files) marks
// it once, and keeps it when any of its rows is young, as a listing that
// returned a key twice would; keys of the slices the report does not cover
// (newer than its time less the margin), of the top level and of the data
// folder's loose objects are the store's to list: the report's are
// ignored.
func TestMarkInventoryRepeatsAndPlaces(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b := memblob.OpenBucket(nil)
	defer b.Close()
	old := now.Add(-5 * 24 * time.Hour)
	slice := "data/" + layout.DescendingID(old).String() + "/"
	twiceOld := slice + layout.DescendingID(old.Add(time.Second)).String()
	oldAndYoung := slice + layout.DescendingID(old.Add(2*time.Second)).String()
	at := now.Add(-26 * time.Hour) // report time: the boundary is 51 h ago with the defaults
	recent := now.Add(-48 * time.Hour)
	newer := "data/" + layout.DescendingID(recent).String() + "/" + layout.DescendingID(recent).String()
	objs := []sweep.InventoryObject{
		{Key: twiceOld, Size: 1, ModTime: old},
		{Key: oldAndYoung, Size: 1, ModTime: old},
		{Key: newer, Size: 1, ModTime: recent},
		{Key: layout.DescendingID(old).String(), Size: 1, ModTime: old},
		{Key: "data/" + layout.DescendingID(old).String(), Size: 1, ModTime: old},
		{Key: twiceOld, Size: 1, ModTime: old},
		{Key: oldAndYoung, Size: 1, ModTime: now.Add(-time.Hour)},
	}
	in := sweep.Inputs{Uncommitted: noKeys, Committed: noKeys, ExportStart: now}
	run := layout.NewRunID(now)
	sum, err := sweep.Mark(ctx, b, run, in, sweep.WithClock(func() time.Time { return now }), sweep.WithTempDir(t.TempDir()),
		sweep.WithInventory(failingInventory{at: at, objects: objs}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, err := range sweep.Candidates(ctx, b, "_lakefs", run) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	if len(got) != 1 || got[0] != twiceOld || sum.NumDeletedObjects != 1 || sum.InventoryObjects != int64(len(objs)) {
		t.Fatalf("candidates %q, summary %+v", got, sum)
	}
}

// A quarantine's manifest part that cannot be read fails a mark from an
// inventory, which keeps what quarantines moved since the report (a
// restore may have put it back): it cannot tell what was moved.
func TestMarkInventoryBadQuarantinePart(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	part := layout.QuarantinePath("_lakefs", layout.NewRunID(now.Add(-time.Hour))) + layout.QuarantineManifest + "1-000001.json"
	if err := b.WriteAll(ctx, part, []byte(`{"addresses":`), nil); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-5 * 24 * time.Hour)
	objs := []sweep.InventoryObject{{Key: "data/" + layout.DescendingID(old).String() + "/" + layout.DescendingID(old).String(), Size: 1, ModTime: old}}
	in := sweep.Inputs{Uncommitted: noKeys, Committed: noKeys, ExportStart: now}
	_, err := sweep.Mark(ctx, b, layout.NewRunID(now), in, sweep.WithClock(func() time.Time { return now }), sweep.WithTempDir(t.TempDir()),
		sweep.WithInventory(failingInventory{at: now.Add(-time.Hour), objects: objs}))
	if !errors.Is(err, sweep.ErrInvalidInput) {
		t.Fatalf("mark with a broken quarantine part: %v", err)
	}
}
