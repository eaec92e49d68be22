package copytrack_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lakegc/lakegc/copytrack"
)

// Example tracks the copy step of a rename, lists the address a GC must keep,
// and drops the record once the TTL has passed.
func Example() {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tracker, err := copytrack.New(copytrack.NewMemStore(),
		copytrack.WithTTL(6*time.Hour),
		copytrack.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}

	// Renaming a.csv to b.csv: stage the copy, track it, then delete a.csv.
	err = tracker.Track(ctx, copytrack.Copy{
		Repository: "repo1", Branch: "main", SrcPath: "a.csv", DstPath: "b.csv",
		PhysicalAddress: "data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0",
	})
	if err != nil {
		panic(err)
	}

	// The uncommitted export appends these after scanning every branch.
	for addr, err := range tracker.Addresses(ctx, "repo1") {
		if err != nil {
			panic(err)
		}
		fmt.Println("keep", addr)
	}

	now = now.Add(7 * time.Hour)
	removed, err := tracker.Expire(ctx, "repo1")
	fmt.Println("expired", removed, err)
	// Output:
	// keep data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0
	// expired 1 <nil>
}

// ExampleTracker_List shows that records of other repositories, even one
// whose name starts with this one's, stay out of a listing.
func ExampleTracker_List() {
	ctx := context.Background()
	tracker, err := copytrack.New(copytrack.NewMemStore())
	if err != nil {
		panic(err)
	}
	for _, c := range []copytrack.Copy{
		{Repository: "a", Branch: "main", SrcPath: "x", DstPath: "y", PhysicalAddress: "data/1"},
		{Repository: "a/b", Branch: "main", SrcPath: "x", DstPath: "y", PhysicalAddress: "data/2"},
		{Repository: "a", Branch: "dev", SrcPath: "p", DstPath: "q", PhysicalAddress: "data/3"},
	} {
		if err := tracker.Track(ctx, c); err != nil {
			panic(err)
		}
	}
	for c, err := range tracker.List(ctx, "a") {
		if err != nil {
			panic(err)
		}
		fmt.Println(c.Branch, c.SrcPath, "->", c.DstPath, c.PhysicalAddress)
	}
	// Output:
	// main x -> y data/1
	// dev p -> q data/3
}
