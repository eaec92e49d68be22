// Package s3test runs a real S3-protocol server on loopback for tests.
//
// [Start] serves an in-memory gofakes3 backend over HTTP on 127.0.0.1, and
// [Server.Bucket] opens a bucket on it through gocloud.dev/blob/s3blob and the
// AWS SDK v2, exactly as a host opens a bucket on Amazon S3: the requests are
// signed, listed page by page, and deleted one by one (DeleteObject) or in
// batches (DeleteObjects). Options shape the server for the situations a GC
// must survive: small listing pages ([WithMaxKeys]), deletes that fail for
// chosen keys ([WithFailingDeletes]), and a clock that makes objects old
// ([WithClock]).
//
// WithFailingDeletes refuses the way an S3 bucket policy does: 403
// AccessDenied for a DeleteObject, and a per-key AccessDenied inside a
// DeleteObjects reply. A WithMaxKeys of a few keys makes a few hundred
// objects take dozens of listing pages, so paging is exercised. Buckets are
// addressed path-style, as a server on 127.0.0.1 has no per-bucket host
// names.
//
// Everything a test starts is stopped by the test's cleanup.
package s3test
