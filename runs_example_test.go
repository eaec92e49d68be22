package lakegc_test

import (
	"context"
	"fmt"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
)

// ExampleSweepRun reviews a dry run, then sweeps exactly what it marked.
func ExampleSweepRun() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	for _, key := range []string{"data/s/committed", "data/s/staged", "data/s/orphan"} {
		if err := bucket.WriteAll(ctx, key, []byte(key), nil); err != nil {
			panic(err)
		}
	}
	store := &tinyStore{
		head:   retention.Commit{ID: "c1", CreationDate: time.Now(), MetaRangeID: "m1"},
		tree:   []string{"data/s/committed"},
		staged: map[string]string{"tables/t/part-0.parquet": "data/s/staged"},
	}
	host := lakegc.Host{Staging: store, Commits: store, Committed: store}
	cfg := lakegc.Config{Bucket: bucket, Namespace: "mem://repo1", Repository: "repo1",
		Clock: func() time.Time { return time.Now().Add(48 * time.Hour) }, Include: []string{"data/s/"}}
	if err := lakegc.InitNamespace(ctx, cfg); err != nil {
		panic(err)
	}
	dry, err := lakegc.Collect(ctx, host, cfg) // a dry run
	if err != nil {
		panic(err)
	}
	page, next, err := lakegc.CandidatePage(ctx, cfg, dry.RunID, 0, 100)
	if err != nil {
		panic(err)
	}
	for _, c := range page {
		fmt.Println("candidate:", c.Address, c.Size, "bytes; more:", next != 0)
	}
	why, err := lakegc.Explain(ctx, host, cfg, dry.RunID, []string{"data/s/committed", "data/s/orphan"})
	if err != nil {
		panic(err)
	}
	for _, e := range why {
		if e.Commit != "" {
			fmt.Println(e.Address+":", e.Verdict, "by commit", e.Commit)
		} else {
			fmt.Println(e.Address+":", e.Verdict)
		}
	}
	swept, err := lakegc.SweepRun(ctx, cfg, dry.RunID)
	if err != nil { // lakegc.ErrSuperseded if a later mark exists
		panic(err)
	}
	fmt.Println("deleted:", swept.Sweep.Deleted)
	// Output:
	// candidate: data/s/orphan 13 bytes; more: false
	// data/s/committed: kept by commit c1
	// data/s/orphan: marked
	// deleted: 1
}
