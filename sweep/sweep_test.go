package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// writeRun writes a successful run's report by hand: a summary and the
// candidates in one part.
func writeRun(t *testing.T, b *blob.Bucket, runID string, cutoff time.Time, candidates []string) {
	t.Helper()
	ctx := context.Background()
	dir := reportDir(DefaultStoragePrefix, runID)
	w, err := newPartWriter[addressRow](ctx, b, dir+"deleted/"+partName)
	require.NoError(t, err)
	for _, c := range candidates {
		require.NoError(t, w.Write(addressRow{Address: c}))
	}
	require.NoError(t, w.Close())
	require.NoError(t, writeJSON(ctx, b, dir+"summary.json", Summary{RunID: runID, Success: true, StartTime: t0, CutoffTime: cutoff, NumDeletedObjects: int64(len(candidates))}))
}

func readFailed(t *testing.T, b *blob.Bucket, runID string) map[string]string {
	t.Helper()
	ctx := context.Background()
	data, err := b.ReadAll(ctx, reportDir(DefaultStoragePrefix, runID)+"failed/"+partName)
	require.NoError(t, err)
	rows, err := parquet.Read[failedRow](bytesReaderAt(data), int64(len(data)))
	require.NoError(t, err)
	out := map[string]string{}
	for _, r := range rows {
		out[r.Address] = r.Error
	}
	return out
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, fmt.Errorf("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, fmt.Errorf("EOF")
	}
	return n, nil
}

func TestSweepRefusesOutOfScope(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	cutoff := t0.Add(-24 * time.Hour)
	newSlice := descendingName(cutoff)
	oldSlice := descendingName(cutoff.Add(-time.Hour))
	good := []string{"data/" + oldSlice + "/" + objID(1), "data/" + earlyName(1), flatName(1)}
	// Unrecognized keys, as a foreign report could name: refused too.
	unrec := []string{"data/legacy/b", "data/c", "top", "data/" + oldSlice + "/" + objID(2) + "/x", "data/" + oldSlice + "/a"}
	bad := append([]string{"_lakefs/retention/gc/rules/config.json", "other/x", "dummy", "data/" + newSlice + "/" + objID(3), ""}, unrec...)
	for _, k := range append(slices.Clone(good), bad...) {
		if k != "" {
			require.NoError(t, b.WriteAll(ctx, k, []byte("x"), nil))
		}
	}
	writeRun(t, b, "run1", cutoff, append(slices.Clone(bad), good...))
	res, err := Sweep(ctx, b, "run1")
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: int64(len(good)), Refused: int64(len(bad))}, *res)
	for _, k := range good {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.False(t, ok, k)
	}
	failed := readFailed(t, b, "run1")
	require.Len(t, failed, len(bad))
	for _, k := range unrec {
		require.Contains(t, failed[k], "refused: unrecognized", k)
	}
	for _, k := range bad {
		require.Contains(t, failed[k], "refused", k)
		if k != "" {
			ok, err := b.Exists(ctx, k)
			require.NoError(t, err)
			require.True(t, ok, k)
		}
	}
}

func TestSweepNoRunOrFailedRun(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	_, err := Sweep(ctx, b, "nope")
	require.ErrorIs(t, err, ErrNoRun)
	require.NoError(t, writeJSON(ctx, b, reportDir(DefaultStoragePrefix, "bad")+"summary.json", Summary{RunID: "bad"}))
	_, err = Sweep(ctx, b, "bad")
	require.ErrorIs(t, err, ErrRunFailed)
	_, err = Sweep(ctx, b, "a/b")
	require.ErrorIs(t, err, ErrInvalidInput)
}

func TestSweepTwice(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 250)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keys[:50]), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	res, err := Sweep(ctx, b, "run1", WithClock(fixedClock))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 200}, *res)
	res, err = Sweep(ctx, b, "run1", WithClock(fixedClock))
	require.NoError(t, err)
	require.Equal(t, Result{AlreadyGone: 200}, *res)
	for i, k := range keys {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.Equal(t, i < 50, ok)
	}
	report, err := b.ReadAll(ctx, reportDir(DefaultStoragePrefix, "run1")+"sweep.json")
	require.NoError(t, err)
	require.JSONEq(t, `{"deleted":0,"already_gone":200,"failed":0,"refused":0,"start_time":"2026-11-30T12:00:00Z","end_time":"2026-11-30T12:00:00Z"}`,
		string(report))
}

// flakyDeleter fails keys a number of times before deleting them.
type flakyDeleter struct {
	b        *blob.Bucket
	mu       sync.Mutex
	calls    map[string]int
	failures func(key string, call int) error
	batchErr func(call int) error
	batches  int
}

func (d *flakyDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	d.mu.Lock()
	d.batches++
	if d.batchErr != nil {
		if err := d.batchErr(d.batches); err != nil {
			d.mu.Unlock()
			return nil, err
		}
	}
	failed := map[string]error{}
	var del []string
	for _, k := range keys {
		d.calls[k]++
		if err := d.failures(k, d.calls[k]); err != nil {
			failed[k] = err
		} else {
			del = append(del, k)
		}
	}
	d.mu.Unlock()
	for _, k := range del {
		if err := d.b.Delete(ctx, k); err != nil {
			failed[k] = err
		}
	}
	return failed, nil
}

func TestSweepRetries(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 40)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	require.NoError(t, b.Delete(ctx, keys[39])) // gone before the sweep
	d := &flakyDeleter{b: b, calls: map[string]int{}, failures: func(key string, call int) error {
		switch {
		case key == keys[0]: // always throttled: fails after the retries
			return codeErr{gcerrors.ResourceExhausted}
		case key == keys[1]: // denied: not retried
			return codeErr{gcerrors.PermissionDenied}
		case key == keys[2] && call < 3:
			return errors.New("plain errors are Unknown, so retried")
		case key == keys[3] && call < 4: // succeeds on the last attempt
			return codeErr{gcerrors.Internal}
		}
		return nil
	}, batchErr: func(call int) error {
		if call == 1 {
			return codeErr{gcerrors.DeadlineExceeded} // the whole first batch
		}
		return nil
	}}
	res, err := Sweep(ctx, b, "run1", WithBatchDeleter(d), WithBackoff(time.Millisecond, 10*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 37, AlreadyGone: 1, Failed: 2}, *res)
	// Five attempts: the failed first batch, then four calls per key.
	require.Equal(t, 4, d.calls[keys[0]], "attempts are bounded")
	require.Equal(t, 1, d.calls[keys[1]])
	require.Equal(t, 3, d.calls[keys[2]])
	require.Equal(t, 4, d.calls[keys[3]])
	failed := readFailed(t, b, "run1")
	require.Len(t, failed, 2)
	require.Contains(t, failed, keys[0])
	require.Contains(t, failed, keys[1])
	for _, k := range keys[:2] {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
	}
}

func TestSweepRateLimit(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 60)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	start := time.Now()
	res, err := Sweep(ctx, b, "run1", WithDeleteRate(30))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), res.Deleted)
	// A burst of 30, then 30 more at 30 a second.
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
}

func TestSweepCancelled(t *testing.T) {
	b, keys := oldNamespace(t, 300)
	_, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var n int
	d := &flakyDeleter{b: b, calls: map[string]int{}, failures: func(string, int) error {
		if n++; n == 150 {
			cancel()
		}
		return nil
	}}
	_, err = Sweep(ctx, b, "run1", WithBatchDeleter(d), WithDeleteConcurrency(1))
	require.ErrorIs(t, err, context.Canceled)
	// No sweep report; a second sweep finishes the job.
	ok, err := b.Exists(context.Background(), reportDir(DefaultStoragePrefix, "run1")+"sweep.json")
	require.NoError(t, err)
	require.False(t, ok)
	res, err := Sweep(context.Background(), b, "run1")
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), res.Deleted+res.AlreadyGone)
}

// TestSweepFailsOnCorruptCandidates: a Sweep whose candidates cannot be
// read to the end fails with ErrInvalidInput, rather than report success
// for the part it could read.
func TestSweepFailsOnCorruptCandidates(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 40)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	part := reportDir(DefaultStoragePrefix, "run1") + "deleted/" + partName
	data, err := b.ReadAll(ctx, part)
	require.NoError(t, err)
	require.NoError(t, b.WriteAll(ctx, part, data[:len(data)/2], nil))
	_, err = Sweep(ctx, b, "run1")
	require.ErrorIs(t, err, ErrInvalidInput)
	for _, k := range keys {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.True(t, ok, "%s deleted from unreadable candidates", k)
	}
}
