package sweep_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"github.com/rs/xid"
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

// sliceName is a slice's name as package pathprovider makes it: the xid of
// the year 4000 minus the slice's start time, so newer slices sort first.
func sliceName(start time.Time) string {
	return xid.NewWithTime(time.Unix(64060588800-start.Unix(), 0)).String()
}

// An optimized run starts from the previous run: it lists the slices from
// the previous run's newest one less the margin, and judges the older ones
// from that run's records.
func ExampleWithPrevious() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	// The objects were written now; the runs take place a month later.
	now := time.Now().Add(30 * 24 * time.Hour)
	old := "data/" + sliceName(now.Add(-20*24*time.Hour)) + "/"
	recent := "data/" + sliceName(now.Add(-5*24*time.Hour)) + "/"
	for _, k := range []string{old + "a", old + "b", recent + "c"} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	run := func(runID string, at time.Time, keep iter.Seq2[string, error], opts ...sweep.Option) {
		opts = append(opts, sweep.WithClock(func() time.Time { return at }))
		sum, err := sweep.Mark(ctx, bucket, runID, sweep.Inputs{Uncommitted: keep, Committed: keys(), ExportStart: at}, opts...)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s run, %d slices listed, %d skipped, %d marked\n",
			runID, sum.RunKind, sum.SlicesListed, sum.SlicesSkipped, sum.NumDeletedObjects)
	}
	run("run-1", now, keys(old+"a", old+"b", recent+"c"))
	previous, err := sweep.LatestRun(ctx, bucket, "_lakefs")
	if err != nil {
		log.Fatal(err)
	}
	// A day later, old+"b" is no longer referenced.
	run("run-2", now.Add(24*time.Hour), keys(old+"a", recent+"c"), sweep.WithPrevious(previous))
	for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", "run-2") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("candidate:", key[len(old):])
	}
	// Output:
	// run-1: clean run, 2 slices listed, 0 skipped, 0 marked
	// run-2: optimized run, 1 slices listed, 1 skipped, 1 marked
	// candidate: b
}
