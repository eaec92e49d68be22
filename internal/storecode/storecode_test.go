package storecode_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"testing"

	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/lakegc/lakegc/internal/storecode"
)

// ownCode is an error that tells its own code.
type ownCode struct{ code gcerrors.ErrorCode }

func (e ownCode) Error() string                 { return "own" }
func (e ownCode) ErrorCode() gcerrors.ErrorCode { return e.code }

// awsErr is an AWS SDK error as sweep sees it: it tells its HTTP status.
type awsErr struct{ status int }

func (e awsErr) Error() string       { return "aws" }
func (e awsErr) HTTPStatusCode() int { return e.status }

// TestCode holds Code's order: the error's own code, the classifier's, the
// store's answer, gocloud's code.
func TestCode(t *testing.T) {
	refused := func(error) (gcerrors.ErrorCode, bool) { return gcerrors.FailedPrecondition, true }
	unknown := func(error) (gcerrors.ErrorCode, bool) { return gcerrors.Unknown, false }
	gcs403 := fmt.Errorf("wrapped: %w", &googleapi.Error{Code: http.StatusForbidden})
	for _, c := range []struct {
		name     string
		err      error
		classify func(error) (gcerrors.ErrorCode, bool)
		want     gcerrors.ErrorCode
	}{
		{"own code first", fmt.Errorf("x: %w", ownCode{gcerrors.NotFound}), refused, gcerrors.NotFound},
		{"the classifier's", gcs403, refused, gcerrors.FailedPrecondition},
		{"GCS's 403 is a refusal", gcs403, unknown, gcerrors.PermissionDenied},
		{"GCS's 404", &googleapi.Error{Code: http.StatusNotFound}, nil, gcerrors.NotFound},
		{"S3's 503", awsErr{http.StatusServiceUnavailable}, nil, gcerrors.ResourceExhausted},
		{"S3's 409 is retried", awsErr{http.StatusConflict}, nil, gcerrors.Unknown},
		{"EACCES", &os.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}, nil, gcerrors.PermissionDenied},
		{"a plain error", errors.New("x"), nil, gcerrors.Unknown},
	} {
		if got := storecode.Code(c.err, c.classify); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// GCS refuses with a 403 what a retention policy holds; gcsblob calls it
// NotFound, Code a refusal.
func ExampleCode() {
	err := fmt.Errorf("blob (key \"x\") (code=NotFound): %w", &googleapi.Error{Code: http.StatusForbidden})
	fmt.Println(storecode.Code(err, nil))
	// Output: PermissionDenied
}
