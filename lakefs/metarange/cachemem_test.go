package metarange

import (
	"fmt"
	"testing"
)

// TestCollectorMemoryBound: the memory a missed range takes while its
// cache is made — the collector's arenas and spans (their capacity, as
// allocated), the sorted slices over them and the encoded cache — stays
// within twice WithCacheMaxBytes, as the documentation says, for ranges
// just under the bound: of many short keys (where the slices dominate),
// of signed keys (two spans a key) and of long ones.
func TestCollectorMemoryBound(t *testing.T) {
	for _, c := range []struct {
		name string
		key  func(i int) string
		sum  func(i int) []byte
	}{
		{"short", func(i int) string { return fmt.Sprintf("k%d", i) }, func(int) []byte { return nil }},
		{"signed", func(i int) string { return fmt.Sprintf("data/gc5ftg2d4d2gdp2b000g/x%07d,sig", i) }, func(i int) []byte { return []byte(fmt.Sprintf("%032x", i)) }},
		{"long", func(i int) string { return fmt.Sprintf("%0200d", i) }, func(i int) []byte { return []byte{byte(i)} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			const max = 1 << 20
			col := &collector{max: max}
			var last *collector
			for i := 0; ; i++ {
				prev := *col
				col.addString(c.key(i))
				col.stat(int64(i), c.sum(i))
				if col.entryDone(); col.over {
					last = &prev
					break
				}
			}
			keys, stats := last.sorted()
			enc := encodeCache(cacheSettings{namespace: testNamespace}, rangeCounts{}, nil, keys, stats)
			held := cap(last.arena) + 16*cap(last.spans) + cap(last.sums) + 24*cap(last.stats) +
				24*cap(keys) + 32*cap(stats) + cap(enc)
			if held > 2*max {
				t.Errorf("%d keys under the bound of %d bytes hold %d bytes while encoded (%.2f×)", len(keys), max, held, float64(held)/max)
			}
		})
	}
}
