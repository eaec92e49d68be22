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

// A host whose committed data is immutable parts (lakeFS's ranges) hands
// them over as Parts: the next run, starting from this one, reads only the
// parts that appeared or left since.
func ExampleParts() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	slice := "data/" + sliceName(time.Now()) + "/"
	a, b, c := slice+objName(1), slice+objName(2), slice+objName(3)
	for _, k := range []string{a, b, c} {
		if err := bucket.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			log.Fatal(err)
		}
	}
	// Each part's keys, sorted; an ID names its keys for ever.
	parts := map[string][]string{"range-1": {a, b}, "range-2": {b, c}, "range-3": {c}}
	open := func(_ context.Context, id string) iter.Seq2[string, error] { return keys(parts[id]...) }
	now := time.Now().Add(48 * time.Hour)
	mark := func(run, previous string, ids ...string) {
		sum, err := sweep.Mark(ctx, bucket, run, sweep.Inputs{
			Uncommitted: keys(),
			Parts:       &sweep.Parts{IDs: ids, Open: open},
			ExportStart: now,
		}, sweep.WithClock(func() time.Time { return now }), sweep.WithPrevious(previous))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s run, keep set from %s, %d parts read, %d marked\n", run, sum.RunKind, sum.KeepSource, sum.PartsRead, sum.NumDeletedObjects)
	}
	mark("run-1", "", "range-1", "range-2")
	// range-1 left (a loses its only part, b keeps range-2), range-3 came.
	mark("run-2", "run-1", "range-2", "range-3")
	// Output:
	// run-1: clean run, keep set from parts, 2 parts read, 0 marked
	// run-2: optimized run, keep set from parts-changed, 2 parts read, 1 marked
}
