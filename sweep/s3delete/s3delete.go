package s3delete

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// MaxKeys is the number of keys of one DeleteObjects request, S3's limit.
const MaxKeys = 1000

// ErrNotS3 is returned by FromBucket for a bucket that is not s3blob's.
var ErrNotS3 = errors.New("s3delete: not an S3 bucket")

// Deleter is a sweep.BatchDeleter over S3's DeleteObjects. It is safe for
// concurrent use.
type Deleter struct {
	bucket *blob.Bucket
	client *s3.Client
	name   string // the S3 bucket
}

// FromBucket returns a deleter for a bucket opened with s3blob (possibly
// wrapped by blob.PrefixedBucket).
func FromBucket(b *blob.Bucket) (sweep.BatchDeleter, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrNotS3)
	}
	var client *s3.Client
	if !b.As(&client) || client == nil {
		return nil, ErrNotS3
	}
	d := &Deleter{bucket: b, client: client}
	name, _, err := d.resolve(context.Background(), "probe")
	if err != nil {
		return nil, err
	}
	d.name = name
	return d, nil
}

// errResolved stops the request whose input resolve captured.
var errResolved = errors.New("s3delete: resolved")

// resolve returns the bucket and the S3 key s3blob uses for key: it builds
// the GetObject request and stops it in BeforeRead, before anything is sent.
func (d *Deleter) resolve(ctx context.Context, key string) (bucket, s3key string, err error) {
	var in *s3.GetObjectInput
	_, err = d.bucket.NewRangeReader(ctx, key, 0, 0, &blob.ReaderOptions{
		BeforeRead: func(as func(any) bool) error {
			as(&in)
			return errResolved
		},
	})
	if in == nil || in.Bucket == nil || in.Key == nil {
		if err == nil || errors.Is(err, errResolved) {
			err = ErrNotS3
		}
		return "", "", fmt.Errorf("s3delete: key %q: %w", key, err)
	}
	return *in.Bucket, *in.Key, nil
}

// DeleteBatch deletes keys with DeleteObjects requests of at most MaxKeys
// keys. Keys S3 reports as not deleted are returned in failed, with an error
// carrying a gocloud code (ErrorCode) so that sweep retries the transient
// ones. S3 reports no error for a key that did not exist.
func (d *Deleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	var failed map[string]error
	fail := func(k string, err error) {
		if failed == nil {
			failed = make(map[string]error)
		}
		failed[k] = err
	}
	for len(keys) > 0 {
		n := min(len(keys), MaxKeys)
		batch := keys[:n]
		keys = keys[n:]
		byS3 := make(map[string]string, n)
		objs := make([]types.ObjectIdentifier, 0, n)
		for _, k := range batch {
			_, s3key, err := d.resolve(ctx, k)
			if err != nil {
				fail(k, err)
				continue
			}
			byS3[s3key] = k
			objs = append(objs, types.ObjectIdentifier{Key: aws.String(s3key)})
		}
		if len(objs) == 0 {
			continue
		}
		out, err := d.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(d.name),
			Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return failed, fmt.Errorf("s3delete: DeleteObjects: %w", err)
		}
		for _, e := range out.Errors {
			k, ok := byS3[aws.ToString(e.Key)]
			if !ok {
				continue
			}
			fail(k, &KeyError{Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)})
		}
	}
	return failed, nil
}

// KeyError is S3's error for one key of a DeleteObjects request.
type KeyError struct {
	Code, Message string
}

// Error returns S3's code and message.
func (e *KeyError) Error() string { return "s3delete: " + e.Code + ": " + e.Message }

// ErrorCode maps S3's code to gocloud's, for sweep's retry decisions.
func (e *KeyError) ErrorCode() gcerrors.ErrorCode {
	switch e.Code {
	case "NoSuchKey", "NoSuchBucket":
		return gcerrors.NotFound
	case "AccessDenied", "AllAccessDisabled", "AccountProblem", "InvalidObjectState", "MethodNotAllowed":
		return gcerrors.PermissionDenied
	case "SlowDown", "ServiceUnavailable", "503 SlowDown", "RequestLimitExceeded":
		return gcerrors.ResourceExhausted
	case "InternalError":
		return gcerrors.Internal
	case "RequestTimeout":
		return gcerrors.DeadlineExceeded
	}
	return gcerrors.Unknown
}
