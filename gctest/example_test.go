package gctest_test

import (
	"context"
	"fmt"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/gctest"
	"github.com/lakegc/lakegc/pathprovider"
)

// One clock for the paths, the bucket's modification times and, in a
// test's lakegc.Config, the cycle.
func Example() {
	ctx := context.Background()
	clock := gctest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bucket := clock.Bucket(memblob.OpenBucket(nil))
	defer bucket.Close()
	paths, err := clock.Paths()
	if err != nil {
		panic(err)
	}
	clock.Advance(36 * time.Hour)
	addr := paths.NewPath()
	if err := bucket.WriteAll(ctx, addr, []byte("x"), nil); err != nil {
		panic(err)
	}
	attrs, err := bucket.Attributes(ctx, addr)
	if err != nil {
		panic(err)
	}
	a, err := pathprovider.Parse(addr)
	if err != nil {
		panic(err)
	}
	fmt.Println("address made", a.ObjectTime)
	fmt.Println("object written", attrs.ModTime)
	// Output:
	// address made 2026-01-02 12:00:00 +0000 UTC
	// object written 2026-01-02 12:00:00 +0000 UTC
}
