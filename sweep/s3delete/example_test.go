package s3delete_test

import (
	"errors"
	"fmt"

	"github.com/lakegc/lakegc/sweep/s3delete"
	"gocloud.dev/blob/memblob"
)

// FromBucket needs a bucket opened with s3blob; with
// sweep.WithBatchDeleter(d) Sweep then deletes 1000 keys a request. Any other
// bucket is refused.
func ExampleFromBucket() {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	_, err := s3delete.FromBucket(bucket)
	fmt.Println(errors.Is(err, s3delete.ErrNotS3))
	// Output: true
}
