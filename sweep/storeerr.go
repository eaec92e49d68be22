package sweep

import (
	"errors"
	"io/fs"

	"github.com/lakegc/lakegc/internal/storecode"
	"gocloud.dev/gcerrors"
)

// An ErrorClassifier tells the gocloud code of an error of its store when
// it knows better than gocloud's portable code (see BatchDeleter), and ok
// false for an error it does not know. A BatchDeleter that implements it
// classifies the errors Sweep meets; WithErrorClassifier gives Mark and
// Sweep (and ReadSummary its argument) a classifier of the bucket's own
// errors: give the one of the bucket's store (azdelete.Classifier,
// gcsdelete.Classifier), or a refusal that gocloud calls NotFound (GCS's
// 403) reads as an object already gone. Packages sweep/azdelete and
// sweep/gcsdelete classify Azure's and Google's SDK errors, so that package
// sweep imports neither SDK. Implementations must be safe for concurrent use.
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
// be read without a cloud SDK: an AWS SDK error, which tells its HTTP
// status, or a file system's permission error (fileblob says Unknown). ok
// is false for any other error.
func storeCode(err error) (code gcerrors.ErrorCode, ok bool) {
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
