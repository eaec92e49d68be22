// Package gcsdelete deletes the candidates of package sweep on Google Cloud
// Storage with bounded concurrent deletes: the objects of each batch Sweep
// hands over are deleted DefaultConcurrency at a time (WithConcurrency),
// each with one request of the bucket's own GCS client.
//
// # Why not batch requests
//
// GCS's JSON API takes batch requests (up to 100 calls in one multipart
// HTTP request), but they save round trips, not work: GCS counts each call
// of a batch against the bucket's rate limits as a separate request, and
// answers each one separately. The Go client (cloud.google.com/go/storage)
// has no batch API, and gcsblob exposes only that client, not the
// authenticated HTTP client a hand-built batch request would need. Deletes
// in flight over the client's kept-alive connections reach the same rate
// with the client's own authentication, retry policy and error types, and
// sweep's WithDeleteRate keeps them under the bucket's limits.
//
// It reaches the *storage.Client of a bucket opened with gocloud.dev's
// gcsblob through bucket.As, and the object handle gcsblob would use for
// each key (its escaping applied, and the prefix of a prefixed bucket)
// from a read stopped before anything is sent.
//
// GCS's answer for each object is returned as its *googleapi.Error, which
// Classifier (sweep.ErrorClassifier of the Deleter) reads by the HTTP
// status for sweep: 403 (a retention policy, an object
// hold, a missing permission) fails the key at once, into the run's failed/
// report (gocloud's gcsblob would call it "not found"); 429 and 5xx are
// retried with backoff; a 404 counts as already gone. In a bucket with
// object versioning, a delete makes the live object noncurrent; GCS keeps it
// as its lifecycle rules say.
//
// The package is tested against fake-gcs-server (see the repository's
// tests/clouds).
package gcsdelete
