package blobio_test

import (
	"context"
	"fmt"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/blobio"
)

func Example() {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := b.WriteAll(ctx, "file", []byte("header...body...PAR1"), nil); err != nil {
		panic(err)
	}
	// A window of 1 MiB: the first read fetches the whole (small) object,
	// the second is served from memory.
	ra := blobio.NewReaderAt(ctx, b, "file", 20, 1<<20)
	tail := make([]byte, 4)
	if _, err := ra.ReadAt(tail, 16); err != nil {
		panic(err)
	}
	head := make([]byte, 6)
	if _, err := ra.ReadAt(head, 0); err != nil {
		panic(err)
	}
	fmt.Printf("%s %s\n", head, tail)
	// Output: header PAR1
}
