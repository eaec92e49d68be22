package lakegc_test

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
)

// listedInventory is a report of the objects it holds, taken at a time.
type listedInventory struct {
	at      time.Time
	objects []sweep.InventoryObject
}

func (l listedInventory) Time() time.Time { return l.at }
func (l listedInventory) Source() string  { return "test://report" }
func (l listedInventory) Objects(context.Context) iter.Seq2[sweep.InventoryObject, error] {
	return func(yield func(sweep.InventoryObject, error) bool) {
		for _, o := range l.objects {
			if !yield(o, nil) {
				return
			}
		}
	}
}

// Config.Inventory reaches the mark: its summary names the report and
// counts what it read, Optimized gives way to it (a clean run, which says
// why), and the candidates are the world's garbage, which lies outside any
// slice and so is listed through the store.
func TestCollectWithInventory(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	inv := listedInventory{at: gcTime.Add(-2 * time.Hour), objects: []sweep.InventoryObject{
		{Key: "data/old/orphan", Size: 3, ModTime: gcTime.Add(-10 * 24 * time.Hour)},
		{Key: "elsewhere", Size: 1, ModTime: gcTime.Add(-10 * 24 * time.Hour)},
	}}
	cfg.Inventory = inv
	first, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The next run, asked to start from the first, is clean all the same.
	cfg.Optimized = true
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Mark.Summary
	if s.InventorySource != "test://report" || !s.InventoryTime.Equal(inv.at) || s.InventoryObjects != 2 ||
		s.RunKind != sweep.RunClean || s.PreviousRunID != first.RunID || !strings.Contains(s.CleanReason, "inventory") {
		t.Fatalf("summary %+v", s)
	}
	if got := w.candidates(rep.RunID); len(got) != len(w.garbage) {
		t.Fatalf("candidates %q, want the %d garbage objects", got, len(w.garbage))
	}
	// An option that sets the inventory is refused: the field decides it.
	cfg.Inventory, cfg.Optimized = nil, false
	cfg.MarkOptions = []sweep.MarkOption{sweep.WithInventory(inv)}
	if _, err := lakegc.Collect(context.Background(), w.host.host(), cfg); err == nil || !strings.Contains(err.Error(), "Inventory") {
		t.Fatalf("MarkOptions with WithInventory: %v", err)
	}
}
