package main

import (
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// TestFloor: a phase's floor is its requests one at a time at the latency,
// except the mark's list pages (in mark/keep, where the listing starts, as
// in mark/list) at the listing concurrency and the sweep's delete batches
// at the delete concurrency.
func TestFloor(t *testing.T) {
	r := &recorder{opts: Options{Latency: time.Millisecond, ListConcurrency: 8, DeleteConcurrency: 4}}
	q := s3sim.Stats{ListPages: 80, Gets: 3, DeleteBatches: 40}
	for _, c := range []struct {
		name string
		want time.Duration
	}{
		{lakegc.PhaseMark + "/keep", (10 + 3 + 40) * time.Millisecond},
		{lakegc.PhaseMark + "/list", (10 + 3 + 40) * time.Millisecond},
		{lakegc.PhaseSweep + "/delete", (80 + 3 + 10) * time.Millisecond},
		{lakegc.PhaseExport, (80 + 3 + 40) * time.Millisecond},
	} {
		if got := r.floor(c.name, q); got != c.want {
			t.Errorf("floor(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
