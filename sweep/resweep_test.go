package sweep

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/lakegc/lakegc/internal/faultblob"
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
// tests/crash, killing a second sweep).
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

// gcsCodes codes a driver's errors as gcsblob does: GCS's 403 (a retention
// policy, a hold, a missing permission) is NotFound.
func gcsCodes(err error) (gcerrors.ErrorCode, bool) {
	var g *googleapi.Error
	if errors.As(err, &g) && g.Code == http.StatusForbidden {
		return gcerrors.NotFound, true
	}
	return 0, false
}

// A sweep that cannot remove an earlier sweep.json does not start: a GCS
// 403 on it, which gcsblob calls NotFound, is a refusal (see
// BatchDeleter), not an object already gone. Taken as gone, the sweep would
// remove failed/ and, stopped, leave the earlier sweep.json to count a
// failed/ that is no longer there.
//
// It runs with and without the host's classifier: sweep reads GCS's answers
// itself, so a host that forgets it still keeps the report.
func TestResweepKeepsReportItCannotRemove(t *testing.T) {
	for _, cls := range []Option{WithErrorClassifier(nil), WithErrorClassifier(sdkClassifier{})} {
		t.Run("", func(t *testing.T) { resweepKeepsReportItCannotRemove(t, cls) })
	}
}

func resweepKeepsReportItCannotRemove(t *testing.T, cls Option) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 20)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	_, err = Sweep(ctx, b, "run1", WithClock(fixedClock), WithBatchDeleter(deniedOdd{}))
	require.NoError(t, err)
	require.Len(t, readFailed(t, b, "run1"), len(keys)/2)

	d := &testDriver{deleteErr: func(key string) error {
		if strings.HasSuffix(key, "/sweep.json") {
			return gcsErr(http.StatusForbidden, "retentionPolicyNotMet")
		}
		return nil
	}, errorCode: gcsCodes}
	held := newTestBucket(b, d)
	stopped, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = Sweep(stopped, held, "run1", WithClock(fixedClock), WithBatchDeleter(cancelling{cancel}), cls)
	require.ErrorContains(t, err, "retentionPolicyNotMet")
	require.NotErrorIs(t, err, context.Canceled, "the sweep started")
	require.Len(t, readFailed(t, b, "run1"), len(keys)/2, "failed/ of the earlier sweep.json")
}

// A summary the store refuses to read (GCS's 403, which gcsblob calls
// NotFound) is not a missing run: Mark may not take its run ID for a new
// one, nor Sweep call it absent; the store's answer is the cause.
// It runs with and without the host's classifier, as
// TestResweepKeepsReportItCannotRemove.
func TestUnreadableSummaryIsNotNoRun(t *testing.T) {
	for _, cls := range [][]ErrorClassifier{nil, {sdkClassifier{}}} {
		t.Run("", func(t *testing.T) { unreadableSummaryIsNotNoRun(t, cls) })
	}
}

func unreadableSummaryIsNotNoRun(t *testing.T, cls []ErrorClassifier) {
	ctx := context.Background()
	opt := WithErrorClassifier(nil) // none
	if len(cls) > 0 {
		opt = WithErrorClassifier(cls[0])
	}
	b, _ := oldNamespace(t, 20)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	d := &testDriver{readErr: func(key string) error {
		if strings.HasSuffix(key, "/summary.json") || strings.HasSuffix(key, "/sweep.json") {
			return gcsErr(http.StatusForbidden, "forbidden")
		}
		return nil
	}, errorCode: gcsCodes}
	held := newTestBucket(b, d)
	_, err = ReadSummary(ctx, held, DefaultStoragePrefix, "run1", cls...)
	require.ErrorContains(t, err, "forbidden")
	require.NotErrorIs(t, err, ErrNoRun)
	_, err = Mark(ctx, held, "run1", noInputs(), WithClock(fixedClock), opt)
	require.ErrorContains(t, err, "forbidden")
	require.NotErrorIs(t, err, ErrNoRun)
	_, err = Sweep(ctx, held, "run1", WithClock(fixedClock), opt)
	require.NotErrorIs(t, err, ErrNoRun)
	// The run is still whole.
	sum, err := ReadSummary(ctx, b, DefaultStoragePrefix, "run1")
	require.NoError(t, err)
	require.True(t, sum.Success)
}

// A sweep whose look-up of an earlier sweep.json the store refuses (GCS's
// 403, which gcsblob calls NotFound and bucket.Exists "absent") does not
// start either: taken as absent, the earlier sweep.json would stay beside a
// failed/ the sweep removes.
func TestResweepStopsAtRefusedLookup(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 20)
	_, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	_, err = Sweep(ctx, b, "run1", WithClock(fixedClock), WithBatchDeleter(deniedOdd{}))
	require.NoError(t, err)
	require.Len(t, readFailed(t, b, "run1"), len(keys)/2)

	held := wrapBucket(b, faultblob.WithError(faultblob.Attributes, func(key string) error {
		if strings.HasSuffix(key, "/sweep.json") {
			return gcsErr(http.StatusForbidden, "forbidden")
		}
		return nil
	}), faultblob.WithErrorCode(gcsCodes))
	_, err = Sweep(ctx, held, "run1", WithClock(fixedClock), WithBatchDeleter(deniedOdd{}))
	require.ErrorContains(t, err, "forbidden")
	require.Len(t, readFailed(t, b, "run1"), len(keys)/2, "failed/ of the earlier sweep.json")
}
