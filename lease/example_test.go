package lease_test

import (
	"context"
	"errors"
	"fmt"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/lease"
)

func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	first, err := lease.Acquire(ctx, bucket, "_lakefs/lease/", lease.Options{Holder: "gc-1", Settle: -1})
	if err != nil {
		panic(err)
	}
	_, err = lease.Acquire(ctx, bucket, "_lakefs/lease/", lease.Options{Holder: "gc-2", Settle: -1})
	fmt.Println(errors.Is(err, lease.ErrHeld))
	if err := first.Release(ctx); err != nil {
		panic(err)
	}
	second, err := lease.Acquire(ctx, bucket, "_lakefs/lease/", lease.Options{Holder: "gc-2", Settle: -1})
	fmt.Println(err, second.Holder())
	_ = second.Release(ctx)
	// Output:
	// true
	// <nil> gc-2
}
