package inventory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/sweep"
)

// TestModelOptimizedAfterInventory: an inventory run is clean and leaves
// the records (the keep index) an optimized run starts from. On the
// model's namespaces, with a keep set that lost some keys since, the
// optimized run from the inventory run marks what a clean listing marks
// then, and at most the objects the report named that are gone (their
// delete is a no-op): never a live key.
func TestModelOptimizedAfterInventory(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	optimized := 0
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			if checkOptimizedAfter(t, uint64(seed)) {
				optimized++
			}
		})
	}
	if optimized == 0 {
		t.Fatal("no run was optimized with slices skipped")
	}
}

func checkOptimizedAfter(t *testing.T, seed uint64) bool {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 2928))
	m := newModel(rng)
	dir := t.TempDir()
	m.write(t, filepath.Join(dir, "src", "ns"))
	store, err := fileblob.OpenBucket(filepath.Join(dir, "src", "ns"), &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dest := memblob.OpenBucket(nil)
	defer dest.Close()
	mkey := writeS3(t, dest, "inv/", s3Report{Source: "src", Time: m.report, Format: "CSV", Files: 1, Rows: m.reportRows(rng, ""), Version: true})
	rep, err := OpenS3(ctx, dest, mkey, "s3://src/ns", WithClock(func() time.Time { return m.now }))
	if err != nil {
		t.Fatal(err)
	}
	opts := func(more ...sweep.MarkOption) []sweep.MarkOption {
		return append([]sweep.MarkOption{sweep.WithClock(func() time.Time { return m.now }), sweep.WithTempDir(t.TempDir())}, more...)
	}
	runI := xid.New().String()
	if _, err := sweep.Mark(ctx, store, runI, m.inputs(), opts(sweep.WithInventory(rep))...); err != nil {
		t.Fatal(err)
	}
	// Some kept objects lose their last reference.
	for _, o := range m.objects {
		if o.kept && rng.IntN(3) == 0 {
			o.kept = false
		}
	}
	runL, runO := xid.New().String(), xid.New().String()
	if _, err := sweep.Mark(ctx, store, runL, m.inputs(), opts()...); err != nil {
		t.Fatal(err)
	}
	sumO, err := sweep.Mark(ctx, store, runO, m.inputs(), opts(sweep.WithPrevious(runI))...)
	if err != nil {
		t.Fatal(err)
	}
	candL, candO := candidates(t, store, runL), candidates(t, store, runO)
	gone, live := map[string]bool{}, map[string]bool{}
	for _, k := range m.keepExtra {
		live[k] = true
	}
	for _, o := range m.objects {
		gone[o.key] = o.gone
		if o.kept || !o.gone && !o.mod.Before(m.cutoff) {
			live[o.key] = true
		}
	}
	for _, k := range candO {
		if live[k] {
			t.Fatalf("live key %q marked by the optimized run", k)
		}
		if !gone[k] && !slices.Contains(candL, k) {
			t.Fatalf("optimized run (%s, %s) marks %q, which the clean run keeps", sumO.RunKind, sumO.CleanReason, k)
		}
	}
	for _, k := range candL {
		if !slices.Contains(candO, k) {
			t.Fatalf("optimized run (%s, %s) misses %q, which the clean run marks", sumO.RunKind, sumO.CleanReason, k)
		}
	}
	t.Logf("%s run: %d slices skipped, %d listed; %d candidates, the clean run's %d", sumO.RunKind, sumO.SlicesSkipped, sumO.SlicesListed, len(candO), len(candL))
	return sumO.RunKind == sweep.RunOptimized && sumO.SlicesSkipped > 0
}
