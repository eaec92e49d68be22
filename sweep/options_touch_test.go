package sweep

import (
	"context"
	"errors"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"
)

// An invalid option fails Mark before it reads or writes anything: a failed
// run of the same ID keeps its summary and candidates, and nothing is
// written for a new one.
func TestInvalidOptionTouchesNothing(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	dir := reportDir(DefaultStoragePrefix, "run1")
	for _, key := range []string{dir + "summary.json", dir + "deleted/part-0.parquet"} {
		if err := b.WriteAll(ctx, key, []byte(`{"run_id":"run1","success":false}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	for name, opt := range map[string]MarkOption{
		"shard":       WithShard(3, 2),
		"concurrency": WithListConcurrencyRange(4, 2),
		"min age":     WithMinAge(-time.Hour),
	} {
		for _, id := range []string{"run1", "run2"} {
			_, err := Mark(ctx, b, id, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, opt)
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("%s, %s: %v", name, id, err)
			}
		}
	}
	var keys []string
	it := b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err != nil {
			break
		}
		keys = append(keys, o.Key)
	}
	if len(keys) != 2 {
		t.Errorf("the bucket holds %q, want only what was there before", keys)
	}
	s, err := b.ReadAll(ctx, dir+"deleted/part-0.parquet")
	if err != nil || string(s) != `{"run_id":"run1","success":false}` {
		t.Errorf("the failed run's candidates changed: %q, %v", s, err)
	}
}
