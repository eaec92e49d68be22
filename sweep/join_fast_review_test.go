package sweep

import (
	"context"
	"fmt"
	"testing"

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
