// Package storecode maps the HTTP answers of object stores to gocloud's
// error codes. Package sweep uses it for the errors whose status it can read
// without a cloud SDK beyond gocloud.dev/blob's own (the AWS SDK's
// HTTPStatusCode method, GCS's *googleapi.Error); packages sweep/azdelete
// and sweep/gcsdelete, which import their SDKs anyway, use it to classify
// Azure's and Google's errors for sweep (see sweep.ErrorClassifier). It
// imports no cloud SDK.
//
// gocloud's portable codes are not enough to decide: gcsblob maps GCS's 403
// (a retention policy, a hold, a missing permission) to NotFound, which would
// count a refused delete as already gone; azureblob maps Azure's 409 and 412
// (a lease, snapshots, an immutability policy) to Unknown, which would retry
// a permanent refusal.
package storecode

import (
	"net/http"

	"gocloud.dev/gcerrors"
)

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
