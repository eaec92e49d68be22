package uncommitted_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/uncommitted"
)

// The export keeps every key lakeFS's versions could have stored a full
// address's object at, keeps the tail of an import's address, refuses the
// namespace in another spelling, and refuses an outside address whose tail
// is an object of the bucket.
func TestPrepareNamespaceIdentity(t *testing.T) {
	const ns = namespace
	const tail = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	ctx := context.Background()
	full := func(key, address string) uncommitted.Entry {
		return uncommitted.Entry{Key: key, PhysicalAddress: address, AddressType: uncommitted.Full}
	}
	t.Run("spellings", func(t *testing.T) {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		src := newMemSource()
		src.add("main",
			full("a", ns+"/data/year%3D2024/part-0"),
			full("b", "s3://imports/"+tail),
			full("c", "gs://elsewhere/x.parquet"))
		res, err := newPreparer(t, bucket).Prepare(ctx, uncommitted.Repository{ID: "r", StorageNamespace: ns}, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Foreign != 2 {
			t.Errorf("foreign %d, want 2", res.Foreign)
		}
		var got []string
		for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", res.RunID) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a)
		}
		want := []string{"data/year%3D2024/part-0", "data/year=2024/part-0", tail}
		if !slices.Equal(got, want) {
			t.Errorf("exported %q, want %q", got, want)
		}
	})
	for name, c := range map[string]struct {
		address string
		put     bool
	}{
		"scheme alias":    {"s3a://bucket/repo1/data/x", false},
		"dot segment":     {"s3://bucket/./repo1/data/x", false},
		"held tail":       {"file:///srv/lake/repo1/" + tail, true},
		"trailer spelled": {"s3n://bucket/repo1/data/x", false},
	} {
		t.Run(name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if c.put {
				if err := bucket.WriteAll(ctx, tail, []byte("live"), nil); err != nil {
					t.Fatal(err)
				}
			}
			src := newMemSource()
			var opts []uncommitted.Option
			if name == "trailer spelled" {
				src.add("main", full("a", ns+"/data/a"))
				opts = append(opts, uncommitted.WithTrailer(func(context.Context) iter.Seq2[string, error] {
					return func(yield func(string, error) bool) { yield(c.address, nil) }
				}))
			} else {
				src.add("main", full("a", c.address))
			}
			_, err := newPreparer(t, bucket, opts...).Prepare(ctx, uncommitted.Repository{ID: "r", StorageNamespace: ns}, src, nil)
			if !errors.Is(err, uncommitted.ErrNamespaceMismatch) {
				t.Errorf("%s: %v, want ErrNamespaceMismatch", c.address, err)
			}
		})
	}
}

// TestPrepareTailsUnderDataPrefix: with WithDataPrefix, the tail kept of an
// outside address is a key shape under that folder, as Collect's
// Config.DataPrefix sees it; under the default folder such an address kept
// nothing and probed nothing.
func TestPrepareTailsUnderDataPrefix(t *testing.T) {
	ctx := context.Background()
	const tail = "lake/objects/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := newMemSource()
	src.add("main", uncommitted.Entry{Key: "a", PhysicalAddress: "s3://imports/x/" + tail, AddressType: uncommitted.Full})
	res, err := newPreparer(t, bucket, uncommitted.WithDataPrefix("lake/objects")).Prepare(ctx, uncommitted.Repository{ID: "r", StorageNamespace: namespace}, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", res.RunID) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if !slices.Equal(got, []string{tail}) {
		t.Errorf("exported %q, want the tail %q", got, tail)
	}
	// The same tail, held by the bucket: another spelling of the namespace.
	if err := bucket.WriteAll(ctx, tail, []byte("live"), nil); err != nil {
		t.Fatal(err)
	}
	_, err = newPreparer(t, bucket, uncommitted.WithDataPrefix("/lake/objects/")).Prepare(ctx, uncommitted.Repository{ID: "r", StorageNamespace: namespace}, src, nil)
	if !errors.Is(err, uncommitted.ErrNamespaceMismatch) {
		t.Errorf("Prepare with the tail in the bucket = %v, want ErrNamespaceMismatch", err)
	}
}
