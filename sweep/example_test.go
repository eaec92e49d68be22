package sweep_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"log"
	"strings"
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
	// Objects named as lakeFS names them: in a slice, and one of the old
	// flat layout; beside them, files lakeFS never wrote.
	slice := "data/" + sliceName(time.Now()) + "/"
	live, garbage := slice+objName(1), slice+objName(2)
	legacy := "0123456789ab4def8123456789abcdef" // hex of a version 4 UUID
	label := map[string]string{garbage: "data/<slice>/<garbage>", legacy: legacy}
	for _, k := range []string{live, garbage, legacy, "README.txt", "data/imports/table.parquet", "_lakefs/config"} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	// Objects just written are younger than any cutoff; pretend two days
	// have passed since the export.
	now := time.Now().Add(48 * time.Hour)
	sum, err := sweep.Mark(ctx, bucket, "run-1", sweep.Inputs{
		Uncommitted: keys(live),
		Committed:   keys(),
		ExportStart: now,
	}, sweep.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("marked:", sum.NumDeletedObjects)
	fmt.Println("unrecognized, kept:", sum.UnrecognizedSample)
	for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", "run-1") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("candidate:", label[key])
	}
	res, err := sweep.Sweep(ctx, bucket, "run-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted:", res.Deleted)
	// Output:
	// marked: 2
	// unrecognized, kept: [README.txt data/imports/table.parquet]
	// candidate: 0123456789ab4def8123456789abcdef
	// candidate: data/<slice>/<garbage>
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

// objName is the n-th object name of the examples, an xid as lakeFS names
// an object in a slice.
func objName(n byte) string {
	var id xid.ID
	binary.BigEndian.PutUint32(id[:4], 0x6a000000)
	id[11] = n
	return id.String()
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
	a, b, c := objName(1), objName(2), objName(3)
	label := map[string]string{a: "a", b: "b", c: "c"}
	for _, k := range []string{old + a, old + b, recent + c} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	run := func(runID string, at time.Time, keep iter.Seq2[string, error], opts ...sweep.MarkOption) {
		opts = append(opts, sweep.WithClock(func() time.Time { return at }))
		sum, err := sweep.Mark(ctx, bucket, runID, sweep.Inputs{Uncommitted: keep, Committed: keys(), ExportStart: at}, opts...)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s run, %d slices listed, %d skipped, %d marked\n",
			runID, sum.RunKind, sum.SlicesListed, sum.SlicesSkipped, sum.NumDeletedObjects)
	}
	run("run-1", now, keys(old+a, old+b, recent+c))
	previous, err := sweep.LatestRun(ctx, bucket, "_lakefs")
	if err != nil {
		log.Fatal(err)
	}
	// A day later, old+b is no longer referenced.
	run("run-2", now.Add(24*time.Hour), keys(old+a, recent+c), sweep.WithPrevious(previous))
	for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", "run-2") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("candidate:", label[key[len(old):]])
	}
	// Output:
	// run-1: clean run, 2 slices listed, 0 skipped, 0 marked
	// run-2: optimized run, 1 slices listed, 1 skipped, 1 marked
	// candidate: b
}

// fixedSliceName is a slice's name for the start time, with the xid's
// other bytes fixed (pathprovider fills them from the machine, process and
// a counter), so that the example's slices land in the same shards on
// every run.
func fixedSliceName(start time.Time, n byte) string {
	var id xid.ID
	binary.BigEndian.PutUint32(id[:4], uint32(64060588800-start.Unix()))
	id[11] = n
	return id.String()
}

// A host runs the shards of a mark as jobs, on as many machines, each with
// the whole keep set and its own run ID, and sweeps every shard's run: the
// shards' candidates are disjoint, and together they are what one Mark
// would mark.
func ExampleWithShard() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	// Objects written now, in three slices started last year and in the
	// old flat layout; the marks take place two days later.
	now := time.Now().Add(48 * time.Hour)
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	short := map[string]string{} // a slice's name → a short one for the output
	liveName, garbageName := objName(1), objName(2)
	legacy := "0123456789ab4def8123456789abcdef" // the old flat layout: hex of a version 4 UUID
	short[liveName], short[garbageName], short[legacy] = "live", "garbage", "legacy-garbage"
	var live, all []string
	for i := range byte(3) {
		name := fixedSliceName(start.Add(time.Duration(i)*time.Hour), i)
		short[name] = fmt.Sprintf("slice%d", i)
		fmt.Printf("slice%d: shard %d\n", i, sweep.SliceShard(name, 2))
		live = append(live, "data/"+name+"/"+liveName)
		all = append(all, "data/"+name+"/"+liveName, "data/"+name+"/"+garbageName)
	}
	all = append(all, legacy)
	for _, k := range all {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	const shards = 2
	for i := range shards {
		// Job i of the host's job system, on any machine.
		runID := fmt.Sprintf("run-1-shard-%d", i)
		sum, err := sweep.Mark(ctx, bucket, runID, sweep.Inputs{
			Uncommitted: keys(live...),
			Committed:   keys(),
			ExportStart: now,
		}, sweep.WithShard(i, shards), sweep.WithClock(func() time.Time { return now }))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: shard %d of %d, %d marked\n", runID, sum.ShardIndex, sum.ShardCount, sum.NumDeletedObjects)
		for key, err := range sweep.Candidates(ctx, bucket, "_lakefs", runID) {
			if err != nil {
				log.Fatal(err)
			}
			if strings.HasPrefix(key, "data/") {
				key = "data/" + short[key[5:25]] + "/" + short[key[26:]]
			} else {
				key = short[key]
			}
			fmt.Println("  candidate:", key)
		}
	}
	// Sweeping every shard's run is sweeping the one run they make.
	var deleted int64
	for i := range shards {
		res, err := sweep.Sweep(ctx, bucket, fmt.Sprintf("run-1-shard-%d", i))
		if err != nil {
			log.Fatal(err)
		}
		deleted += res.Deleted
	}
	fmt.Println("deleted:", deleted)
	// Output:
	// slice0: shard 1
	// slice1: shard 1
	// slice2: shard 0
	// run-1-shard-0: shard 0 of 2, 2 marked
	//   candidate: legacy-garbage
	//   candidate: data/slice2/garbage
	// run-1-shard-1: shard 1 of 2, 2 marked
	//   candidate: data/slice1/garbage
	//   candidate: data/slice0/garbage
	// deleted: 4
}
