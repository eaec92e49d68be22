package sweep

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// TestWriteCandidatesRefusesDisorder feeds the merge-join streams that are
// not strictly ascending: a kept key must never be marked because a stream
// broke the order the join relies on.
func TestWriteCandidatesRefusesDisorder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		list, keep []string
	}{
		{"listing goes back", []string{"data/b", "data/a"}, []string{"data/a"}},
		{"listing repeats", []string{"data/a", "data/a"}, nil},
		{"keep goes back", []string{"data/b", "data/c"}, []string{"data/c", "data/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			b := memblob.OpenBucket(nil)
			m := &marker{bucket: b, cfg: newMarkConfig(nil), dir: reportDir(DefaultStoragePrefix, "r"), cnt: &counters{}}
			_, err := m.writeCandidates(ctx, listKeep(&bufIter{keys: tc.list}, &bufIter{keys: tc.keep}))
			require.Error(t, err)
			ok, err := b.Exists(ctx, m.dir+"deleted/"+partName)
			require.NoError(t, err)
			require.False(t, ok, "candidates written")
		})
	}
}

// batchRecorder deletes through the bucket and notes the largest batch.
type batchRecorder struct {
	bucketDeleter
	mu  sync.Mutex
	max int
}

func (d *batchRecorder) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	d.mu.Lock()
	d.max = max(d.max, len(keys))
	d.mu.Unlock()
	return d.bucketDeleter.DeleteBatch(ctx, keys)
}

// TestSweepInfiniteRate checks that an infinite rate means unlimited, not
// batches of one key.
func TestSweepInfiniteRate(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 300)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	d := &batchRecorder{bucketDeleter: bucketDeleter{bucket: b}}
	res, err := Sweep(ctx, b, "run1", WithBatchDeleter(d), WithDeleteRate(math.Inf(1)))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), res.Deleted)
	require.Equal(t, len(keys), d.max)
}

// TestSweepOtherDataPrefix sweeps with a data prefix other than Mark's: the
// candidates are outside what Sweep believes Mark scanned, so every one is
// refused and nothing is deleted.
func TestSweepOtherDataPrefix(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 50)
	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), sum.NumDeletedObjects)
	res, err := Sweep(ctx, b, "run1", WithDataPrefix("objects"))
	require.NoError(t, err)
	require.Equal(t, Result{Refused: int64(len(keys))}, *res)
	for _, k := range keys {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.True(t, ok, k)
	}
}

// TestListFoldersInMemory lists small folders with no usable spill
// directory: within the pool they stay in memory and need no file; with an
// empty pool the listing needs files (the folders' keys are sorted with the
// loose objects) and fails. Either way the pool is never overdrawn.
func TestListFoldersInMemory(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 200)
	for _, pool := range []int64{1 << 20, 0} {
		dir, err := extsort.NewSpillDir(t.TempDir(), 512)
		require.NoError(t, err)
		require.NoError(t, dir.Remove()) // no file can be created
		l := newTestLister(b, dir, pool)
		if err = l.listTop(ctx); err == nil {
			err = l.listFolders(ctx)
		}
		require.GreaterOrEqual(t, l.pool.Left(), int64(0))
		if pool == 0 {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Less(t, l.pool.Left(), pool, "nothing taken from the pool")
		it, err := l.stream(1<<20, 2)
		require.NoError(t, err)
		got := drainKeys(t, it)
		require.Equal(t, keys, got)
	}
}

// TestMarkKeepsUnreadableSummary gives Mark a run ID whose summary it cannot
// parse (it says success, with a time Mark does not read): it may be a
// successful run, so Mark refuses it and leaves its report as it is.
func TestMarkKeepsUnreadableSummary(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 10)
	dir := reportDir(DefaultStoragePrefix, "run1")
	summary := []byte(`{"run_id":"run1","success":true,"cutoff_time":"yesterday","num_deleted_objects":1}` + "\n")
	require.NoError(t, b.WriteAll(ctx, dir+"summary.json", summary, nil))
	w, err := newPartWriter[addressRow](ctx, b, dir+"deleted/"+partName)
	require.NoError(t, err)
	require.NoError(t, w.Write(addressRow{Address: keys[0]}))
	require.NoError(t, w.Close())

	_, err = Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.ErrorIs(t, err, ErrInvalidInput)
	got, err := b.ReadAll(ctx, dir+"summary.json")
	require.NoError(t, err)
	require.Equal(t, summary, got)
	require.Equal(t, keys[:1], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
}

// TestSweepRateLimitsRetries checks that retried deletions go through the
// rate limit too: a store that answers SlowDown must not get the retries at
// full speed.
func TestSweepRateLimitsRetries(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 20)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	d := &flakyDeleter{b: b, calls: map[string]int{}, failures: func(_ string, call int) error {
		if call == 1 {
			return codeErr{gcerrors.ResourceExhausted}
		}
		return nil
	}}
	start := time.Now()
	res, err := Sweep(ctx, b, "run1", WithBatchDeleter(d), WithDeleteRate(20),
		WithBackoff(time.Millisecond, 10*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), res.Deleted)
	// A burst of 20 keys, then the 20 retries at 20 a second.
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
}
