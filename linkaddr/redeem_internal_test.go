package linkaddr

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemRedeemerMemoryBounded redeems many addresses that are already past
// their until, mixed with live ones, and checks that the map stays bounded by
// the live records while every live record is kept.
func TestMemRedeemerMemoryBounded(t *testing.T) {
	r := NewMemRedeemer().(*memRedeemer)
	ctx := context.Background()
	const liveCount = 3000
	n := 60_000
	if testing.Short() {
		n = 12_000
	}
	live := time.Now().Add(time.Hour)
	dead := time.Now().Add(-time.Second)
	peak := 0
	for i := range n {
		until, address := dead, fmt.Sprintf("dead/%d", i)
		if i%(n/liveCount) == 0 {
			until, address = live, fmt.Sprintf("live/%d", i)
		}
		if first, err := r.Redeem(ctx, address, until); err != nil || !first {
			t.Fatalf("Redeem(%q) = %v, %v", address, first, err)
		}
		peak = max(peak, len(r.until))
	}
	if bound := 2*(liveCount+1) + minSweep; peak > bound {
		t.Fatalf("peak of %d records for %d live ones; want at most %d", peak, liveCount, bound)
	}
	for i := 0; i < n; i += n / liveCount {
		address := fmt.Sprintf("live/%d", i)
		if first, err := r.Redeem(ctx, address, live); err != nil || first {
			t.Fatalf("live record %q was forgotten", address)
		}
	}
}
