package host_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
)

// ExampleCombineShards marks a namespace of six garbage objects in three
// slices as two shards, each its own run (as "lakegc gc --shard i/2" does
// on two machines), and combines the two runs' summaries.
func ExampleCombineShards() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range 3 {
		slice := pathprovider.DescendingID(day.Add(time.Duration(s) * time.Hour)).String()
		for o := range 2 {
			key := "data/" + slice + "/" + pathprovider.DescendingID(day.Add(time.Duration(s)*time.Hour+time.Duration(o)*time.Second)).String()
			if err := bucket.WriteAll(ctx, key, []byte("old"), nil); err != nil {
				log.Fatal(err)
			}
		}
	}
	none := func(yield func(string, error) bool) {}
	later := time.Now().Add(48 * time.Hour) // every object is past the min age
	tmp, err := os.MkdirTemp("", "shards")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	var runs []string
	for i := range 2 {
		run := fmt.Sprintf("shard-%d", i)
		_, err := sweep.Mark(ctx, bucket, run, sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: later},
			sweep.WithShard(i, 2), sweep.WithClock(func() time.Time { return later }), sweep.WithTempDir(tmp))
		if err != nil {
			log.Fatal(err)
		}
		runs = append(runs, run)
	}
	sum, err := host.CombineShards(ctx, bucket, runs...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d shards %v: %d garbage in %d slices\n", sum.Shards, sum.RunIDs, sum.NumDeletedObjects, sum.SlicesListed)
	// Output: 2 shards [shard-0 shard-1]: 6 garbage in 3 slices
}
