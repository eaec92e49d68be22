package metarange

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRangeCacheProbesAsTablesDo: a range with more outside tails than
// the prober samples (64) stops a run served from its cache exactly when
// it stops a run reading its table: when one of the first 64 distinct
// tails is an object of the namespace, not when a later one is; and an
// address longer than a cache's key bound (its tail short) takes its
// place in the sample from the cache as from the table.
func TestRangeCacheProbesAsTablesDo(t *testing.T) {
	ctx := context.Background()
	tail := func(i int) string { return fmt.Sprintf("data/h6ce3g624eave3i%04dg/c2r2is7s9gbrjaemnik0", i) }
	long := "s3://imports/" + strings.Repeat("x/", maxCacheKey/2+1)
	for _, c := range []struct {
		name     string
		prefix   []string // addresses before the tails
		live     int      // the tail that is an object of the namespace
		mismatch bool
	}{
		{"early", nil, 10, true},
		{"last sampled", nil, 63, true},
		{"past the sample", nil, 80, false},
		{"a long address first", []string{long + tail(200)}, 200, true},
		{"a long address first, past the sample", []string{long + tail(200)}, 63, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := newFixtureRepo(t, lakeFSOptions)
			var entries []fixtureEntry
			for i, a := range c.prefix {
				entries = append(entries, fixtureEntry{fmt.Sprintf("a%03d", i), a, full})
			}
			for i := range 100 {
				entries = append(entries, fixtureEntry{fmt.Sprintf("b%03d", i), "s3://imports/x/" + tail(i), full})
			}
			m := repo.addMetaRange(repo.addRange(entries))
			// The first run writes the cache, before the tail exists.
			if _, st, err := collect(ctx, repo.bucket, []string{m}, WithRangeCache()); err != nil || st.Cache.Misses != 1 {
				t.Fatalf("%+v, %v", st.Cache, err)
			}
			if err := repo.bucket.WriteAll(ctx, tail(c.live), []byte("live"), nil); err != nil {
				t.Fatal(err)
			}
			for _, opts := range [][]Option{nil, {WithRangeCache()}} {
				_, st, err := collect(ctx, repo.bucket, []string{m}, opts...)
				if got := errors.Is(err, ErrNamespaceMismatch); got != c.mismatch || err != nil && !got {
					t.Errorf("options %d (cache hits %d): %v, want a mismatch: %v", len(opts), st.Cache.Hits, err, c.mismatch)
				}
			}
		})
	}
}
