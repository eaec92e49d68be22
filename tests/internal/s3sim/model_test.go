package s3sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// TestListModel lists a store and memblob holding the same objects, with
// written keys that sort between synthesised ones, prefixes that cut
// through names, several delimiters, and writes and deletes between the
// pages of a listing: both must list the same entries, page by page,
// through the driver and through s3blob over HTTP.
func TestListModel(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(fmt.Sprintf("http=%v", overHTTP), func(t *testing.T) { testListModel(t, overHTTP) })
	}
}

func testListModel(t *testing.T, overHTTP bool) {
	ctx := context.Background()
	seeds := uint64(8)
	if overHTTP {
		seeds = 2 // a request over loopback costs a millisecond or so
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 7))
		desc := []Slice{
			{Prefix: "a/", Count: 1 + rng.IntN(50), Name: func(i int) string { return fmt.Sprintf("k%03d", 2*i) }, ModTime: old, Size: 1},
			{Prefix: "a/s/", Count: 1 + rng.IntN(300), ModTime: old, Size: 2},
			{Prefix: "b/", Count: 1 + rng.IntN(100), Name: func(i int) string { return fmt.Sprintf("d%02d/o%03d", i/7, i) }, ModTime: old, Size: 3},
		}
		store, err := New(desc, WithLatency(NoLatency), WithRates(math.Inf(1), math.Inf(1)))
		if err != nil {
			t.Fatal(err)
		}
		sim, mem := simBucket(t, store, overHTTP), memblob.OpenBucket(nil)
		var keys []string
		for _, d := range desc {
			if d.Name == nil {
				d.Name = XIDNames(d.Prefix, d.ModTime)
			}
			for i := range d.Count {
				keys = append(keys, d.Prefix+d.Name(i))
				if err := mem.WriteAll(ctx, keys[len(keys)-1], make([]byte, d.Size), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		// mutate writes a key next to a known one (equal, just after, a
		// child, a prefix of it) or deletes one, in both buckets.
		mutate := func() {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(5) {
			case 0:
				k += "0"
			case 1:
				k += "/x"
			case 2:
				k = k[:rng.IntN(len(k))+1]
			}
			if rng.IntN(3) == 0 {
				e1, e2 := sim.Delete(ctx, k), mem.Delete(ctx, k)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("seed %d: Delete(%q) = %v, memblob %v", seed, k, e1, e2)
				}
				return
			}
			keys = append(keys, k)
			for _, b := range []*blob.Bucket{sim, mem} {
				if err := b.WriteAll(ctx, k, []byte(k), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		for range 60 {
			mutate()
		}
		for range 40 {
			k := keys[rng.IntN(len(keys))]
			prefix := k[:rng.IntN(len(k)+1)]
			delim := []string{"", "/", "o", "0/"}[rng.IntN(4)]
			size := 1 + rng.IntN(30)
			opts := &blob.ListOptions{Prefix: prefix, Delimiter: delim}
			t1, t2 := blob.FirstPageToken, blob.FirstPageToken
			for page := 0; ; page++ {
				o1, n1, err1 := sim.ListPage(ctx, t1, size, opts)
				o2, n2, err2 := mem.ListPage(ctx, t2, size, opts)
				if err1 != nil || err2 != nil {
					t.Fatalf("ListPage: %v, memblob %v", err1, err2)
				}
				got, want := entries(o1), entries(o2)
				if !slices.Equal(got, want) || (len(n1) == 0) != (len(n2) == 0) {
					t.Fatalf("seed %d: List(%q, %q, %d) page %d:\n got %v (more %v)\nwant %v (more %v)",
						seed, prefix, delim, size, page, got, len(n1) > 0, want, len(n2) > 0)
				}
				if len(n1) == 0 {
					break
				}
				t1, t2 = n1, n2
				for range rng.IntN(3) {
					mutate()
				}
			}
		}
		sim.Close()
		mem.Close()
	}
}

func entries(objs []*blob.ListObject) []entry {
	out := make([]entry, 0, len(objs))
	for _, o := range objs {
		out = append(out, entry{o.Key, o.IsDir, o.Size, fmt.Sprintf("%x", o.MD5)})
	}
	return out
}
