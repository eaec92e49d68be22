package sweep

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/gcerrors"
)

// deniedOdd refuses every other key of a batch, deleting nothing.
type deniedOdd struct{}

func (deniedOdd) DeleteBatch(_ context.Context, keys []string) (map[string]error, error) {
	failed := map[string]error{}
	for i, k := range keys {
		if i%2 == 1 {
			failed[k] = codeErr{gcerrors.PermissionDenied}
		}
	}
	return failed, nil
}

// cancelling cancels the sweep at its first batch, as a kill would stop it.
type cancelling struct{ cancel context.CancelFunc }

func (c cancelling) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	c.cancel()
	return nil, ctx.Err()
}

// A sweep stopped before its end leaves no sweep.json, also when an
// earlier sweep of the run wrote one: that one's counts are not of the
// failed/ folder the stopped sweep removed and began again (found by
// examples/crash, killing a second sweep).
func TestStoppedResweepLeavesNoSweepJSON(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 20)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	res, err := Sweep(ctx, b, "run1", WithClock(fixedClock), WithBatchDeleter(deniedOdd{}))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)/2), res.Failed)
	require.Len(t, readFailed(t, b, "run1"), len(keys)/2)

	stopped, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = Sweep(stopped, b, "run1", WithClock(fixedClock), WithBatchDeleter(cancelling{cancel}))
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.ReadAll(ctx, reportDir(DefaultStoragePrefix, "run1")+"sweep.json")
	if gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("after a stopped sweep, sweep.json of the earlier one is still there (%v), but failed/ was removed", errors.Unwrap(err))
	}
}
