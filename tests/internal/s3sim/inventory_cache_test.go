package s3sim

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// TestInventoryCache: concurrent ranged reads of a data file cost one
// generation while it is cached, and the cache keeps to its budget (plus
// the file last read).
func TestInventoryCache(t *testing.T) {
	ctx := context.Background()
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, format := range []InventoryFormat{InventoryCSV, InventoryParquet} {
		store, err := New([]Slice{{Prefix: "d/s/", Count: 50_000, ModTime: old, Size: 9}}, WithLatency(NoLatency), WithRates(1e9, 1e9))
		if err != nil {
			t.Fatal(err)
		}
		inv, err := store.AddInventory(InventoryConfig{SourceBucket: "b", ConfigID: "c", Format: format, ObjectsPerFile: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		store.cache.budget = 2*inv.Files[0].Size + inv.Files[0].Size/2
		b := store.Bucket()
		for _, f := range inv.Files {
			whole, err := b.ReadAll(ctx, f.Key)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range int64(8) {
				wg.Go(func() {
					off := f.Size * i / 8
					r, err := b.NewRangeReader(ctx, f.Key, off, f.Size/8+1, nil)
					if err != nil {
						t.Error(err)
						return
					}
					defer r.Close()
					var got bytes.Buffer
					if _, err := got.ReadFrom(r); err != nil || !bytes.Equal(got.Bytes(), whole[off:min(f.Size, off+f.Size/8+1)]) {
						t.Errorf("range %d of %s: %d bytes, %v", i, f.Key, got.Len(), err)
					}
				})
			}
			wg.Wait()
			if c := store.InventoryCacheBytes(); c > store.cache.budget+f.Size {
				t.Errorf("cache holds %d bytes, budget %d", c, store.cache.budget)
			}
		}
		if g := store.cache.gens.Load(); g != int64(len(inv.Files)) {
			t.Errorf("format %d: %d generations for %d files read in 9 reads each", format, g, len(inv.Files))
		}
		// The first file was evicted: reading it again generates it again.
		if _, err := b.ReadAll(ctx, inv.Files[0].Key); err != nil {
			t.Fatal(err)
		}
		if g := store.cache.gens.Load(); g != int64(len(inv.Files))+1 {
			t.Errorf("format %d: %d generations after a re-read of an evicted file", format, g)
		}
	}
}
