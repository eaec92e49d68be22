// Package s3delete deletes the candidates of package sweep on S3 with
// DeleteObjects, 1000 keys a request, instead of one DeleteObject per key.
//
// It reaches the AWS SDK v2 client of a bucket opened with gocloud.dev's
// s3blob through bucket.As, and learns the S3 bucket name and each key's
// name on S3 (s3blob escapes some characters, and a prefixed bucket adds its
// prefix) from the request s3blob would make, without sending it.
package s3delete
