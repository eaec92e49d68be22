package gcsdelete_test

import (
	"fmt"
	"testing"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

var _ sweep.ErrorClassifier = (*gcsdelete.Deleter)(nil)

func gcsErr(status int, reason string) error {
	return &googleapi.Error{Code: status, Message: reason, Errors: []googleapi.ErrorItem{{Reason: reason}}}
}

// TestClassifier classifies GCS's answers, bare and wrapped as gocloud and
// a deleter wrap them; gcsblob's own code is beside (what sweep must not
// trust: its NotFound for a 403 would count a refused delete as gone).
func TestClassifier(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		portable gcerrors.ErrorCode // gcsblob's code, for the record
		want     gcerrors.ErrorCode
	}{
		{"GCS 403 retention policy", gcsErr(403, "retentionPolicyNotMet"), gcerrors.NotFound, gcerrors.PermissionDenied},
		{"GCS 403 permission", gcsErr(403, "forbidden"), gcerrors.NotFound, gcerrors.PermissionDenied},
		{"GCS 404", gcsErr(404, "notFound"), gcerrors.NotFound, gcerrors.NotFound},
		{"GCS 429", gcsErr(429, "rateLimitExceeded"), gcerrors.ResourceExhausted, gcerrors.ResourceExhausted},
		{"GCS 503", gcsErr(503, "backendError"), gcerrors.Unknown, gcerrors.ResourceExhausted},
		{"GCS 500", gcsErr(500, "internalError"), gcerrors.Unknown, gcerrors.Internal},
		{"GCS 412", gcsErr(412, "conditionNotMet"), gcerrors.FailedPrecondition, gcerrors.FailedPrecondition},
	} {
		for _, err := range []error{c.err, fmt.Errorf("gcsdelete: %w", c.err)} {
			code, ok := gcsdelete.Classifier{}.ClassifyError(err)
			if !ok || code != c.want {
				t.Errorf("%s: ClassifyError(%v) = %v, %v; want %v (gcsblob says %v)", c.name, err, code, ok, c.want, c.portable)
			}
		}
	}
	if code, ok := (gcsdelete.Classifier{}).ClassifyError(fmt.Errorf("connection reset")); ok {
		t.Errorf("a plain error classified as %v", code)
	}
}
