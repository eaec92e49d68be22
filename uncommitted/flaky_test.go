package uncommitted_test

import (
	"errors"
	"sync"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// errAmbiguous is what a flaky bucket's Close reports after it committed
// the object: the upload's outcome looks unknown to the caller.
var errAmbiguous = errors.New("injected: connection reset after the upload")

// newFlakyBucket serves base and, for each committed write that failClose
// picks, reports errAmbiguous from Close. failClose is called under a
// lock, one write at a time.
func newFlakyBucket(base *blob.Bucket, failClose func(key string) bool) *blob.Bucket {
	var mu sync.Mutex
	fb, err := faultblob.New(base, faultblob.WithError(faultblob.Commit, func(key string) error {
		mu.Lock()
		defer mu.Unlock()
		if failClose(key) {
			return errAmbiguous
		}
		return nil
	}))
	if err != nil {
		panic(err) // the option is valid
	}
	return fb.Bucket()
}
