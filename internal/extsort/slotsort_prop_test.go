package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// randTreeKeys returns n keys grown from one another: each extends an
// earlier key's prefix (often cut near an eight-byte boundary) by a few bytes
// from a small alphabet with zero and 0xff, so that keys share long
// prefixes, are prefixes of others, repeat, or are empty.
func randTreeKeys(r *rand.Rand, n int) [][]byte {
	alpha := []byte{0, 1, 'a', 'b', 0xfe, 0xff}
	keys := make([][]byte, 0, n)
	for range n {
		var k []byte
		if len(keys) > 0 && r.IntN(8) != 0 {
			base := keys[r.IntN(len(keys))]
			cut := len(base)
			switch r.IntN(4) {
			case 0:
				cut = r.IntN(len(base) + 1)
			case 1:
				cut = min(len(base), (r.IntN(len(base)/8+1))*8+r.IntN(3)-1)
				cut = max(cut, 0)
			}
			k = append(k, base[:cut]...)
		}
		switch r.IntN(6) {
		case 0: // a duplicate or a prefix
		case 1:
			k = append(k, bytes.Repeat([]byte{alpha[r.IntN(len(alpha))]}, r.IntN(300))...)
		default:
			for range r.IntN(12) {
				k = append(k, alpha[r.IntN(len(alpha))])
			}
		}
		keys = append(keys, k)
	}
	return keys
}

// TestSortSlotsModel checks sortSlots against bytes.Compare on keys grown
// from each other, in blocks small and large enough to sort in parallel.
func TestSortSlotsModel(t *testing.T) {
	sizes := []int{0, 1, 2, 17, 33, 300, 5000}
	if !testing.Short() {
		sizes = append(sizes, 2*parallelGroup+100)
	}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 11))
		n := sizes[int(seed)%len(sizes)]
		checkSortSlots(t, randTreeKeys(r, n), fmt.Sprintf("seed %d, %d keys", seed, n))
	}
}

// TestSorterModel runs the Sorter (slab, spills, merge) on the same keys and
// compares with a sorted, deduplicated copy.
func TestSorterModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 13))
		keys := randTreeKeys(r, 200+r.IntN(3000))
		dir, err := NewSpillDir(t.TempDir(), 256)
		require.NoError(t, err)
		s := NewSorter(dir, 4096<<r.IntN(8), 2+r.IntN(3))
		for _, k := range keys {
			require.NoError(t, s.Add(k))
		}
		it, err := s.Finish()
		require.NoError(t, err)
		got := drainKeys(t, it)
		want := make([]string, len(keys))
		for i, k := range keys {
			want[i] = string(k)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		require.Equal(t, want, got, "seed %d", seed)
		require.NoError(t, dir.Remove())
	}
}

// checkSortSlots sorts keys with sortSlots, laid out in one arena as a
// block holds them, and fails unless the order is bytes.Compare's.
func checkSortSlots(t *testing.T, keys [][]byte, what string) {
	t.Helper()
	var arena []byte
	slots := make([]slot, 0, len(keys))
	for _, k := range keys {
		slots = append(slots, slot{off: uint32(len(arena)), n: uint32(len(k))})
		arena = append(arena, k...)
	}
	sortSlots(slots, arena, 0)
	want := slices.Clone(keys)
	slices.SortFunc(want, bytes.Compare)
	for i, s := range slots {
		if got := arena[s.off : s.off+s.n]; !bytes.Equal(got, want[i]) {
			t.Fatalf("%s: key %d is %x, want %x", what, i, got, want[i])
		}
	}
}
