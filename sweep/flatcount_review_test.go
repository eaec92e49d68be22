package sweep

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlatCountsManyRepeats: a flat keep set whose keys come many times
// each, in a keep set many times larger than the sorters' blocks (so repeats
// straddle spills and runs are merged), then a chain of optimized runs whose
// Changes add and remove repeats: after each, the candidates are exactly the
// keys whose count (given − removed) fell to 0, as a model counts them, and
// as a clean run given the same multiset marks.
func TestFlatCountsManyRepeats(t *testing.T) {
	objects := 1500
	if raceEnabled {
		objects = 600 // the race detector slows Mark about ten times
	}
	m, keys := partsWorld(t, objects)
	r := rand.New(rand.NewPCG(7, 28))
	count := map[string]int{}
	var given []string
	for _, k := range keys {
		if r.IntN(10) == 0 {
			continue // never committed: garbage from the start
		}
		count[k] = 1 + r.IntN(5)
		for range count[k] {
			given = append(given, k)
		}
	}
	opts := func(prev string) []MarkOption {
		return m.opts(WithPrevious(prev), WithCleanEvery(1000), WithMemoryBudget(16<<10))
	}
	_, err := Mark(m.ctx, m.b, "f0", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(shuffled(r, given)), ExportStart: m.now}, opts("")...)
	require.NoError(t, err)
	prev := "f0"
	for step := range 4 {
		var added, removed []string
		for _, k := range keys {
			c := count[k]
			if c > 0 && r.IntN(3) == 0 {
				n := 1 + r.IntN(c) // down to 0 now and then
				for range n {
					removed = append(removed, k)
				}
				count[k] -= n
			}
			if r.IntN(8) == 0 {
				n := 1 + r.IntN(3)
				for range n {
					added = append(added, k)
				}
				count[k] += n
			}
		}
		var want, now []string
		for _, k := range keys {
			if count[k] == 0 {
				want = append(want, k)
			}
			for range count[k] {
				now = append(now, k)
			}
		}
		id := fmt.Sprintf("f%d", step+1)
		sum, err := Mark(m.ctx, m.b, id, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(now),
			Changes: &Changes{Since: prev, Added: seqOf(shuffled(r, added)), Removed: seqOf(shuffled(r, removed))}, ExportStart: m.now}, opts(prev)...)
		require.NoError(t, err, "step %d", step)
		require.Equal(t, KeepChanges, sum.KeepSource, "step %d: %s", step, sum.CleanReason)
		got := collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, id))
		slices.Sort(got)
		require.Equal(t, want, got, "step %d", step)
		cid := "c" + id
		_, err = Mark(m.ctx, m.b, cid, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(shuffled(r, now)), ExportStart: m.now},
			m.opts(WithMemoryBudget(16<<10), WithStoragePrefix("_clean"))...)
		require.NoError(t, err)
		clean := collect(t, Candidates(m.ctx, m.b, "_clean", cid))
		slices.Sort(clean)
		require.Equal(t, want, clean, "step %d: clean", step)
		prev = id
	}
}
