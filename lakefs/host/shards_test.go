package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
)

func seqOf(keys []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

// markWorld writes a random namespace of lakeFS's shape into a memblob,
// returns it and a keep set of some of its objects, and marks it as of two
// days later with opts.
func markWorld(t *testing.T, r *rand.Rand) (b *blob.Bucket, mark func(runID string, opts ...sweep.MarkOption) *sweep.Summary) {
	t.Helper()
	ctx := context.Background()
	b = memblob.OpenBucket(nil)
	base := time.Now().Add(-100 * 24 * time.Hour)
	var keep []string
	for range 5 + r.IntN(40) {
		made := base.Add(time.Duration(r.IntN(90*24)) * time.Hour)
		slice := pathprovider.DescendingID(made).String()
		for range 1 + r.IntN(4) {
			key := "data/" + slice + "/" + pathprovider.DescendingID(made.Add(time.Duration(r.IntN(1<<20))*time.Millisecond)).String()
			if err := b.WriteAll(ctx, key, []byte(key), nil); err != nil {
				t.Fatal(err)
			}
			if r.IntN(3) == 0 {
				keep = append(keep, key)
			}
		}
	}
	if err := b.WriteAll(ctx, "_lakefs/dummy", nil, nil); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(48 * time.Hour)
	return b, func(runID string, opts ...sweep.MarkOption) *sweep.Summary {
		t.Helper()
		opts = append([]sweep.MarkOption{sweep.WithClock(func() time.Time { return later }), sweep.WithTempDir(t.TempDir())}, opts...)
		sum, err := sweep.Mark(ctx, b, runID, sweep.Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: later}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
}

// TestCombineShards: on random namespaces, the n shards' runs, given in any
// order, combine to the counts of one unsharded run of the same namespace
// (the model), and the combined summary names each shard's run.
func TestCombineShards(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 29))
	for round := range 20 {
		b, mark := markWorld(t, r)
		full := mark(fmt.Sprintf("full%d", round))
		if full.NumDeletedObjects == 0 || full.NumKeptObjects == 0 {
			t.Fatalf("round %d: a world without garbage or without live objects: %+v", round, full)
		}
		n := 2 + r.IntN(5)
		ids := make([]string, n)
		for i := range n {
			ids[i] = fmt.Sprintf("shard%dof%d", i, n)
			mark(ids[i], sweep.WithShard(i, n))
		}
		given := slices.Clone(ids)
		r.Shuffle(n, func(i, j int) { given[i], given[j] = given[j], given[i] })
		got, err := CombineShards(context.Background(), b, given...)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got.Shards != n || !slices.Equal(got.RunIDs, ids) {
			t.Fatalf("round %d: shards %d runs %v, want %d %v", round, got.Shards, got.RunIDs, n, ids)
		}
		if got.NumDeletedObjects != full.NumDeletedObjects || got.NumKeptObjects != full.NumKeptObjects ||
			got.NumYoungObjects != full.NumYoungObjects || got.SlicesListed != full.SlicesListed ||
			!got.FirstCutoff.Equal(full.CutoffTime) || !got.LastCutoff.Equal(full.CutoffTime) {
			t.Fatalf("round %d, %d shards: combined %+v, one run %+v", round, n, got, full)
		}
	}
}

// TestCombineShardsRefuses: a combined summary covers the whole mark or is
// refused: a shard missing or twice, runs of other counts, an unsharded
// run, no runs, a run that does not exist.
func TestCombineShardsRefuses(t *testing.T) {
	ctx := context.Background()
	b, mark := markWorld(t, rand.New(rand.NewPCG(1, 1)))
	mark("full")
	for i := range 3 {
		mark(fmt.Sprintf("s%dof3", i), sweep.WithShard(i, 3))
	}
	mark("s0of2", sweep.WithShard(0, 2))
	for _, ids := range [][]string{
		{"s0of3", "s1of3"},
		{"s0of3", "s1of3", "s1of3", "s2of3"},
		{"s0of3", "s1of3", "s2of3", "s0of2"},
		{"s0of2", "s0of3", "s1of3", "s2of3"},
		{"full"},
		{"full", "s0of3", "s1of3", "s2of3"},
		{},
	} {
		if _, err := CombineShards(ctx, b, ids...); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v: %v, want ErrInvalidInput", ids, err)
		}
	}
	if _, err := CombineShards(ctx, b, "s0of3", "s1of3", "nope"); !errors.Is(err, sweep.ErrNoRun) {
		t.Errorf("a run that does not exist: %v, want sweep.ErrNoRun", err)
	}
	if _, err := CombineShards(ctx, b, "s2of3", "s0of3", "s1of3"); err != nil {
		t.Errorf("the three shards: %v", err)
	}
}
