package sweep

import (
	"errors"
	"io/fs"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// storeCode classifies a failed delete by the store's own answer, found in
// err's chain (gocloud's errors unwrap to the driver's): an Azure or GCS SDK
// error, an AWS SDK error that tells its HTTP status, or a file system's
// permission error. ok is false for any other error.
//
// gocloud's portable codes are not enough to decide: gcsblob maps GCS's 403
// (a retention policy, a hold, a missing permission) to NotFound, which would
// count a refused delete as already gone; azureblob maps Azure's 409 and 412
// (a lease, snapshots, an immutability policy) to Unknown, which would retry
// a permanent refusal, and so does fileblob for a file it may not remove.
func storeCode(err error) (code gcerrors.ErrorCode, ok bool) {
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		return azureCode(az.StatusCode, az.ErrorCode), true
	}
	var gcs *googleapi.Error
	if errors.As(err, &gcs) {
		return gcsCode(gcs.Code), true
	}
	var aws interface{ HTTPStatusCode() int }
	if errors.As(err, &aws) {
		return s3Code(aws.HTTPStatusCode()), true
	}
	if errors.Is(err, fs.ErrPermission) {
		// A file system's EACCES or EPERM (fileblob says Unknown).
		return gcerrors.PermissionDenied, true
	}
	return gcerrors.Unknown, false
}

// azureCode maps an Azure Storage answer. Azure answers ServerBusy with 503
// (or 500) when an account or a partition is over its limits.
func azureCode(status int, code string) gcerrors.ErrorCode {
	switch code {
	case "ServerBusy":
		return gcerrors.ResourceExhausted
	case "OperationTimedOut":
		return gcerrors.DeadlineExceeded
	}
	switch status {
	case http.StatusConflict, http.StatusPreconditionFailed:
		// LeaseIdMissing, SnapshotsPresent, BlobImmutableDueToPolicy...
		return gcerrors.FailedPrecondition
	}
	return httpCode(status)
}

// gcsCode maps a GCS answer. A 403 is a refusal (a retention policy, a hold,
// a permission), never "not found".
func gcsCode(status int) gcerrors.ErrorCode {
	switch status {
	case http.StatusConflict, http.StatusPreconditionFailed:
		return gcerrors.FailedPrecondition
	}
	return httpCode(status)
}

// s3Code maps an S3 answer. S3's 409 OperationAborted asks the client to try
// again, so it is Unknown (retried, a bounded number of times).
func s3Code(status int) gcerrors.ErrorCode {
	switch status {
	case http.StatusConflict:
		return gcerrors.Unknown
	case http.StatusPreconditionFailed:
		return gcerrors.FailedPrecondition
	}
	return httpCode(status)
}

// httpCode maps the statuses every store answers alike. A response without
// a status (zero) is Unknown.
func httpCode(status int) gcerrors.ErrorCode {
	switch {
	case status == http.StatusNotFound:
		return gcerrors.NotFound
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return gcerrors.PermissionDenied
	case status == http.StatusRequestTimeout:
		return gcerrors.DeadlineExceeded
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return gcerrors.ResourceExhausted
	case status == http.StatusNotImplemented:
		return gcerrors.Unimplemented
	case status >= 500 && status <= 599:
		return gcerrors.Internal
	case status == http.StatusBadRequest:
		return gcerrors.InvalidArgument
	case status >= 400 && status <= 499:
		return gcerrors.FailedPrecondition
	}
	return gcerrors.Unknown
}
