package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// goneErr is an error that reads as NotFound by its own code.
type goneErr struct{}

func (goneErr) Error() string                 { return "gone" }
func (goneErr) ErrorCode() gcerrors.ErrorCode { return gcerrors.NotFound }

// testMover moves by copying to its folder, and fails the keys it is told
// to with their errors.
type testMover struct {
	fail     map[string]error
	startErr error
	batchErr error
	started  int
}

func (m *testMover) StartMove(ctx context.Context, st *Store, runID string) (string, MoveFunc, error) {
	m.started++
	if m.startErr != nil {
		return "", nil, m.startErr
	}
	return "moved/" + runID + "/", func(ctx context.Context, keys []string) (map[string]error, error) {
		if m.batchErr != nil {
			return nil, m.batchErr
		}
		failed := map[string]error{}
		for _, k := range keys {
			if err, ok := m.fail[k]; ok {
				failed[k] = err
				continue
			}
			if err := st.Retry(ctx, func() error { return st.Bucket().Copy(ctx, "moved/"+runID+"/"+k, k, nil) }); err != nil {
				return nil, err
			}
		}
		return failed, nil
	}, nil
}

// noMove is a Mover that starts without a move.
type noMove struct{}

func (noMove) StartMove(context.Context, *Store, string) (string, MoveFunc, error) {
	return "nowhere/", nil, nil
}

// TestWithMover holds Sweep to the Mover's contract: the moved keys'
// originals are deleted and counted in Deleted, a key the move calls gone
// is counted as gone and left alone, any other failure is kept and listed
// in failed/ with its error, and an error of the Mover stops the sweep
// before any delete.
func TestWithMover(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	keys := []string{"data/" + earlyName(1), "data/" + earlyName(2), "data/" + earlyName(3), "data/" + earlyName(4)}
	for _, k := range keys {
		require.NoError(t, b.WriteAll(ctx, k, []byte(k), nil))
	}
	writeRun(t, b, "run1", t0, keys)
	// keys[3] is listed as not moved without a reason: kept and listed,
	// never deleted unmoved.
	m := &testMover{fail: map[string]error{keys[1]: fmt.Errorf("wrapped: %w", goneErr{}), keys[2]: errors.New("copy refused"), keys[3]: nil}}
	res, err := Sweep(ctx, b, "run1", WithMover(m))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 1, AlreadyGone: 1, Failed: 2, Quarantine: "moved/run1/"}, *res)
	for i, k := range keys {
		there, err := b.Exists(ctx, k)
		require.NoError(t, err)
		moved, err := b.Exists(ctx, "moved/run1/"+k)
		require.NoError(t, err)
		require.Equal(t, i != 0, there, "%s at its place", k)
		require.Equal(t, i == 0, moved, "%s moved", k)
	}
	require.Equal(t, map[string]string{keys[2]: "copy refused", keys[3]: "not moved (the Mover gave no error)"}, readFailed(t, b, "run1"))
	sj, err := b.ReadAll(ctx, reportDir(DefaultStoragePrefix, "run1")+"sweep.json")
	require.NoError(t, err)
	require.Contains(t, string(sj), `"quarantine":"moved/run1/"`)

	// The Mover's errors stop the sweep; nothing more is deleted.
	for _, m := range []*testMover{{startErr: errors.New("no start")}, {batchErr: errors.New("no batch")}} {
		_, err := Sweep(ctx, b, "run1", WithMover(m))
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), "no start") || strings.Contains(err.Error(), "no batch"), err)
		for _, k := range keys[1:] {
			there, err := b.Exists(ctx, k)
			require.NoError(t, err)
			require.True(t, there, k)
		}
	}
	// A Mover that gives no move fails the sweep: deleting what was to be
	// moved aside would lose it.
	_, err = Sweep(ctx, b, "run1", WithMover(noMove{}))
	require.ErrorIs(t, err, ErrInvalidInput)
	for _, k := range keys[1:] {
		there, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.True(t, there, k)
	}
	// Without a Mover, Sweep deletes: the option's zero value.
	res, err = Sweep(ctx, b, "run1", WithMover(nil))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 3, AlreadyGone: 1}, *res)
}

// TestNewStore: a Store is refused without a bucket or with an invalid
// option, as Sweep is, and reads the options it is given.
func TestNewStore(t *testing.T) {
	_, err := NewStore(nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	b := memblob.OpenBucket(nil)
	defer b.Close()
	_, err = NewStore(b, WithDeleteConcurrencyRange(4, 2))
	require.ErrorIs(t, err, ErrInvalidInput)
	st, err := NewStore(b, WithStoragePrefix("lakefs2"), WithClock(func() time.Time { return t0 }), WithBackoff(time.Microsecond, time.Microsecond))
	require.NoError(t, err)
	require.Equal(t, "lakefs2", st.StoragePrefix())
	require.Equal(t, t0, st.Now())
	require.Equal(t, defaultBatch, st.BatchSize())
	require.False(t, st.IsNotFound(errors.New("x")))
	require.True(t, st.IsNotFound(goneErr{}))
	calls := 0
	err = st.Retry(context.Background(), func() error { calls++; return errors.New("transient") })
	require.Error(t, err)
	require.Equal(t, deleteAttempts, calls)
}
