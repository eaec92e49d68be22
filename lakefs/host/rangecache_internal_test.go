package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
)

func rangeID(i int) string { return fmt.Sprintf("%064x", i) }

// cacheState writes runs' report folders, their records and caches.
func cacheState(t *testing.T, reports []string, records map[string][]string, caches []string) *blob.Bucket {
	t.Helper()
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	for _, r := range reports {
		if err := b.WriteAll(ctx, layout.RunPath(storagePrefix, layout.Report, r)+"summary.json", []byte("{}"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for run, ids := range records {
		if err := writeRunRecord(ctx, b, run, ids); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range caches {
		if err := b.WriteAll(ctx, layout.RangeCache(storagePrefix)+c, []byte("cache"), nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func left(t *testing.T, b *blob.Bucket, folder string) []string {
	t.Helper()
	l, err := listFolder(context.Background(), b, folder, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range l {
		out = append(out, strings.TrimPrefix(o.key, folder))
	}
	slices.Sort(out)
	return out
}

// TestPruneRangeCache: caches named by no kept run's record go, with the
// records of runs no longer kept; caches of kept runs, young caches and
// objects that are not caches stay; an unreadable record keeps all.
func TestPruneRangeCache(t *testing.T) {
	ctx := context.Background()
	later := time.Now().Add(48 * time.Hour) // past the grace
	all := []string{rangeID(1), rangeID(2), rangeID(3), rangeID(4), rangeID(5), "not-a-cache"}
	records := map[string][]string{
		"run-a": {rangeID(1), rangeID(2)},
		"run-b": {rangeID(2), rangeID(3)},
		"run-c": {rangeID(4)}, // pruned: no report folder
	}
	b := cacheState(t, []string{"run-a", "run-b", "run-spark"}, records, all)
	rep, err := pruneRangeCache(ctx, b, later)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{rangeID(1), rangeID(2), rangeID(3), "not-a-cache"}; !slices.Equal(left(t, b, layout.RangeCache(storagePrefix)), want) {
		t.Errorf("caches left %q, want %q", left(t, b, layout.RangeCache(storagePrefix)), want)
	}
	if want := []string{"run-a", "run-b"}; !slices.Equal(left(t, b, layout.RangeCacheRuns(storagePrefix)), want) {
		t.Errorf("records left %q", left(t, b, layout.RangeCacheRuns(storagePrefix)))
	}
	if rep.Caches != 2 || rep.Records != 1 || rep.Kept != 4 || rep.KeptAll != "" {
		t.Errorf("report %+v", rep)
	}

	// Within the grace: nothing goes.
	b = cacheState(t, []string{"run-a"}, records, all)
	if rep, err := pruneRangeCache(ctx, b, time.Now()); err != nil || rep.Caches+rep.Records != 0 {
		t.Errorf("within the grace: %+v, %v", rep, err)
	}

	// A record that does not parse (cut short, a stray line) keeps all.
	for name, body := range map[string]string{
		"cut short":  recordHeader + "\n" + rangeID(1) + "\n",
		"no header":  rangeID(1) + "\nend 1\n",
		"stray line": recordHeader + "\n../x\nend 1\n",
		"miscounted": recordHeader + "\n" + rangeID(1) + "\nend 2\n",
		"after end":  recordHeader + "\n" + rangeID(1) + "\nend 1\n" + rangeID(9) + "\n",
	} {
		b = cacheState(t, []string{"run-a", "run-b"}, records, all)
		if err := b.WriteAll(ctx, layout.RangeCacheRunKey(storagePrefix, "run-b"), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
		rep, err := pruneRangeCache(ctx, b, later)
		if err != nil || rep.KeptAll == "" || rep.Caches+rep.Records != 0 || len(left(t, b, layout.RangeCache(storagePrefix))) != len(all) {
			t.Errorf("%s: %+v, %v: want everything kept", name, rep, err)
		}
	}
}

// TestRunRecordRoundTrip: a record reads back as written.
func TestRunRecordRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, ids := range [][]string{nil, {rangeID(7)}, {rangeID(1), rangeID(2), rangeID(3)}} {
		b := cacheState(t, nil, map[string][]string{"r": ids}, nil)
		got, err := readRunRecord(ctx, b, layout.RangeCacheRunKey(storagePrefix, "r"))
		if err != nil || !slices.Equal(got, ids) {
			t.Errorf("%q: read %q, %v", ids, got, err)
		}
	}
}
