package main

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/rs/xid"
	"gocloud.dev/blob/driver"
)

// smallConfig writes the inputs of a namespace of keys keys in nSlices
// slices under a temporary folder.
func smallConfig(t *testing.T, keys, nSlices int) *config {
	t.Helper()
	l, err := newLayout(keys, nSlices)
	if err != nil {
		t.Fatal(err)
	}
	c := &config{dir: t.TempDir(), layout: l, memory: 256 << 20,
		duck: duckOptions{memory: 256 << 20, threads: 2, filter: true}}
	if _, err := writeInputs(c.dir, l); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAgree runs every phase at 200 K keys and checks that DuckDB and Mark,
// from either source, write exactly the expected candidates, and that the
// inputs phases read every key.
func TestAgree(t *testing.T) {
	c := smallConfig(t, 200_000, 20)
	var want model
	var err error
	if want.count, want.sum, err = digest(c.layout.candidates()); err != nil {
		t.Fatal(err)
	}
	if want.count != 50_000 {
		t.Fatalf("the model has %d candidates, want a quarter of 200000", want.count)
	}
	ctx := context.Background()
	for _, p := range allPhases {
		st, err := runPhase(ctx, c, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := verify(ctx, c, st, want); err != nil {
			t.Error(err)
		}
		if st.Wall <= 0 || st.PeakRSS <= 0 {
			t.Errorf("%s: measured %+v", p, st)
		}
	}
}

// TestVerifyRefuses checks that verify rejects a result that differs from
// the model by one key, or reports another count than it wrote.
func TestVerifyRefuses(t *testing.T) {
	c := smallConfig(t, 4000, 4)
	ctx := context.Background()
	st, err := runPhase(ctx, c, phaseDuck)
	if err != nil {
		t.Fatal(err)
	}
	var want model
	if want.count, want.sum, err = digest(c.layout.candidates()); err != nil {
		t.Fatal(err)
	}
	if err := verify(ctx, c, st, want); err != nil {
		t.Fatal(err)
	}
	// The model without its last candidate.
	var short []string
	for k := range c.layout.candidates() {
		short = append(short, k)
	}
	short = short[:len(short)-1]
	var fewer model
	if fewer.count, fewer.sum, err = digest(seqOf(short)); err != nil {
		t.Fatal(err)
	}
	if err := verify(ctx, c, st, fewer); err == nil {
		t.Error("verify accepted a result with one more key than the model")
	}
	st.Rows++
	if err := verify(ctx, c, st, want); err == nil {
		t.Error("verify accepted a phase that reported one more row than it wrote")
	}
}

func seqOf(keys []string) func(func(string, error) bool) {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

// TestListing lists every slice page by page from both sources and checks
// the pages against the generator: ascending, at most 1000 keys, the
// listing's modification times; and that a parquet source resumes from a
// page token it did not hand out (a fresh source seeks to the row).
func TestListing(t *testing.T) {
	c := smallConfig(t, 5_000, 2) // 2500 a slice: pages of 1000, 1000, 500
	ps, err := newParquetSource(filepath.Join(c.dir, listingDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ps.slices(), c.layout.names) {
		t.Fatalf("parquet source slices %v, want %v", ps.slices(), c.layout.names)
	}
	ctx := context.Background()
	for name, src := range map[string]source{"gen": genSource{c.layout}, "parquet": ps} {
		b := &benchBucket{src: src, index: map[string]int{}, root: t.TempDir()}
		for i, s := range src.slices() {
			b.index[s] = i
		}
		for i, s := range c.layout.names {
			var got []string
			var token []byte
			pages := 0
			for {
				page, err := b.ListPaged(ctx, &driver.ListOptions{Prefix: "data/" + s + "/", PageToken: token})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				pages++
				if len(page.Objects) > pageSize {
					t.Fatalf("%s: a page of %d keys", name, len(page.Objects))
				}
				for _, o := range page.Objects {
					if !o.ModTime.Equal(modTime) {
						t.Fatalf("%s: %s modified %v, want %v", name, o.Key, o.ModTime, modTime)
					}
					got = append(got, o.Key)
				}
				if token = page.NextPageToken; len(token) == 0 {
					break
				}
			}
			var want []string
			var buf []byte
			for j := range c.layout.PerSlice {
				want = append(want, string(c.layout.appendKey(buf[:0], i, j)))
			}
			if !slices.Equal(got, want) || !slices.IsSorted(got) || pages != 3 {
				t.Fatalf("%s: slice %d listed %d keys in %d pages, want %d in 3", name, i, len(got), pages, len(want))
			}
		}
	}
	// A fresh source asked for the second page of slice 1.
	ps2, err := newParquetSource(filepath.Join(c.dir, listingDir))
	if err != nil {
		t.Fatal(err)
	}
	objs, next, err := ps2.page(1, 1000, pageSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	gen, gnext, _ := genSource{c.layout}.page(1, 1000, pageSize, nil)
	if next != gnext || len(objs) != len(gen) || objs[0].Key != gen[0].Key || objs[len(objs)-1].Key != gen[len(gen)-1].Key {
		t.Fatalf("resumed page: %d keys from %s, next %d; want %d from %s, next %d", len(objs), objs[0].Key, next, len(gen), gen[0].Key, gnext)
	}
}

// TestBucketRefuses checks that the bucket refuses what Mark never asks of
// it (reading or deleting a data object, listing the data folder whole) and
// keeps report objects, so that an unexpected use fails loudly.
func TestBucketRefuses(t *testing.T) {
	c := smallConfig(t, 400, 2)
	bucket := newBenchBucket(genSource{c.layout}, t.TempDir())
	ctx := context.Background()
	key := string(c.layout.appendKey(nil, 0, 0))
	if _, err := bucket.ReadAll(ctx, key); err == nil {
		t.Error("read a data object")
	}
	if err := bucket.Delete(ctx, key); err == nil {
		t.Error("deleted a data object")
	}
	if _, _, err := bucket.ListPage(ctx, nil, 10, nil); err == nil {
		t.Error("listed the whole bucket without a delimiter")
	}
	if err := bucket.WriteAll(ctx, "_lakefs/x/y", []byte("report"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := bucket.ReadAll(ctx, "_lakefs/x/y")
	if err != nil || string(got) != "report" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

// TestLayout checks the generated keys: every key has the shape of sweep's
// benchmark, data/<20-character slice xid>/o<18 digits>0, which Mark's
// default recognizer accepts (a key it does not is never a candidate), the
// slices are distinct and sorted, and the keep sets and the candidates
// partition the keys.
func TestLayout(t *testing.T) {
	l, err := newLayout(4000, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newLayout(4001, 8); err == nil {
		t.Error("4001 keys divided into 8 slices")
	}
	if _, err := newLayout(int(maxPerSlice+1), 1); err == nil {
		t.Error("newLayout accepted a slice of 10^18+1 objects, more than 18 digits number")
	}
	big, err := newLayout(int(maxPerSlice), 1)
	if err != nil {
		t.Fatal(err)
	}
	if k := string(big.appendKey(nil, 0, int(maxPerSlice-1))); len(k) != 46 || !recognized(k) {
		t.Errorf("the last key of the largest slice, %q, is not a recognized key of 46 bytes", k)
	}
	if !slices.IsSorted(l.names) || len(slices.Compact(slices.Clone(l.names))) != 8 {
		t.Fatalf("slice names %v", l.names)
	}
	// Slice i (in name order, newest first) started 100+i hours before t0,
	// as lakeFS's reversed slice time says: age protects no object.
	for i, name := range l.names {
		id, err := xid.FromString(name)
		if err != nil {
			t.Fatalf("slice %q: %v", name, err)
		}
		if got, want := pathprovider.DescendingTime(id), t0.Add(-time.Duration(100+i)*time.Hour); !got.Equal(want) {
			t.Fatalf("slice %d (%s) started %v, want %v", i, name, got, want)
		}
	}
	seen := map[string]int{}
	for _, f := range []func(int) bool{isUncommitted, isCommitted} {
		for k := range l.keepSeq(f) {
			seen[k]++
		}
	}
	for k := range l.candidates() {
		seen[k]++
	}
	if len(seen) != l.total() {
		t.Fatalf("%d distinct keys, want %d", len(seen), l.total())
	}
	for k, n := range seen {
		rest, ok := strings.CutPrefix(k, "data/")
		if n != 1 || !ok || len(rest) != 41 || rest[20:22] != "/o" {
			t.Fatalf("key %q seen %d times", k, n)
		}
		if !recognized(k) {
			t.Fatalf("key %q is not one Mark recognizes as lakeFS's: it would never be a candidate", k)
		}
		if _, err := strconv.ParseUint(rest[22:], 10, 64); err != nil {
			t.Fatalf("key %q: %v", k, err)
		}
	}
}

// recognized is Mark's default recognizer, with the default data folder.
var recognized = sweep.DefaultRecognizer("")
