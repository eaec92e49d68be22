package sweep_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob/memblob"
)

func keys(k ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, s := range k {
			if !yield(s, nil) {
				return
			}
		}
	}
}

func Example() {
	ctx := context.Background()
	// The bucket is rooted at the repository's storage namespace.
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	for _, k := range []string{"data/slice/live", "data/slice/garbage", "legacy-garbage", "_lakefs/config"} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	// Objects just written are younger than any cutoff; pretend two days
	// have passed since the export.
	now := time.Now().Add(48 * time.Hour)
	sum, err := sweep.Mark(ctx, bucket, "run-1", sweep.Inputs{
		Uncommitted: keys("data/slice/live"),
		Committed:   keys(),
		ExportStart: now,
	}, sweep.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("marked:", sum.NumDeletedObjects)
	for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", "run-1") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("candidate:", key)
	}
	res, err := sweep.Sweep(ctx, bucket, "run-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted:", res.Deleted)
	// Output:
	// marked: 2
	// candidate: data/slice/garbage
	// candidate: legacy-garbage
	// deleted: 2
}

func ExampleReadSummary() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	_, err := sweep.ReadSummary(ctx, bucket, "_lakefs", "no-such-run")
	fmt.Println(err)
	// Output:
	// sweep: no such run: _lakefs/retention/gc/unified/no-such-run/summary.json
}
