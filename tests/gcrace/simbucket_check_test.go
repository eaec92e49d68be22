package gcrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

type listed struct {
	Key   string
	IsDir bool
	Size  int64
}

func listAll(ctx context.Context, t *testing.T, b *blob.Bucket, prefix, delim string, pageSize int) []listed {
	t.Helper()
	var out []listed
	tok := blob.FirstPageToken
	for {
		objs, next, err := b.ListPage(ctx, tok, pageSize, &blob.ListOptions{Prefix: prefix, Delimiter: delim})
		if err != nil {
			t.Fatalf("ListPage(%q, %q): %v", prefix, delim, err)
		}
		for _, o := range objs {
			out = append(out, listed{o.Key, o.IsDir, o.Size})
		}
		if len(next) == 0 {
			return out
		}
		tok = next
	}
}

// TestSimBucketListsLikeMemblob checks the test's bucket driver against
// memblob: the race test is only as good as the storage it runs on.
func TestSimBucketListsLikeMemblob(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	clock := &simClock{t: simStart}
	_, sim := newSimBucket(clock.Now)
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	parts := []string{"data", "a", "b", "ü", "_lakefs", "dummy", "x.y"}
	for i := 0; i < 300; i++ {
		n := 1 + rng.IntN(4)
		key := ""
		for j := range n {
			if j > 0 {
				key += "/"
			}
			key += parts[rng.IntN(len(parts))]
		}
		key += fmt.Sprint(rng.IntN(5))
		data := []byte(key)
		for _, b := range []*blob.Bucket{sim, mem} {
			if err := b.WriteAll(ctx, key, data, nil); err != nil {
				t.Fatal(err)
			}
		}
		clock.advance(time.Minute)
	}
	for _, prefix := range []string{"", "data", "data/", "a/", "a/b", "ü/", "zz"} {
		for _, delim := range []string{"", "/"} {
			for _, ps := range []int{1, 3, 1000} {
				got := listAll(ctx, t, sim, prefix, delim, ps)
				want := listAll(ctx, t, mem, prefix, delim, ps)
				if !slices.Equal(got, want) {
					t.Fatalf("List(%q, %q, page %d):\n got %v\nwant %v", prefix, delim, ps, got, want)
				}
			}
		}
	}

	// Modification times are the simulated clock's.
	clock.advance(48 * time.Hour)
	at := clock.Now()
	if err := sim.WriteAll(ctx, "data/new", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if a, err := sim.Attributes(ctx, "data/new"); err != nil || !a.ModTime.Equal(at) {
		t.Fatalf("Attributes = %v, %v; want ModTime %s", a, err, at)
	}
	it := sim.List(&blob.ListOptions{Prefix: "data/new"})
	if o, err := it.Next(ctx); err != nil || !o.ModTime.Equal(at) {
		t.Fatalf("List: %v, %v; want ModTime %s", o, err, at)
	}
	if _, err := it.Next(ctx); err != io.EOF {
		t.Fatalf("List: %v, want io.EOF", err)
	}

	// Missing keys are NotFound, as gocloud's callers expect.
	if err := sim.Delete(ctx, "data/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("Delete(missing) = %v, want NotFound", err)
	}
	if _, err := sim.ReadAll(ctx, "data/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("ReadAll(missing) = %v, want NotFound", err)
	}

	// A cancelled write leaves nothing behind.
	cctx, cancel := context.WithCancel(ctx)
	w, err := sim.NewWriter(cctx, "data/cancelled", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := w.Close(); err == nil {
		t.Fatal("Close after cancel succeeded")
	}
	if ok, err := sim.Exists(ctx, "data/cancelled"); ok || err != nil {
		t.Fatalf("Exists(cancelled) = %v, %v", ok, err)
	}

	// The delete hook sees every delete and can veto it.
	d, b := newSimBucket(clock.Now)
	if err := b.WriteAll(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	veto := errors.New("veto")
	d.setHooks(nil, func(string) error { return veto })
	if err := b.Delete(ctx, "k"); !errors.Is(err, veto) {
		t.Fatalf("Delete with veto = %v", err)
	}
	if !d.exists("k") {
		t.Fatal("vetoed delete deleted")
	}
}
