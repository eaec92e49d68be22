package crosscheck_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	arrowcompress "github.com/apache/arrow-go/v18/parquet/compress"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/s3test"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
)

// namespace is a synthetic storage namespace: its objects, the keep set,
// and the keys a mark must pick.
type namespaceModel struct {
	keep, garbage []string
}

// fillNamespace writes objects in several slices of data/, legacy
// top-level objects, lakeFS's dummy, and objects a GC never scans
// (_lakefs/, other folders); it keeps a random half of the scanned ones.
func fillNamespace(t *testing.T, bucket *blob.Bucket, rng *rand.Rand, objects int) namespaceModel {
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(-72 * time.Hour)
	now := start
	paths, err := pathprovider.New(pathprovider.WithClock(func() time.Time { return now }), pathprovider.WithPartitionSize(17))
	if err != nil {
		t.Fatal(err)
	}
	var m namespaceModel
	put := func(key string, scanned bool) {
		if err := bucket.WriteAll(ctx, key, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		switch {
		case !scanned:
		case rng.IntN(2) == 0:
			m.keep = append(m.keep, key)
		default:
			m.garbage = append(m.garbage, key)
		}
	}
	for i := range objects {
		now = start.Add(time.Duration(i) * time.Minute)
		put(paths.NewPath(), true)
	}
	for i := range 5 {
		put(fmt.Sprintf("000000000000400080%014x", 0x1e9a+i), true) // the old flat layout: hex of a version 4 UUID
	}
	put("dummy", false)
	put("_lakefs/retention/gc/rules/config.json", false)
	put("other/folder/object", false)
	return m
}

func seq(keys []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

// listParts returns the Parquet parts of a report folder.
func listParts(t *testing.T, bucket *blob.Bucket, dir string) []string {
	t.Helper()
	var keys []string
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		name := obj.Key[strings.LastIndex(obj.Key, "/")+1:]
		if !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".") {
			keys = append(keys, obj.Key)
		}
	}
}

// readReport reads every part of a report folder with Arrow, checks each
// part's layout, and returns its string columns' values, by column name.
func readReport(t *testing.T, bucket *blob.Bucket, dir string, columns ...string) map[string][]string {
	t.Helper()
	parts := listParts(t, bucket, dir)
	if len(parts) == 0 {
		t.Fatalf("no part in %s", dir)
	}
	values := map[string][]string{}
	for _, key := range parts {
		data, err := bucket.ReadAll(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		f := readWithArrow(t, data)
		if n := f.schema.NumColumns(); n != len(columns) {
			t.Fatalf("%s: %d columns, want %d", key, n, len(columns))
		}
		for i, name := range columns {
			reportProblems(t, key, f.stringColumnProblems(i, name))
			values[name] = append(values[name], f.columns[name].([]string)...)
		}
		if f.numRows > 0 {
			// Snappy is the codec lakeFS's Spark client writes, and the one
			// package sweep documents.
			reportProblems(t, key, f.pageProblems(arrowcompress.Codecs.Snappy))
		}
	}
	return values
}

func TestArrowReadsSweepReport(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := fillNamespace(t, bucket, rand.New(rand.NewPCG(7, 7)), 600)

	// Now is far enough ahead that every object is older than the cutoff.
	later := time.Now().Add(30 * 24 * time.Hour)
	clock := sweep.WithClock(func() time.Time { return later })
	half := len(m.keep) / 2
	sum, err := sweep.Mark(ctx, bucket, "crosscheck", sweep.Inputs{
		Uncommitted: seq(m.keep[:half]),
		Committed:   seq(m.keep[half:]),
		ExportStart: later,
	}, clock, sweep.WithMemoryBudget(16<<10))
	if err != nil {
		t.Fatalf("Mark: %v", err)
	}
	if sum.NumDeletedObjects != int64(len(m.garbage)) {
		t.Errorf("summary counts %d candidates, want %d", sum.NumDeletedObjects, len(m.garbage))
	}

	got := readReport(t, bucket, "_lakefs/retention/gc/unified/crosscheck/deleted/", "address")["address"]
	slices.Sort(got)
	want := slices.Sorted(slices.Values(m.garbage))
	if !slices.Equal(got, want) {
		t.Errorf("Arrow read %d addresses from deleted/, want %d", len(got), len(want))
	}
	var viaSweep []string
	for key, err := range sweep.Candidates(ctx, bucket, sweep.DefaultStoragePrefix, "crosscheck") {
		if err != nil {
			t.Fatal(err)
		}
		viaSweep = append(viaSweep, key)
	}
	slices.Sort(viaSweep)
	if !slices.Equal(viaSweep, got) {
		t.Errorf("sweep.Candidates and Arrow disagree: %d vs %d addresses", len(viaSweep), len(got))
	}
}

// A sweep against the S3-protocol server where some deletes are refused:
// the refused keys land in failed/ (address, error), which Arrow reads.
func TestArrowReadsSweepFailures(t *testing.T) {
	ctx := context.Background()
	var refused sync.Map // keys the server refuses to delete
	refuse := func(key string) bool { _, ok := refused.Load(key); return ok }
	srv := s3test.Start(t, s3test.WithFailingDeletes(refuse), s3test.WithMaxKeys(25))
	bucket := srv.Bucket(t, "crosscheck")
	m := fillNamespace(t, bucket, rand.New(rand.NewPCG(8, 8)), 150)
	for i, key := range m.garbage {
		if i%5 == 0 {
			refused.Store(key, true)
		}
	}

	later := time.Now().Add(30 * 24 * time.Hour)
	clock := sweep.WithClock(func() time.Time { return later })
	if _, err := sweep.Mark(ctx, bucket, "failures", sweep.Inputs{
		Uncommitted: seq(m.keep), Committed: seq(nil), ExportStart: later,
	}, clock); err != nil {
		t.Fatalf("Mark: %v", err)
	}
	res, err := sweep.Sweep(ctx, bucket, "failures", clock)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	var wantFailed []string
	for _, k := range m.garbage {
		if refuse(k) {
			wantFailed = append(wantFailed, k)
		}
	}
	slices.Sort(wantFailed)
	if res.Failed != int64(len(wantFailed)) || res.Deleted != int64(len(m.garbage)-len(wantFailed)) {
		t.Errorf("Sweep = %+v, want %d deleted and %d failed", *res, len(m.garbage)-len(wantFailed), len(wantFailed))
	}

	report := readReport(t, bucket, "_lakefs/retention/gc/unified/failures/failed/", "address", "error")
	got := slices.Clone(report["address"])
	slices.Sort(got)
	if !slices.Equal(got, wantFailed) {
		t.Errorf("failed/ lists %q, want %q", got, wantFailed)
	}
	for i, msg := range report["error"] {
		if msg == "" {
			t.Errorf("failed/ row %d (%s) has no error message", i, report["address"][i])
		}
	}
}

// A mark that keeps everything leaves deleted/ without a part or with one
// empty part; either way Arrow reads a schema and no address.
func TestArrowReadsEmptySweepReport(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	m := fillNamespace(t, bucket, rand.New(rand.NewPCG(9, 9)), 50)
	later := time.Now().Add(30 * 24 * time.Hour)
	keep := append(slices.Clone(m.keep), m.garbage...)
	sum, err := sweep.Mark(ctx, bucket, "empty", sweep.Inputs{
		Uncommitted: seq(keep), Committed: seq(nil), ExportStart: later,
	}, sweep.WithClock(func() time.Time { return later }))
	if err != nil {
		t.Fatalf("Mark: %v", err)
	}
	if sum.NumDeletedObjects != 0 {
		t.Errorf("summary counts %d candidates, want 0", sum.NumDeletedObjects)
	}
	dir := "_lakefs/retention/gc/unified/empty/deleted/"
	for _, key := range listParts(t, bucket, dir) {
		data, err := bucket.ReadAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		f := readWithArrow(t, data)
		reportProblems(t, key, f.stringColumnProblems(0, "address"))
		if f.numRows != 0 {
			t.Errorf("%s: %d rows, want none", key, f.numRows)
		}
	}
}
