// Package storecode maps the HTTP answers of object stores to gocloud's
// error codes, and reads an error's code as package sweep does (Code): it
// reads itself the answers it can without a cloud SDK beyond
// gocloud.dev/blob's own (the AWS SDK's HTTPStatusCode method, GCS's
// *googleapi.Error, which gocloud.dev/blob imports anyway); packages
// sweep/azdelete and sweep/gcsdelete, which import their SDKs anyway, use it
// to classify Azure's and Google's errors for sweep (see
// sweep.ErrorClassifier). It imports no cloud SDK.
//
// gocloud's portable codes are not enough to decide: gcsblob maps GCS's 403
// (a retention policy, a hold, a missing permission) to NotFound, which would
// count a refused delete as already gone; azureblob maps Azure's 409 and 412
// (a lease, snapshots, an immutability policy) to Unknown, which would retry
// a permanent refusal.
package storecode

import (
	"errors"
	"io/fs"
	"net/http"

	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// Code is the gocloud code of err, the first found of: the code an error in
// its chain tells itself (an ErrorCode() gcerrors.ErrorCode method, as a
// deleter's errors may have); classify's (nil: none), for the stores read
// with their SDK; the store's answer read without one (FromError);
// gocloud's portable code.
func Code(err error, classify func(error) (gcerrors.ErrorCode, bool)) gcerrors.ErrorCode {
	var c interface{ ErrorCode() gcerrors.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	if classify != nil {
		if code, ok := classify(err); ok {
			return code
		}
	}
	if code, ok := FromError(err); ok {
		return code
	}
	return gcerrors.Code(err)
}

// FromError classifies a failed request by the store's own answer, found in
// err's chain (gocloud's errors unwrap to the driver's), as far as it can
// be read without a cloud SDK beyond gocloud.dev/blob's own: a GCS answer
// (gcsblob calls its 403 NotFound), an AWS SDK error, which tells its HTTP
// status, or a file system's permission error (fileblob says Unknown). ok
// is false for any other error.
func FromError(err error) (code gcerrors.ErrorCode, ok bool) {
	var gcs *googleapi.Error
	if errors.As(err, &gcs) {
		return GCS(gcs.Code), true
	}
	var aws interface{ HTTPStatusCode() int }
	if errors.As(err, &aws) {
		return S3(aws.HTTPStatusCode()), true
	}
	if errors.Is(err, fs.ErrPermission) {
		// A file system's EACCES or EPERM (fileblob says Unknown).
		return gcerrors.PermissionDenied, true
	}
	return gcerrors.Unknown, false
}

// Azure maps an Azure Storage answer: its status and its x-ms-error-code.
// Azure answers ServerBusy with 503 (or 500) when an account or a partition
// is over its limits.
func Azure(status int, code string) gcerrors.ErrorCode {
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
	return HTTP(status)
}

// GCS maps a GCS answer. A 403 is a refusal (a retention policy, a hold, a
// permission), never "not found".
func GCS(status int) gcerrors.ErrorCode {
	switch status {
	case http.StatusConflict, http.StatusPreconditionFailed:
		return gcerrors.FailedPrecondition
	}
	return HTTP(status)
}

// S3 maps an S3 answer. S3's 409 OperationAborted asks the client to try
// again, so it is Unknown (retried, a bounded number of times).
func S3(status int) gcerrors.ErrorCode {
	switch status {
	case http.StatusConflict:
		return gcerrors.Unknown
	case http.StatusPreconditionFailed:
		return gcerrors.FailedPrecondition
	}
	return HTTP(status)
}

// HTTP maps the statuses every store answers alike. A response without a
// status (zero) is Unknown.
func HTTP(status int) gcerrors.ErrorCode {
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
