package azdelete_test

import (
	"errors"
	"fmt"

	"github.com/lakegc/lakegc/sweep/azdelete"
	"gocloud.dev/blob/memblob"
)

// FromBucket needs a bucket opened with azureblob; with
// sweep.WithBatchDeleter(d) Sweep then deletes 256 blobs a request. Any
// other bucket is refused.
func ExampleFromBucket() {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	_, err := azdelete.FromBucket(bucket)
	fmt.Println(errors.Is(err, azdelete.ErrNotAzure))
	// Output: true
}
