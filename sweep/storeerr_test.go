package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/lakegc/lakegc/internal/storecode"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// azureErr is the error the Azure SDK returns for an answer of Azure
// Storage: the status, and the service's code in x-ms-error-code.
func azureErr(status int, code string) error {
	h := http.Header{}
	h.Set("x-ms-error-code", code)
	req, _ := http.NewRequest(http.MethodDelete, "https://acct.blob.core.windows.net/c/k", nil)
	return runtime.NewResponseError(&http.Response{
		StatusCode: status, Status: http.StatusText(status), Header: h, Request: req,
		Body: io.NopCloser(strings.NewReader("")),
	})
}

func gcsErr(status int, reason string) error {
	return &googleapi.Error{Code: status, Message: reason, Errors: []googleapi.ErrorItem{{Reason: reason}}}
}

func s3Err(status int) error {
	return &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      errors.New("api error"),
	}
}

// sdkClassifier reads Azure's and Google's answers as azdelete.Classifier
// and gcsdelete.Classifier do (which this package's tests cannot import:
// they import sweep); their own tests check them against the same answers.
// Package sweep reads neither SDK's errors itself.
type sdkClassifier struct{}

func (sdkClassifier) ClassifyError(err error) (gcerrors.ErrorCode, bool) {
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		return storecode.Azure(az.StatusCode, az.ErrorCode), true
	}
	var g *googleapi.Error
	if errors.As(err, &g) {
		return storecode.GCS(g.Code), true
	}
	return gcerrors.Unknown, false
}

// sdk is the classifiers a host gives for an Azure or GCS bucket.
var sdk = classifiers{sdkClassifier{}}

// storeBucket is a bucket whose driver fails every delete with err and
// gives it the code portable, as a gocloud driver would: the error reaches
// Sweep wrapped in gocloud's error, with gocloud's code.
func storeBucket(t *testing.T, err error, portable gcerrors.ErrorCode) *blob.Bucket {
	inner := memblob.OpenBucket(nil)
	t.Cleanup(func() { inner.Close() })
	fails := func(string) error { return err }
	return wrapBucket(inner, faultblob.WithError(faultblob.Delete, fails),
		faultblob.WithError(faultblob.Attributes, fails),
		faultblob.WithErrorCode(func(error) (gcerrors.ErrorCode, bool) { return portable, true }))
}

// TestStoreCodes classifies each store's answers as gocloud's drivers
// deliver them, with the code each driver gives beside (what the
// classification must not trust).
func TestStoreCodes(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		portable gcerrors.ErrorCode // what the gocloud driver says
		want     gcerrors.ErrorCode
	}{
		{"GCS 403 retention policy", gcsErr(403, "retentionPolicyNotMet"), gcerrors.NotFound, gcerrors.PermissionDenied},
		{"GCS 403 permission", gcsErr(403, "forbidden"), gcerrors.NotFound, gcerrors.PermissionDenied},
		{"GCS 404", gcsErr(404, "notFound"), gcerrors.NotFound, gcerrors.NotFound},
		{"GCS 429", gcsErr(429, "rateLimitExceeded"), gcerrors.ResourceExhausted, gcerrors.ResourceExhausted},
		{"GCS 503", gcsErr(503, "backendError"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"GCS 500", gcsErr(500, "internalError"), gcerrors.Unknown, gcerrors.Internal},
		{"GCS 412", gcsErr(412, "conditionNotMet"), gcerrors.FailedPrecondition, gcerrors.FailedPrecondition},
		{"Azure 412 lease", azureErr(412, "LeaseIdMissing"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 409 snapshots", azureErr(409, "SnapshotsPresent"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 409 immutable", azureErr(409, "BlobImmutableDueToPolicy"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 403", azureErr(403, "AuthorizationPermissionMismatch"), gcerrors.Unknown, gcerrors.PermissionDenied},
		{"Azure 404", azureErr(404, "BlobNotFound"), gcerrors.NotFound, gcerrors.NotFound},
		{"Azure 503 ServerBusy", azureErr(503, "ServerBusy"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"Azure 500 ServerBusy", azureErr(500, "ServerBusy"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"Azure 500 OperationTimedOut", azureErr(500, "OperationTimedOut"), gcerrors.Unknown, gcerrors.DeadlineExceeded},
		{"Azure 500", azureErr(500, "InternalError"), gcerrors.Unknown, gcerrors.Internal},
		{"S3 403", s3Err(403), gcerrors.PermissionDenied, gcerrors.PermissionDenied},
		{"S3 503 SlowDown", s3Err(503), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"S3 409 OperationAborted", s3Err(409), gcerrors.Unknown, gcerrors.Unknown},
		{"S3 405 MethodNotAllowed", s3Err(405), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"file EPERM", &os.PathError{Op: "remove", Path: "/lake/x", Err: syscall.EPERM}, gcerrors.Unknown, gcerrors.PermissionDenied},
		{"file EACCES", &os.PathError{Op: "remove", Path: "/lake/x", Err: syscall.EACCES}, gcerrors.Unknown, gcerrors.PermissionDenied},
		{"file ENOTEMPTY", &os.PathError{Op: "remove", Path: "/lake/x", Err: syscall.ENOTEMPTY}, gcerrors.Unknown, gcerrors.Unknown},
		{"a plain error", &plainErr{"connection reset"}, gcerrors.Unknown, gcerrors.Unknown},
		{"a plain error the driver calls NotFound", &plainErr{"no such file"}, gcerrors.NotFound, gcerrors.NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := storeBucket(t, c.err, c.portable)
			err := b.Delete(context.Background(), "k")
			require.Equal(t, c.portable, gcerrors.Code(err), "the driver's code")
			require.Equal(t, c.want, sdk.errorCode(err))
			var plain *plainErr
			if !errors.As(c.err, &plain) {
				require.Equal(t, c.want, sdk.errorCode(fmt.Errorf("deleter: %w", c.err)), "a deleter's wrapped SDK error")
			}
			// GCS's answers are read without a classifier: gcsblob's
			// NotFound for a 403 must never count a refusal as gone.
			if !errors.As(c.err, new(*azcore.ResponseError)) {
				require.Equal(t, c.want, classifiers(nil).errorCode(err), "without a classifier")
			}
		})
	}
}

// TestStoreCodeDeleterWins checks that a deleter's own ErrorCode method is
// preferred to the SDK error it wraps.
func TestStoreCodeDeleterWins(t *testing.T) {
	err := fmt.Errorf("%w", &codedErr{code: gcerrors.NotFound, err: gcsErr(403, "forbidden")})
	require.Equal(t, gcerrors.NotFound, sdk.errorCode(err))
}

// plainErr is an error of no cloud SDK: only gocloud's code classifies it.
type plainErr struct{ msg string }

func (e *plainErr) Error() string { return e.msg }

type codedErr struct {
	code gcerrors.ErrorCode
	err  error
}

func (e *codedErr) Error() string                 { return e.err.Error() }
func (e *codedErr) Unwrap() error                 { return e.err }
func (e *codedErr) ErrorCode() gcerrors.ErrorCode { return e.code }

// TestSweepStoreRefusals sweeps with the default deleter over buckets whose
// store refuses or throttles every delete: a refusal is Failed at once (not
// already gone, not retried), throttling is retried up to the limit.
func TestSweepStoreRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		portable gcerrors.ErrorCode
		attempts int
		reported string // in failed/
	}{
		{"GCS hold", gcsErr(403, "retentionPolicyNotMet"), gcerrors.NotFound, 1, "Error 403: retentionPolicyNotMet"},
		{"Azure lease", azureErr(412, "LeaseIdMissing"), gcerrors.Unknown, 1, "LeaseIdMissing"},
		{"Azure snapshots", azureErr(409, "SnapshotsPresent"), gcerrors.Unknown, 1, "SnapshotsPresent"},
		{"Azure ServerBusy", azureErr(503, "ServerBusy"), gcerrors.Unknown, 5, "ServerBusy"},
		{"GCS 429", gcsErr(429, "rateLimitExceeded"), gcerrors.ResourceExhausted, 5, "Error 429: rateLimitExceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			reports, keys := oldNamespace(t, 3)
			_, err := Mark(ctx, reports, "run1", noInputs(), WithClock(fixedClock))
			require.NoError(t, err)
			store := &countingDeletes{Bucket: storeBucket(t, c.err, c.portable)}
			res, err := Sweep(ctx, reports, "run1", WithBatchDeleter(store), WithClock(fixedClock),
				WithBackoff(time.Millisecond, 10*time.Millisecond), WithErrorClassifier(sdkClassifier{}))
			require.NoError(t, err)
			require.Equal(t, Result{Failed: int64(len(keys))}, *res)
			require.Equal(t, int64(c.attempts*len(keys)), store.calls.Load())
			failed := readFailed(t, reports, "run1")
			require.Len(t, failed, len(keys))
			for _, k := range keys {
				require.Contains(t, failed[k], c.reported, "the store's error is reported")
			}
		})
	}
}

// countingDeletes is the default deleter over a bucket, counting calls.
type countingDeletes struct {
	*blob.Bucket
	calls atomic.Int64
}

func (d *countingDeletes) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	d.calls.Add(int64(len(keys)))
	return bucketDeleter{bucket: d.Bucket}.DeleteBatch(ctx, keys)
}
