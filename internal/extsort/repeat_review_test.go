package extsort

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepeatSorterLongKeys: a repeat sorter yields every key as often as it
// was added for keys whose length crosses the varint boundaries of a run
// file's entry (127/128, 16383/16384 bytes) and 64 KiB, for keys larger
// than the whole block (a run each), for repeats that straddle a spill,
// and through merges of merges (fan-in 2) and Adopt.
func TestRepeatSorterLongKeys(t *testing.T) {
	lengths := []int{1, 126, 127, 128, 129, 16383, 16384, 16385, 65535, 65536, 65537, 200 << 10}
	for seed := range uint64(3) { // one seed a block size
		r := rand.New(rand.NewPCG(seed, 77))
		dir, err := NewSpillDir(t.TempDir(), 512)
		require.NoError(t, err)
		block := []int{4 << 10, 64 << 10, 256 << 10}[seed%3]
		s := NewRepeatSorter(dir, block, 2)
		o := NewRepeatSorter(dir, block, 2)
		var want []string
		for range 60 + r.IntN(60) {
			n := lengths[r.IntN(len(lengths))]
			// Keys sharing all but their last byte with others of their length.
			k := strings.Repeat("k", n-1) + string(rune('a'+r.IntN(3)))
			reps := 1 + r.IntN(4)
			for range reps {
				want = append(want, k)
				dst := s
				if r.IntN(3) == 0 {
					dst = o
				}
				require.NoError(t, dst.Add([]byte(k)))
			}
		}
		require.NoError(t, s.Adopt(o))
		slices.Sort(want)
		it, err := s.Finish()
		require.NoError(t, err)
		got := drainKeys(t, it)
		require.Equal(t, len(want), len(got), "seed %d", seed)
		require.True(t, slices.Equal(want, got), "seed %d", seed)
	}
}
