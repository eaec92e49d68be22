package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// churn is what changes between the first cycle and the second, a
// fraction c of the namespace each way:
//   - c of the first cycle's live objects become garbage: every n-th
//     staged object is unstaged, n being 19/(20c) rounded, and as many
//     committed objects (1 in n) leave the commits, a contiguous region of
//     their logical paths, as a rewrite of a table's partition drops them
//     (the commits that held them expire): the committed objects q from
//     dropLo to dropHi − 1, a third of the way into the tree;
//   - c·Objects new objects (a multiple of 20) arrive in new slices, started
//     an hour apart after the newest slice of the first cycle and as old as
//     their start (the synthetic namespace's clock runs 90 days behind),
//     in the first cycle's proportions: 1 in 20 garbage (referenced by
//     nothing), 5 staged, 14 in the branches' heads, in the rewritten
//     region's logical paths (so only the ranges that overlap it change;
//     see rangeDesc);
//   - lateObjects objects are uploaded late into the newest slices of the
//     first cycle (written to the store now, so young) and staged.
//
// The sweep deletes the garbage; nothing else is deleted.
type churn struct {
	every int // staged object k is dropped when k%every == 0; 0: none
	// dropLo and dropHi bound the committed objects q dropped.
	dropLo, dropHi int
	objects        int           // new objects, in slices of the host's perSlice
	slices         []s3sim.Slice // each with its Name
	late           []string      // the late objects' keys
	h              *host
}

// lateObjects is how many objects the churn uploads late into recent
// slices.
const lateObjects = 10

func newChurn(h *host, c float64) (*churn, error) {
	if math.IsNaN(c) || c < 0 || c > 0.5 {
		return nil, fmt.Errorf("churn %v: between 0 and 0.5", c)
	}
	ch := &churn{h: h}
	if c > 0 {
		ch.every = max(1, int(math.Round(float64(period-garbagePer)/(period*c))))
		ch.objects = max(period, int(math.Round(c*float64(h.sc.Objects)/period))*period)
	}
	if d := ch.droppedOf(h.sc.committed()); d > 0 {
		ch.dropLo = (h.sc.committed() - d) / 3
		ch.dropHi = ch.dropLo + d
	}
	newest := h.now.Add(-objectAge) // the first cycle's newest slice
	for j := 0; j*h.perSlice < ch.objects; j++ {
		start := newest.Add(time.Duration(j+1) * time.Hour)
		prefix := "data/" + pathprovider.DescendingID(start).String() + "/"
		ch.slices = append(ch.slices, s3sim.Slice{Prefix: prefix, Count: min(h.perSlice, ch.objects-j*h.perSlice),
			Name: s3sim.XIDNames(prefix, start), ModTime: start, Size: 1 << 10})
	}
	for k := range lateObjects {
		s := k % min(3, len(h.slices))
		ch.late = append(ch.late, h.slices[s].Prefix+h.slices[s].Name(h.slices[s].Count+k))
	}
	return ch, nil
}

// droppedStaged reports whether the churn made staged object k garbage.
func (ch *churn) droppedStaged(k int) bool { return ch.every > 0 && k%ch.every == 0 }

// droppedCommitted reports whether the churn made committed object q
// garbage.
func (ch *churn) droppedCommitted(q int) bool { return ch.dropLo <= q && q < ch.dropHi }

// address is the key of new object n.
func (ch *churn) address(n int) string {
	j := n / ch.h.perSlice
	return ch.slices[j].Prefix + ch.slices[j].Name(n%ch.h.perSlice)
}

func newStagedPath(k int) string { return fmt.Sprintf("q/%010d", k) }
func latePath(k int) string      { return fmt.Sprintf("r/%03d", k) }

// droppedOf is how many of n objects the churn drops.
func (ch *churn) droppedOf(n int) int {
	if ch.every == 0 {
		return 0
	}
	return (n + ch.every - 1) / ch.every
}

// garbage is how many objects the churn makes garbage: the dropped and
// the new garbage.
func (ch *churn) garbage() int {
	return ch.droppedOf(ch.h.sc.staged()) + ch.droppedOf(ch.h.sc.committed()) + ch.objects/period*garbagePer
}

// apply makes the churn: the host's next cycle sees it, the store holds
// the new slices and the late objects.
func (ch *churn) apply(ctx context.Context, store *s3sim.Store) error {
	if err := store.Add(ch.slices...); err != nil {
		return err
	}
	b := store.Bucket()
	defer b.Close()
	for _, k := range ch.late {
		if err := b.WriteAll(ctx, k, make([]byte, 1<<10), nil); err != nil {
			return err
		}
	}
	ch.h.ch = ch
	if ch.h.tables {
		// The commits that rewrote the region wrote its new ranges.
		return ch.h.writeTables(ctx, store)
	}
	return nil
}

// errCheck is a store whose deletions are not the expected ones.
var errCheck = errors.New("deleted objects differ from the garbage")

// checkDeleted checks that the store lost exactly the garbage of the first
// cycle and, when ch is not nil, the churn's: every object gone is
// garbage, none live is, and every late object is there. It names at most
// a few of the wrong objects.
func checkDeleted(h *host, ch *churn, store *s3sim.Store) error {
	var gone, want, live int
	var wrong []string
	note := func(what string, g int, addr string) {
		if len(wrong) < 5 {
			wrong = append(wrong, fmt.Sprintf("%s object %d (%s)", what, g, addr))
		}
	}
	isGarbage := func(g int) bool {
		switch r := g % period; {
		case r < garbagePer:
			return true
		case ch == nil:
			return false
		case r < garbagePer+stagedPer:
			return ch.droppedStaged(g/period*stagedPer + r - garbagePer)
		default:
			return ch.droppedCommitted(g/period*committedPer + r - garbagePer - stagedPer)
		}
	}
	want = h.sc.garbage()
	pos := h.sliceOrder()
	for s := range h.slices {
		store.Gone(pos[s], func(i int) {
			g := s*h.perSlice + i
			if gone++; !isGarbage(g) {
				live++
				note("live", g, h.address(g))
			}
		})
	}
	if ch != nil {
		want = h.sc.garbage() + ch.garbage()
		for j := range ch.slices {
			store.Gone(len(h.slices)+j, func(i int) {
				n := j*h.perSlice + i
				if gone++; n%period >= garbagePer {
					live++
					note("live new", n, ch.address(n))
				}
			})
		}
		for k, key := range ch.late {
			if !store.Exists(key) {
				live++
				note("late", k, key)
			}
		}
	}
	if gone != want || live != 0 {
		return fmt.Errorf("%w: %d objects gone, %d live ones gone (or late ones missing); want the %d garbage objects and none live: %v",
			errCheck, gone, live, want, wrong)
	}
	return nil
}
