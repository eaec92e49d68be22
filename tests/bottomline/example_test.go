package main

import (
	"context"
	"fmt"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// Example runs a small bottom line and prints what the cycle did.
func Example() {
	res, err := run(context.Background(), Scale{Objects: 20_000, Slices: 4, Branches: 10, Commits: 120}, Options{
		Latency: s3sim.NoLatency, MemoryBudget: 1 << 20,
		ListConcurrency: defaultListConcurrency, DeleteConcurrency: defaultDeleteConcurrency,
	})
	if err != nil {
		panic(err)
	}
	r := res.Report
	fmt.Println("exported", r.Export.Rows, "listed", r.Mark.Listed, "deleted", r.Sweep.Deleted,
		"in", res.Total.Requests.DeleteBatches, "batches")
	// Output: exported 5000 listed 20000 deleted 1000 in 1 batches
}
