package s3sim_test

import (
	"context"
	"fmt"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

func ExampleNew() {
	ctx := context.Background()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := s3sim.New([]s3sim.Slice{
		{Prefix: "data/a/", Count: 2500, ModTime: old, Size: 10},
		{Prefix: "data/b/", Count: 500, ModTime: old, Size: 10},
	}, s3sim.WithLatency(time.Millisecond))
	if err != nil {
		panic(err)
	}
	bucket := store.Bucket()
	defer bucket.Close()

	n := 0
	it := bucket.List(&blob.ListOptions{Prefix: "data/"})
	for {
		if _, err := it.Next(ctx); err != nil {
			break
		}
		n++
	}
	fmt.Println(n, "objects in", store.Stats().ListPages, "pages")
	// Output: 3000 objects in 3 pages
}
