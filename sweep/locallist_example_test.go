package sweep_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob/fileblob"
)

// A local namespace (lakeFS's local blockstore) is a fileblob bucket; Mark
// reads its folders itself rather than through fileblob's pages.
func ExampleWithLocalListing() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "namespace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer bucket.Close()
	slice := "data/" + sliceName(time.Now()) + "/"
	live, garbage := slice+objName(1), slice+objName(2)
	for _, k := range []string{live, garbage} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	now := time.Now().Add(48 * time.Hour)
	sum, err := sweep.Mark(ctx, bucket, "run-1", sweep.Inputs{
		Uncommitted: keys(live),
		Committed:   keys(),
		ExportStart: now,
	}, sweep.WithClock(func() time.Time { return now }), sweep.WithLocalListing(dir))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("marked:", sum.NumDeletedObjects)
	for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", "run-1") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("candidate is the garbage:", key == garbage)
	}
	// Output:
	// marked: 1
	// candidate is the garbage: true
}
