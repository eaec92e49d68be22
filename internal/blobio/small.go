package blobio

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"gocloud.dev/blob"
)

// ErrTooLarge is ReadAll's error for an object over its limit.
var ErrTooLarge = errors.New("object larger than its limit")

// ReadAll reads the object key whole, reading no more than limit+1 bytes:
// an object over limit bytes is an error wrapping ErrTooLarge. Other
// errors are the bucket's.
func ReadAll(ctx context.Context, bucket *blob.Bucket, key string, limit int64) ([]byte, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// WriteJSON writes v at key as one line of JSON (application/json).
func WriteJSON(ctx context.Context, bucket *blob.Bucket, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return bucket.WriteAll(ctx, key, append(b, '\n'), &blob.WriterOptions{ContentType: "application/json"})
}

// Remove deletes key if it is there. A look-up or a delete whose error
// notFound calls not found is none: the caller reads the store's answers
// (gcsblob calls GCS's 403 NotFound, and the object is still there).
func Remove(ctx context.Context, bucket *blob.Bucket, key string, notFound func(error) bool) error {
	_, err := bucket.Attributes(ctx, key)
	if notFound(err) {
		return nil
	}
	if err == nil {
		if err = bucket.Delete(ctx, key); notFound(err) {
			err = nil
		}
	}
	return err
}

// RemoveAll deletes every object under prefix, as Remove does one.
func RemoveAll(ctx context.Context, bucket *blob.Bucket, prefix string, notFound func(error) bool) error {
	it := bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil && !o.IsDir {
			if err = bucket.Delete(ctx, o.Key); notFound(err) {
				err = nil
			}
		}
		if err != nil {
			return err
		}
	}
}
