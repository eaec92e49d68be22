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
	// The same report without its error: the object is a candidate.
	run = layout.NewRunID(now.Add(2 * time.Second))
	sum2, err := sweep.Mark(ctx, b, run, in, append(opts, sweep.WithInventory(failingInventory{at: now.Add(-time.Hour), objects: objs}))...)
	if err != nil || sum2.NumDeletedObjects != 1 || sum2.SlicesSkipped != 0 || sum2.InventoryObjects != 1 {
		t.Fatalf("summary %+v, %v", sum2, err)
	}
}
