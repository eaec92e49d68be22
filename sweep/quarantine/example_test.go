package quarantine_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
)

// A sweep into the quarantine, a restore of the object, and a purge of the
// quarantine once past its days.
func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	// An object of a slice as lakeFS names them: the slice's name is the
	// xid of the year 4000 less its start time.
	slice := xid.NewWithTime(time.Unix(64060588800-time.Now().Unix(), 0)).String()
	garbage := "data/" + slice + "/" + xid.New().String()
	if err := bucket.WriteAll(ctx, garbage, []byte("x"), nil); err != nil {
		log.Fatal(err)
	}
	now := time.Now().Add(48 * time.Hour)
	clock := sweep.WithClock(func() time.Time { return now })
	none := func(func(string, error) bool) {} // an empty keep set
	if _, err := sweep.Mark(ctx, bucket, "run-1", sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: now}, clock); err != nil {
		log.Fatal(err)
	}
	res, err := sweep.Sweep(ctx, bucket, "run-1", sweep.WithMover(quarantine.Mover{}), clock)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("moved:", res.Deleted, "into", res.Quarantine)
	back, err := quarantine.Restore(ctx, bucket, "run-1", []string{garbage})
	if err != nil {
		log.Fatal(err)
	}
	ok, _ := bucket.Exists(ctx, garbage)
	fmt.Println("restored:", back.Restored, ok)
	later := sweep.WithClock(func() time.Time { return now.Add(8 * 24 * time.Hour) })
	purged, err := quarantine.Purge(ctx, bucket, 7*24*time.Hour, later)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("purged:", purged.Purged[0].RunID)
	// Output:
	// moved: 1 into _lakefs/retention/gc/quarantine/run-1/
	// restored: 1 true
	// purged: run-1
}
