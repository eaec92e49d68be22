package main

import (
	"context"
	"testing"

	"github.com/lakegc/lakegc/examples/internal/s3sim"
)

// TestZeroConcurrency: Options without the floor's concurrency take the
// defaults (the division by them used to panic).
func TestZeroConcurrency(t *testing.T) {
	res, err := run(context.Background(), Scale{Objects: 2_000, Slices: 2, Branches: 1, Commits: 12},
		Options{Latency: s3sim.NoLatency, MemoryBudget: 1 << 20, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Sweep.Deleted != 100 {
		t.Fatalf("deleted %d, want 100", res.Report.Sweep.Deleted)
	}
}
