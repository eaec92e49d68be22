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

// A scan of an object through windows of 4 bytes, 2 of them fetched ahead
// while the one before is read; Close stops the fetches still running.
func ExampleWithReadAhead() {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := b.WriteAll(ctx, "file", []byte("one two three four"), nil); err != nil {
		panic(err)
	}
	ra := blobio.NewReaderAt(ctx, b, "file", 18, 4, blobio.WithReadAhead(2))
	defer ra.Close()
	p := make([]byte, 5)
	for off := int64(0); off < 18; off += 5 {
		n, _ := ra.ReadAt(p, off)
		fmt.Printf("%q ", p[:n])
	}
	fmt.Println()
	// Output: "one t" "wo th" "ree f" "our"
}
