package gcsdelete_test

import (
	"errors"
	"fmt"

	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"gocloud.dev/blob/memblob"
)

// FromBucket needs a bucket opened with gcsblob; with
// sweep.WithBatchDeleter(d) Sweep then deletes the objects of each batch
// 16 at a time. Any other bucket is refused.
func ExampleFromBucket() {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	_, err := gcsdelete.FromBucket(bucket)
	fmt.Println(errors.Is(err, gcsdelete.ErrNotGCS))
	// Output: true
}
