package sweep

import (
	"errors"
	"io/fs"

	"github.com/lakegc/lakegc/internal/storecode"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// An ErrorClassifier tells the gocloud code of an error of its store when
// it knows better than gocloud's portable code (see BatchDeleter), and ok
// false for an error it does not know. A BatchDeleter that implements it
// classifies the errors Sweep meets; WithErrorClassifier gives Mark and
// Sweep (and ReadSummary its argument) a classifier of the bucket's own
// errors. Package sweep reads GCS's answers itself (a *googleapi.Error, whose
// package gocloud.dev/blob imports anyway): gcsblob calls GCS's 403 (a
// retention policy, a hold, a missing permission) NotFound, and a refusal
// must never read as an object already gone or a run that is not there.
// Azure's answers need azdelete.Classifier, as package sweep does not import
// the Azure SDK: without it, a lease or an immutability policy (409, 412)
// is retried as Unknown before it is reported failed, and ServerBusy does
// not slow the deletes down. gcsdelete.Classifier is the same as sweep's
// own reading. Implementations must be safe for concurrent use.
type ErrorClassifier interface {
	ClassifyError(err error) (code gcerrors.ErrorCode, ok bool)
}

// classifiers are the ErrorClassifiers of a call, asked in order.
type classifiers []ErrorClassifier

// errorCode is the gocloud code of err; see BatchDeleter. An error that
// tells its own code (an ErrorCode method, as a deleter's) wins, then the
// classifiers in order, then the store's answer read without an SDK, then
// gocloud's portable code.
func (cs classifiers) errorCode(err error) gcerrors.ErrorCode {
	var c interface{ ErrorCode() gcerrors.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	for _, c := range cs {
		if code, ok := c.ClassifyError(err); ok {
			return code
		}
	}
	if code, ok := storeCode(err); ok {
		return code
	}
	return gcerrors.Code(err)
}

func (cs classifiers) isNotFound(err error) bool {
	return err != nil && cs.errorCode(err) == gcerrors.NotFound
}

func (cs classifiers) transient(err error) bool {
	switch cs.errorCode(err) {
	case gcerrors.ResourceExhausted, gcerrors.Unknown, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return true
	}
	return false
}

// storeCode classifies a failed request by the store's own answer, found in
// err's chain (gocloud's errors unwrap to the driver's), as far as it can
// be read without a cloud SDK beyond gocloud.dev/blob's own: a GCS answer
// (gcsblob calls its 403 NotFound), an AWS SDK error, which tells its HTTP
// status, or a file system's permission error (fileblob says Unknown). ok
// is false for any other error.
func storeCode(err error) (code gcerrors.ErrorCode, ok bool) {
	var gcs *googleapi.Error
	if errors.As(err, &gcs) {
		return storecode.GCS(gcs.Code), true
	}
	var aws interface{ HTTPStatusCode() int }
	if errors.As(err, &aws) {
		return storecode.S3(aws.HTTPStatusCode()), true
	}
	if errors.Is(err, fs.ErrPermission) {
		// A file system's EACCES or EPERM (fileblob says Unknown).
		return gcerrors.PermissionDenied, true
	}
	return gcerrors.Unknown, false
}
