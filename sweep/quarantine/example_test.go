package sweep_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/sweep"
)

// A sweep into the quarantine, a restore of the object, and a purge of the
// quarantine once past its days.
func ExampleRestore() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	garbage := "data/" + sliceName(time.Now()) + "/" + objName(2)
	if err := bucket.WriteAll(ctx, garbage, []byte("x"), nil); err != nil {
		log.Fatal(err)
	}
	now := time.Now().Add(48 * time.Hour)
	clock := sweep.WithClock(func() time.Time { return now })
	if _, err := sweep.Mark(ctx, bucket, "run-1", sweep.Inputs{Uncommitted: keys(), Committed: keys(), ExportStart: now}, clock); err != nil {
		log.Fatal(err)
	}
	res, err := sweep.Sweep(ctx, bucket, "run-1", sweep.WithQuarantine(), clock)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("moved:", res.Deleted, "into", res.Quarantine)
	back, err := sweep.Restore(ctx, bucket, "run-1", []string{garbage})
	if err != nil {
		log.Fatal(err)
	}
	ok, _ := bucket.Exists(ctx, garbage)
	fmt.Println("restored:", back.Restored, ok)
	later := sweep.WithClock(func() time.Time { return now.Add(8 * 24 * time.Hour) })
	purged, err := sweep.Purge(ctx, bucket, 7*24*time.Hour, later)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("purged:", purged.Purged[0].RunID)
	// Output:
	// moved: 1 into _lakefs/retention/gc/quarantine/run-1/
	// restored: 1 true
	// purged: run-1
}
