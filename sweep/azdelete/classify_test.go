package azdelete_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"gocloud.dev/gcerrors"
)

var _ sweep.ErrorClassifier = (*azdelete.Deleter)(nil)

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

// TestClassifier classifies Azure's answers, bare and wrapped as gocloud
// and a deleter wrap them; azureblob's own code is beside (what sweep must
// not trust).
func TestClassifier(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		portable gcerrors.ErrorCode // azureblob's code, for the record
		want     gcerrors.ErrorCode
	}{
		{"Azure 412 lease", azureErr(412, "LeaseIdMissing"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 409 snapshots", azureErr(409, "SnapshotsPresent"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 409 immutable", azureErr(409, "BlobImmutableDueToPolicy"), gcerrors.Unknown, gcerrors.FailedPrecondition},
		{"Azure 403", azureErr(403, "AuthorizationPermissionMismatch"), gcerrors.Unknown, gcerrors.PermissionDenied},
		{"Azure 404", azureErr(404, "BlobNotFound"), gcerrors.NotFound, gcerrors.NotFound},
		{"Azure 503 ServerBusy", azureErr(503, "ServerBusy"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"Azure 500 ServerBusy", azureErr(500, "ServerBusy"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"Azure 500 OperationTimedOut", azureErr(500, "OperationTimedOut"), gcerrors.Unknown, gcerrors.DeadlineExceeded},
		{"Azure 500", azureErr(500, "InternalError"), gcerrors.Unknown, gcerrors.Internal},
	} {
		for _, err := range []error{c.err, fmt.Errorf("azdelete: %w", c.err)} {
			code, ok := azdelete.Classifier{}.ClassifyError(err)
			if !ok || code != c.want {
				t.Errorf("%s: ClassifyError(%v) = %v, %v; want %v (azureblob says %v)", c.name, err, code, ok, c.want, c.portable)
			}
		}
	}
	if code, ok := (azdelete.Classifier{}).ClassifyError(fmt.Errorf("connection reset")); ok {
		t.Errorf("a plain error classified as %v", code)
	}
}
