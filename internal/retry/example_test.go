package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/retry"
)

// throttling is a PageLister whose every other request is throttled.
type throttling struct {
	bucket *blob.Bucket
	calls  int
}

func (t *throttling) ListPage(ctx context.Context, token []byte, size int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error) {
	if t.calls++; t.calls%2 == 1 {
		return nil, nil, errors.New("slow down")
	}
	return t.bucket.ListPage(ctx, token, size, opts)
}

// A listing whose every page is throttled once: each is tried again after
// the backoff, and the listing is whole.
func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	for _, k := range []string{"data/a", "data/b", "other/c"} {
		if err := bucket.WriteAll(ctx, k, nil, nil); err != nil {
			panic(err)
		}
	}
	lister := &throttling{bucket: bucket}
	slowDown := func(err error) (gcerrors.ErrorCode, bool) {
		return gcerrors.ResourceExhausted, err.Error() == "slow down"
	}
	waits := 0
	b := retry.Backoff{Min: time.Second, Max: time.Minute, Sleep: func(context.Context, time.Duration) error {
		waits++
		return nil
	}}
	p := retry.NewBucketPager(lister, &blob.ListOptions{Prefix: "data/"}, aimd.New(1, 4, 16), b, slowDown)
	defer p.Close()
	for {
		o, err := p.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(o.Key)
	}
	fmt.Println(lister.calls, "requests,", waits, "waits")
	// Output:
	// data/a
	// data/b
	// 2 requests, 1 waits
}
