package sweep

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShardsKeepDataFolderWall: another repository's storage folder right
// under the data folder walls the whole data folder; every shard of a
// sharded mark honours it, not only the shard that lists the folders that
// are not slices.
func TestShardsKeepDataFolderWall(t *testing.T) {
	ctx := context.Background()
	var keys []string
	for s := range 4 {
		keys = append(keys, "data/"+descendingName(t0.Add(-time.Duration(100+s)*time.Hour))+"/"+objID(s))
	}
	keys = append(keys, "data/_lakefs/dummy", "data/x")
	b := oldBucket(t, keys)
	for j, opt := range []MarkOption{WithInclude("data/"), anyKey} {
		sum, err := Mark(ctx, b, fmt.Sprint("whole-", j), noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), opt)
		require.NoError(t, err)
		require.Zero(t, sum.NumDeletedObjects)
		for i := range 3 {
			sum, err := Mark(ctx, b, fmt.Sprint("shard-", j, "-", i), noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithShard(i, 3), opt)
			require.NoError(t, err)
			require.Zero(t, sum.NumDeletedObjects, "shard %d", i)
			require.Equal(t, []string{"data/"}, sum.Walls, "shard %d", i)
		}
	}
}
