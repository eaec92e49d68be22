// Package gcstest runs a GCS-protocol server on loopback for tests.
//
// [Start] runs fake-gcs-server (github.com/fsouza/fake-gcs-server) in
// process, in memory, behind an HTTP server on 127.0.0.1, and
// [Server.Bucket] opens a bucket on it through gocloud.dev/blob/gcsblob and
// the real GCS client (cloud.google.com/go/storage), as a host opens a
// bucket on Google Cloud Storage: JSON API requests over HTTP, deletes one
// object a request.
//
// fake-gcs-server does not enforce object holds or retention policies, so
// the refusals a GC must survive are injected in front of it: deletes of
// chosen objects answered 403 as GCS answers for an object under a hold
// ([WithFailingDeletes]), and deletes answered 429 rateLimitExceeded a given
// number of times ([Server.Throttle]). Everything a test starts is stopped
// by the test's cleanup.
package gcstest
