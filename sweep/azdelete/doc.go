// Package azdelete deletes the candidates of package sweep on Azure Blob
// Storage with the Blob Batch API, 256 blobs a request, instead of one
// Delete Blob request per key, as lakeFS's Spark GC client does.
//
// It reaches the container client of a bucket opened with gocloud.dev's
// azureblob through bucket.As, and learns each key's blob name (azureblob
// escapes some characters, and a prefixed bucket adds its prefix) from the
// listing request azureblob would make, without sending it.
//
// Each blob is deleted with its snapshots (DeleteSnapshots: include): a blob
// that has snapshots cannot be deleted otherwise, and its snapshots are as
// much garbage as the blob. On an account with versioning or soft delete,
// Azure keeps a version or a soft-deleted copy until its retention runs out,
// as for any delete.
//
// Azure's answer for each blob is returned as an *azcore.ResponseError,
// which Classifier (sweep.ErrorClassifier of the Deleter) reads by its
// status and code for sweep: a lease (412
// LeaseIdMissing), an immutability policy or a legal hold (409) and a
// missing permission (403) fail the key at once, into the run's failed/
// report; ServerBusy (503) and other 5xx are retried with backoff; 404
// BlobNotFound counts as already gone. A batch request Azure refuses as a
// whole (throttled, or an account that does not take batch requests) fails
// each of its keys with Azure's error; run Sweep again without the deleter
// if the account never takes them.
//
// Azurite, Microsoft's storage emulator, serves Blob Batch requests: the
// package is tested against it (see the repository's tests/clouds).
package azdelete
