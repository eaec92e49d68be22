package extsort

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSorter compares the external sort with slices.Sort on random keys,
// budgets and fan-ins; every other seed's sorter keeps repeats
// (NewRepeatSorter), whose stream must be every key added, repeats too.
func TestSorter(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		dir, err := NewSpillDir(t.TempDir(), 512)
		require.NoError(t, err)
		repeats := seed%2 == 1
		s := NewSorter(dir, 1024<<r.IntN(6), 2+r.IntN(4))
		if repeats {
			s = NewRepeatSorter(dir, 1024<<r.IntN(6), 2+r.IntN(4))
		}
		var want []string
		for range r.IntN(1500) {
			k := strconv.Itoa(r.IntN(2000)) + string(make([]byte, r.IntN(40)))
			if r.IntN(50) == 0 {
				k = string(bytes.Repeat([]byte("L"), 600)) // larger than a block
			}
			want = append(want, k)
			require.NoError(t, s.Add([]byte(k)))
			require.LessOrEqual(t, s.Size(), s.maxBytes, "block beyond its budget")
		}
		slices.Sort(want)
		if !repeats {
			want = slices.Compact(want)
		}
		it, err := s.Finish()
		require.NoError(t, err)
		got := drainKeys(t, it)
		require.Equal(t, len(want), len(got))
		require.Equal(t, want, got)
		runs, err := filepath.Glob(filepath.Join(dir.dir, "run-*"))
		require.NoError(t, err)
		require.Empty(t, runs, "runs are removed once read")
		require.NoError(t, dir.Remove())
	}
}

// drainKeys reads it to its end, closes it, and returns its keys.
func drainKeys(t testing.TB, it Iter) []string {
	t.Helper()
	var got []string
	for {
		k, ok, err := it.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, string(k))
	}
	require.NoError(t, it.Close())
	return got
}

// TestSortSlots compares the block sort with slices.Sort on keys that share
// long prefixes, end inside each other's bytes and hold zero bytes, so that
// every branch of the radix sort (equal eight bytes, keys ending within them,
// the fallback past its depth) meets keys that tell them apart.
func TestSortSlots(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		prefix := bytes.Repeat([]byte{'p'}, r.IntN(3)*150)
		var arena []byte
		var slots []slot
		var want []string
		for range r.IntN(3000) {
			k := append([]byte(nil), prefix[:r.IntN(len(prefix)+1)]...)
			for range r.IntN(20) {
				k = append(k, []byte{0, 1, 'a', 255}[r.IntN(4)])
			}
			slots = append(slots, slot{off: uint32(len(arena)), n: uint32(len(k))})
			arena = append(arena, k...)
			want = append(want, string(k))
		}
		sortSlots(slots, arena, 0)
		got := make([]string, len(slots))
		for i, s := range slots {
			got[i] = string(arena[s.off : s.off+s.n])
		}
		slices.Sort(want)
		require.Equal(t, want, got, "seed %d", seed)
	}
}

// TestSortSlotsParallel sorts a block large enough for its groups to be
// sorted on several goroutines.
func TestSortSlotsParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var arena []byte
	var slots []slot
	var want []string
	for range 4 * parallelGroup * 4 {
		k := fmt.Appendf(nil, "data/%c/o%07d", 'a'+r.IntN(3), r.IntN(1e6))
		slots = append(slots, slot{off: uint32(len(arena)), n: uint32(len(k))})
		arena = append(arena, k...)
		want = append(want, string(k))
	}
	sortSlots(slots, arena, 0)
	got := make([]string, len(slots))
	for i, s := range slots {
		got[i] = string(arena[s.off : s.off+s.n])
	}
	slices.Sort(want)
	require.Equal(t, want, got)
}

// TestSorterBlockFitsOffsets checks that a huge budget cannot make a block
// whose arena outgrows the 32-bit offsets of its index.
func TestSorterBlockFitsOffsets(t *testing.T) {
	s := NewSorter(nil, 1<<40, 2)
	require.LessOrEqual(t, s.maxBytes, math.MaxUint32)
}
