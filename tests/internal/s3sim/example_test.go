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

func ExampleStore_AddInventory() {
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := s3sim.New([]s3sim.Slice{{Prefix: "repo/data/a/", Count: 2500, ModTime: old, Size: 10}},
		s3sim.WithLatency(s3sim.NoLatency))
	if err != nil {
		panic(err)
	}
	inv, err := store.AddInventory(s3sim.InventoryConfig{
		SourceBucket: "lake", DestinationPrefix: "inventory", ConfigID: "gc",
		Time: old.Add(24 * time.Hour), Format: s3sim.InventoryCSV, ObjectsPerFile: 1000,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(inv.ManifestKey)
	fmt.Println(inv.Rows, "rows in", len(inv.Files), "files")
	// Output:
	// inventory/lake/gc/2026-01-02T00-00Z/manifest.json
	// 2500 rows in 3 files
}

func ExampleStore_Serve() {
	ctx := context.Background()
	store, err := s3sim.New([]s3sim.Slice{{Prefix: "data/a/", Count: 1500, Size: 10}}, s3sim.WithLatency(s3sim.NoLatency))
	if err != nil {
		panic(err)
	}
	srv, err := store.Serve("lake")
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	bucket, err := srv.OpenBucket(ctx) // s3blob and the AWS SDK over loopback HTTP
	if err != nil {
		panic(err)
	}
	defer bucket.Close()
	n := 0
	for it := bucket.List(nil); ; n++ {
		if _, err := it.Next(ctx); err != nil {
			break
		}
	}
	fmt.Println(n, "objects in", store.Stats().ListPages, "pages")
	// Output: 1500 objects in 2 pages
}
