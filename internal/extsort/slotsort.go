package extsort

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// sortSlots sorts the slots of a block by their keys in arena, which share
// their first depth bytes. It sorts by eight bytes at a time, loaded once per
// key into the slot (most-significant-digit first): keys of one folder share
// long prefixes, which a comparison sort would compare again and again
// through the arena. Groups of keys still equal go on eight bytes further;
// past maxRadixDepth, or for a few keys, the rest is compared directly.
//
// Groups of at least parallelGroup keys are sorted on other goroutines, at
// most one per processor beyond the first.
func sortSlots(a []slot, arena []byte, depth int) {
	var p *parallel
	if n := runtime.GOMAXPROCS(0); n > 1 && len(a) >= 2*parallelGroup {
		p = &parallel{sem: make(chan struct{}, n-1)}
	}
	sortSlotsIn(a, arena, depth, p)
	if p != nil {
		p.wg.Wait()
	}
}

// parallelGroup is the least number of keys sorted on a goroutine of their
// own.
const parallelGroup = 1 << 14

// parallel bounds the goroutines of one sortSlots call.
type parallel struct {
	sem chan struct{}
	wg  sync.WaitGroup
}

// run calls f on another goroutine if one is free, else on this one.
func (p *parallel) run(n int, f func()) {
	if p != nil && n >= parallelGroup {
		select {
		case p.sem <- struct{}{}:
			p.wg.Add(1)
			go func() {
				defer func() { <-p.sem; p.wg.Done() }()
				f()
			}()
			return
		default:
		}
	}
	f()
}

func sortSlotsIn(a []slot, arena []byte, depth int, p *parallel) {
	for len(a) > 1 {
		if len(a) <= 16 || depth >= maxRadixDepth {
			slices.SortFunc(a, func(x, y slot) int {
				return bytes.Compare(arena[int(x.off)+depth:x.off+x.n], arena[int(y.off)+depth:y.off+y.n])
			})
			return
		}
		var diff uint64 // the bits where some key's eight bytes differ from the first's
		long := true    // every key goes on past these eight bytes
		for i := range a {
			a[i].pfx = load8(arena[int(a[i].off)+depth : a[i].off+a[i].n])
			diff |= a[i].pfx ^ a[0].pfx
			long = long && int(a[i].n)-depth > 8
		}
		if diff == 0 && long {
			// Skip every byte the keys share, in one pass.
			first := arena[int(a[0].off)+depth : a[0].off+a[0].n]
			cp := len(first)
			for _, s := range a[1:] {
				cp = min(cp, CommonPrefix(first[:cp], arena[int(s.off)+depth:s.off+s.n]))
			}
			depth += cp
			continue
		}
		if diff != 0 {
			sortPfx(a, (63-bits.LeadingZeros64(diff))&^7)
		}
		// Keys with equal eight bytes: those that end within them first, by
		// length (they are equal to the others of their length); the rest
		// go on.
		for i := 0; i < len(a); {
			j := i + 1
			for j < len(a) && a[j].pfx == a[i].pfx {
				j++
			}
			g := a[i:j]
			if len(g) > 1 {
				// Most groups hold long keys only, which need no ranking.
				if slices.ContainsFunc(g, func(s slot) bool { return rank(s, depth) <= 8 }) {
					slices.SortFunc(g, func(x, y slot) int { return rank(x, depth) - rank(y, depth) })
				}
				k := 0
				for k < len(g) && rank(g[k], depth) <= 8 {
					k++
				}
				rest := g[k:]
				p.run(len(rest), func() { sortSlotsIn(rest, arena, depth+8, p) })
			}
			i = j
		}
		return
	}
}

// sortPfx sorts a by pfx, whose bits above shift+8 are the same in every
// slot, a byte at a time (in place, American flag sort). A byte every slot
// shares costs one pass, as do all the shared bytes after it: the pass that
// counts a byte also notes every bit where a slot differs from the first,
// and goes on at the highest such bit (base32 or decimal names share many
// bytes within a folder).
func sortPfx(a []slot, shift int) {
	for len(a) > 32 {
		var count [256]int
		var diff uint64
		first := a[0].pfx
		for i := range a {
			count[byte(a[i].pfx>>shift)]++
			diff |= a[i].pfx ^ first
		}
		if count[byte(first>>shift)] == len(a) {
			// diff is zero from this byte up: go on at the highest bit where
			// a slot differs, if any.
			if diff &= 1<<shift - 1; diff == 0 {
				return
			}
			shift = (63 - bits.LeadingZeros64(diff)) &^ 7
			continue
		}
		var start, next [256]int
		sum := 0
		for b := range 256 {
			start[b], next[b] = sum, sum
			sum += count[b]
		}
		for b := range 256 {
			end := start[b] + count[b]
			for next[b] < end {
				v := a[next[b]]
				for d := byte(v.pfx >> shift); int(d) != b; d = byte(v.pfx >> shift) {
					a[next[d]], v = v, a[next[d]]
					next[d]++
				}
				a[next[b]] = v
				next[b]++
			}
		}
		if shift > 0 {
			for b := range 256 {
				if count[b] > 1 {
					sortPfx(a[start[b]:start[b]+count[b]], shift-8)
				}
			}
		}
		return
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].pfx < a[j-1].pfx; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
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
