package sweep

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// sortSlots sorts the slots of a block by their keys in arena, which share
// their first depth bytes. It sorts by eight bytes at a time, loaded once per
// key into the slot (most-significant-digit first): keys of one folder share
// long prefixes, which a comparison sort would compare again and again
// through the arena. Groups of keys still equal go on eight bytes further;
// past maxRadixDepth, or for a few keys, the rest is compared directly.
func sortSlots(a []slot, arena []byte, depth int) {
	for len(a) > 1 {
		if len(a) <= 16 || depth >= maxRadixDepth {
			slices.SortFunc(a, func(x, y slot) int {
				return bytes.Compare(arena[int(x.off)+depth:x.off+x.n], arena[int(y.off)+depth:y.off+y.n])
			})
			return
		}
		same := true
		for i := range a {
			a[i].pfx = load8(arena[int(a[i].off)+depth : a[i].off+a[i].n])
			same = same && a[i].pfx == a[0].pfx && int(a[i].n)-depth > 8
		}
		if same {
			depth += 8
			continue
		}
		slices.SortFunc(a, func(x, y slot) int {
			if x.pfx != y.pfx {
				if x.pfx < y.pfx {
					return -1
				}
				return 1
			}
			return rank(x, depth) - rank(y, depth)
		})
		// Keys that end within these eight bytes are equal to those of their
		// group and length; the others go on.
		for i := 0; i < len(a); {
			j := i + 1
			for j < len(a) && a[j].pfx == a[i].pfx && rank(a[j], depth) == rank(a[i], depth) {
				j++
			}
			if j-i > 1 && rank(a[i], depth) > 8 {
				sortSlots(a[i:j], arena, depth+8)
			}
			i = j
		}
		return
	}
}

// maxRadixDepth bounds the recursion of sortSlots.
const maxRadixDepth = 256

// rank orders keys with equal eight bytes at depth: a key that ends there
// sorts before a longer one (its missing bytes load as zero).
func rank(s slot, depth int) int { return min(int(s.n)-depth, 9) }

// load8 returns the first eight bytes of b, big-endian, padded with zeros.
func load8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var v uint64
	for i, c := range b {
		v |= uint64(c) << (56 - 8*i)
	}
	return v
}
