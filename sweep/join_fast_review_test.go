package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// TestJoinFastPathKeepsBlockCheck, review of walk36: a committed key that
// the previous staged index holds counted 0 (a staged index that
// contradicts the committed one) and that is staged now, neither listed
// nor recounted, lies inside a block that is decoded. The walk's fast path
// for staged keys counted 0 must leave it to the block (its bound below
// the next block's first key), so that the decoded entry meets the staged
// index's and the run fails with errBadIndex; judged before the block, it
// would be recorded twice, counted 0 in the staged index and cc in the
// committed one, and the contradiction would pass unseen into the next
// run's records. Both modes of the counts (relative to the index or not).
func TestJoinFastPathKeepsBlockCheck(t *testing.T) {
	ctx := context.Background()
	for _, base := range []bool{false, true} {
		t.Run(fmt.Sprintf("base=%v", base), func(t *testing.T) {
			dir := t.TempDir()
			prevStaged := map[string]bool{"data/x": true}
			// The committed index: data/a and data/x, one block.
			index := map[string]indexEntry{"data/a": {"data/a", 1, 0}, "data/x": {"data/x", 1, idxListed}}
			cname, _, cn, _ := writePrevIndex(t, dir, index, prevStaged, 4)
			// The staged index: data/x counted 0 (listed, as the format wants
			// of an entry counted 0).
			bad := map[string]indexEntry{"data/a": {"data/a", 1, 0}, "data/x": {"data/x", 0, idxListed}}
			_, uname, _, un := writePrevIndex(t, dir, bad, prevStaged, 4)

			w := &joinWorld{carried: map[string]bool{}, countsMode: base, noCopy: true, blockN: 4}
			js := joinStreams{list: &bufIter{}, staged: &bufIter{keys: []string{"data/x"}}, counts: &bufCounts{}}
			w.prevStreams(t, &js, cname, uname, cn, un, false)
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
			m.rec = newTestRecorder(t, ctx, bucket, m.dir, 4, nil)
			_, err := m.writeCandidates(ctx, js)
			require.NoError(t, js.close())
			m.rec.abort()
			require.ErrorIs(t, err, errBadIndex)
			require.Contains(t, err.Error(), `"data/x" counted 0 in the staged index, 1 in the committed one`)
		})
	}
}

// TestJoinFastPathInOrder, review of walk36: the join judges its keys in
// ascending order, which the walls' cursor needs (layout.WallCursor answers
// only for ascending keys). A staged key that the previous staged index
// counts 0 lies past the first key of a block not yet decoded; the block
// holds a key of the previous committed index, carried, counted 0 now
// (the counts are not relative to the index), under a wall, with another
// wall between the two keys. The fast path must leave the staged key
// until the block is decoded: judged first, it moves the cursor past the
// block's key's wall, and that key, another repository's, is marked.
func TestJoinFastPathInOrder(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(36, 2))
	name := randDescendingName(r, t0.Add(-20*time.Hour))
	slice := "data/" + name + "/"
	a, b := slice+"a/x", slice+"c/x"
	dir := t.TempDir()
	index := map[string]indexEntry{a: {a, 1, idxListed}, b: {b, 0, idxListed}}
	cname, uname, cn, un := writePrevIndex(t, dir, index, nil, 4)
	w := &joinWorld{carried: map[string]bool{name: true}, blockN: 4}
	js := joinStreams{list: &bufIter{}, staged: &bufIter{keys: []string{b}}, counts: &bufCounts{}}
	w.prevStreams(t, &js, cname, uname, cn, un, false)
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := &marker{bucket: bucket, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{},
		walls: []string{slice + "a/", slice + "b/"}}
	m.rec = newTestRecorder(t, ctx, bucket, m.dir, 4, nil)
	n, err := m.writeCandidates(ctx, js)
	require.NoError(t, js.close())
	require.NoError(t, err)
	require.NoError(t, m.rec.close())
	require.Zero(t, n, "candidates")
	require.Equal(t, int64(1), m.sum.NumWalledObjects)
}
