package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
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

// TestSlicesAsMade: a slice count that does not divide the objects makes
// fewer, fuller slices, and the result says how many; no latency prints as
// 0s, not as s3sim.NoLatency's -1ns.
func TestSlicesAsMade(t *testing.T) {
	res, err := run(context.Background(), Scale{Objects: 200, Slices: 150, Branches: 1, Commits: 12},
		Options{Latency: s3sim.NoLatency, MemoryBudget: 1 << 20, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Host.slices); res.Scale.Slices != n || !strings.Contains(printed(res), fmt.Sprintf("slices %d,", n)) ||
		!strings.Contains(printed(res), "latency 0s,") {
		t.Fatalf("Scale.Slices = %d, %d slices made; printed:\n%s", res.Scale.Slices, n, printed(res))
	}
}
