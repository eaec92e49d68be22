package extsort

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// advBytes are the bytes the adversarial keys differ by: pairs one bit
// apart at a byte's lowest bit (0x00/0x01, 0x30/0x31, 0xfe/0xff) and at
// its highest (0x7f/0x80), so that where keys differ the highest differing
// bit is often a byte's first or last.
var advBytes = []byte{0x00, 0x01, 0x30, 0x31, 0x7f, 0x80, 0xfe, 0xff}

// randTemplateKeys returns n keys made from one template of a random
// length (often a multiple of eight, give or take one): each copies the
// template, changes a few bytes at a few positions (the same few for all
// keys, so that large groups share every byte but those) to bytes of
// advBytes, and is cut at a random length near an eight-byte boundary or
// kept whole, so that groups of more than 32 keys share bytes within an
// eight-byte word and differ at one bit, keys end exactly at a word's end,
// are prefixes of others, are empty or repeat.
func randTemplateKeys(r *rand.Rand, n int) [][]byte {
	tl := 8*r.IntN(6) + r.IntN(3) - 1
	tl = max(tl, 0) + 8*r.IntN(2)
	tmpl := make([]byte, tl)
	for i := range tmpl {
		tmpl[i] = advBytes[r.IntN(len(advBytes))]
	}
	var pos []int
	if tl > 0 {
		for range 1 + r.IntN(3) {
			pos = append(pos, r.IntN(tl))
		}
	}
	keys := make([][]byte, 0, n)
	for range n {
		if len(keys) > 0 && r.IntN(10) == 0 {
			keys = append(keys, slices.Clone(keys[r.IntN(len(keys))]))
			continue
		}
		k := slices.Clone(tmpl)
		for _, p := range pos {
			if r.IntN(3) != 0 {
				k[p] = advBytes[r.IntN(len(advBytes))]
			}
		}
		switch r.IntN(5) {
		case 0:
			k = k[:r.IntN(len(k)+1)]
		case 1:
			k = k[:max(0, min(len(k), 8*r.IntN(len(k)/8+1)+r.IntN(3)-1))]
		case 2:
			k = append(k, advBytes[r.IntN(len(advBytes))])
		}
		keys = append(keys, k)
	}
	return keys
}

// TestSortSlotsAdversarial checks sortSlots against bytes.Compare on
// template keys (randTemplateKeys), in groups of every size around the
// insertion sort's and the radix sort's thresholds.
func TestSortSlotsAdversarial(t *testing.T) {
	sizes := []int{2, 3, 16, 17, 32, 33, 34, 64, 65, 200, 1000, 4000}
	for seed := range uint64(600) {
		r := rand.New(rand.NewPCG(seed, 71))
		n := sizes[int(seed)%len(sizes)]
		checkSortSlots(t, randTemplateKeys(r, n), fmt.Sprintf("seed %d, %d keys", seed, n))
	}
}

// TestSortPfxAdversarial checks sortPfx alone against a sort of the
// eight-byte words, on words that share bytes but at one or two positions,
// differing there by one bit: the pass that skips shared bytes must go on
// at the right byte.
func TestSortPfxAdversarial(t *testing.T) {
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 72))
		base := r.Uint64()
		top := 8 * r.IntN(8) // the byte sortPfx starts at: shared above
		n := 33 + r.IntN(300)
		a := make([]slot, n)
		p1, p2 := r.IntN(8), r.IntN(8)
		for i := range a {
			v := base
			for _, p := range []int{p1, p2} {
				if 8*p > top || r.IntN(2) == 0 {
					continue
				}
				b := advBytes[r.IntN(len(advBytes))]
				v = v&^(0xff<<(8*p)) | uint64(b)<<(8*p)
			}
			a[i] = slot{pfx: v}
		}
		want := make([]uint64, n)
		for i := range a {
			want[i] = a[i].pfx
		}
		slices.Sort(want)
		sortPfx(a, top)
		for i := range a {
			if a[i].pfx != want[i] {
				t.Fatalf("seed %d, %d words from byte %d: word %d is %016x, want %016x", seed, n, top/8, i, a[i].pfx, want[i])
			}
		}
	}
}

// TestSorterAdversarial runs the Sorter (block, spills, merge, and the
// in-memory stream when nothing spills) on template keys and compares
// with a sorted, deduplicated copy.
func TestSorterAdversarial(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 73))
		keys := randTemplateKeys(r, 1+r.IntN(5000))
		dir, err := NewSpillDir(t.TempDir(), 256)
		require.NoError(t, err)
		s := NewSorter(dir, 4096<<r.IntN(9), 2+r.IntN(3))
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
		s.Release()
		require.NoError(t, dir.Remove())
	}
}
