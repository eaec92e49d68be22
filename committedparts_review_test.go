package lakegc

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/sweep"
)

// TestPartBufferRoundTrip: a part buffer yields exactly the addresses added
// to it, in their order, whatever they are: empty, equal to the one before,
// extending it or a prefix of it, out of order, and long enough (over 32
// KiB, over 64 KiB) that a decode batch ends inside or right after them.
func TestPartBufferRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 3))
	dropped := 0
	const steps = 300
	for step := range steps {
		var in []string
		prev := ""
		for range r.IntN(400) {
			var a string
			switch r.IntN(8) {
			case 0:
				a = ""
			case 1:
				a = prev
			case 2:
				a = prev + strings.Repeat("x", r.IntN(3))
			case 3:
				a = prev[:r.IntN(len(prev)+1)]
			case 4:
				n := []int{32<<10 - 1, 32 << 10, 32<<10 + 1, 64 << 10, r.IntN(64 << 10)}[r.IntN(5)]
				if r.IntN(1000) == 0 {
					n = partAddressMax + 1 // the buffer is dropped
				}
				a = strings.Repeat(string(rune('a'+r.IntN(3))), n)
			default:
				a = prev[:r.IntN(len(prev)+1)] + strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(300))
			}
			in = append(in, a)
			prev = a
		}
		pool := &partBuffers{part: 1 << 30}
		pool.free.Store(1 << 30)
		b := partBuffer{pool: pool}
		for _, a := range in {
			b.add(a)
		}
		var got []string
		for a := range b.addresses() {
			got = append(got, a)
		}
		if b.over {
			dropped++
			// Dropped: the part is read again, nothing is yielded from here.
			if len(got) != 0 {
				t.Fatalf("step %d: a dropped buffer yields %d addresses", step, len(got))
			}
		} else if !slices.Equal(got, in) {
			t.Fatalf("step %d: %d addresses yielded, %d added, or different", step, len(got), len(in))
		}
		b.release()
		if pool.free.Load() != 1<<30 {
			t.Fatalf("step %d: %d bytes not given back", step, 1<<30-pool.free.Load())
		}
	}
	if dropped == 0 || dropped > steps/2 {
		t.Errorf("%d of %d buffers dropped: the generator misses cases", dropped, steps)
	}
	t.Logf("%d of %d buffers dropped", dropped, steps)
}

// TestPartKeysDecodeBounded: what partKeys allocates besides its buffer's
// reservation is a decode batch, whatever the part holds: a part of a
// million empty addresses (invalid, the mark fails it at its second key)
// or one of an address of 3 MiB (invalid too: over 64 KiB) costs no more
// than its front-coded size, twice (the buffer grows by doubling), and
// 1 MiB.
func TestPartKeysDecodeBounded(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		addrs []string
	}{
		{"empty addresses", make([]string, 1<<20)},
		{"a long address", []string{"data/a", "data/" + strings.Repeat("b", 3<<20), "data/c"}},
	} {
		LimitPartBuffers(t, 8<<20, 64<<20)
		tp := &testParts{parts: map[string][]string{"p": tc.addrs}, opens: map[string]int{}}
		c := testCycle(t)
		pool := newPartBuffers(0)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := 0
		for _, err := range c.partKeys(ctx, &sweep.Parts{Open: tp.open}, "p", pool) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break // as the mark does at a key not above the one before
			}
		}
		runtime.ReadMemStats(&after)
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		if bound := 2*frontCodedSize(tc.addrs) + 1<<20; alloc > bound {
			t.Errorf("%s: %d bytes allocated reading 2 keys, over %d", tc.name, alloc, bound)
		}
		t.Logf("%s: %d bytes allocated reading 2 keys, %d front-coded", tc.name, alloc, frontCodedSize(tc.addrs))
		if pool.free.Load() != 64<<20 {
			t.Errorf("%s: %d bytes not given back", tc.name, 64<<20-pool.free.Load())
		}
	}
}
