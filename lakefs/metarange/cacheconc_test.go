package metarange

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
)

// TestRangeCacheConcurrentRuns: runs at once over the same fresh ranges
// (two GC runs, a Cache's Opens) all miss or hit as it falls, write the
// same caches over each other, and each gives the keys a table gives;
// every cache left checks out. Run with -race.
func TestRangeCacheConcurrentRuns(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	repo := newFixtureRepo(t, lakeFSOptions)
	var ranges []fixtureRange
	for j := range 8 {
		ranges = append(ranges, repo.addStatRange(oddEntries(rng, 50+rng.IntN(100), fmt.Sprintf("c%d", j))))
	}
	m := repo.addMetaRange(ranges...)
	tableKeys, _, err := collect(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	want := withUnsignedModel(tableKeys)
	ids, err := RangeIDs(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(repo.bucket, testNamespace, WithConcurrency(3))
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got [][]string
	)
	for i := range 4 {
		wg.Go(func() {
			var keys []string
			if i < 2 {
				k, _, err := collect(ctx, repo.bucket, []string{m}, WithRangeCache(), WithConcurrency(1+i))
				if err != nil {
					t.Error(err)
					return
				}
				keys = k
			} else {
				for _, id := range ids {
					for k, err := range c.Open(ctx, id) {
						if err != nil {
							t.Error(err)
							return
						}
						keys = append(keys, k)
					}
				}
			}
			mu.Lock()
			got = append(got, sortedSet(keys))
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, g := range got {
		if !slices.Equal(g, want) {
			t.Errorf("run %d: %d keys, want %d; first difference %q", i, len(g), len(want), firstDiff(g, want))
		}
	}
	for _, id := range ids {
		rg, _ := parseID([]byte(id))
		data, err := repo.bucket.ReadAll(ctx, lakefslayout.RangeCacheKey("_lakefs", id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseCache(data, cacheSettings{namespace: testNamespace, storagePrefix: "_lakefs", rangeID: rg}); err != nil {
			t.Errorf("range %s: the cache left: %v", id, err)
		}
	}
}
