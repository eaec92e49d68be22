package copytrack

import (
	"context"
	"fmt"
	"testing"
)

// TestMemStoreWritesDuringScan deletes keys behind a Scan from inside its
// loop, the page's cursor first, so that a compaction drops the cursor
// before the next page is read: the scan still yields every key once, in
// order, and nothing blocks.
func TestMemStoreWritesDuringScan(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	const n = memPageSize + 100
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	for i := range n {
		if err := s.Set(ctx, key(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for kv, err := range s.Scan(ctx, []byte("k")) {
		if err != nil {
			t.Fatal(err)
		}
		if want := key(i); string(kv.Key) != string(want) {
			t.Fatalf("Scan yielded %q, want %q", kv.Key, want)
		}
		if i == memPageSize-1 {
			for j := i; j >= 0; j-- {
				if err := s.Delete(ctx, key(j)); err != nil {
					t.Fatal(err)
				}
			}
		}
		i++
	}
	if i != n {
		t.Errorf("Scan yielded %d keys, want %d", i, n)
	}
}
