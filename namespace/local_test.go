package namespace_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
)

// none is an empty input.
var none iter.Seq2[string, error] = func(func(string, error) bool) {}

// On lakeFS's local blockstore "X.attrs" is an object like any other. A
// sweep of garbage X through the namespace's LocalDeleter leaves a live
// X.attrs in place; fileblob's own Delete would remove it, and fileblob
// never lists it, so no mark names it.
func TestLocalSweepKeepsAttrsObjects(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ns, err := namespace.Parse("local://repo1")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "repo1")
	old := time.Now().Add(-30 * 24 * time.Hour)
	write := func(key string) string {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(key), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// lakeFS-shaped garbage, and live objects that fileblob takes for its
	// side files.
	const x = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	garbage := write(x)
	live := write(x + ".attrs")
	alsoLive := write("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik1.attrs")

	bucket, err := namespace.OpenBucket(ctx, "local://repo1", namespace.WithLocalRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	deleter, err := ns.LocalDeleter(namespace.WithLocalRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	in := sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: time.Now()}
	sum, err := sweep.Mark(ctx, bucket, "run1", in)
	if err != nil {
		t.Fatal(err)
	}
	if sum.NumDeletedObjects != 1 {
		t.Fatalf("marked %d, want the garbage only (fileblob lists no .attrs)", sum.NumDeletedObjects)
	}
	res, err := sweep.Sweep(ctx, bucket, "run1", sweep.WithBatchDeleter(deleter))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 1 {
		t.Errorf("deleted %d, want 1", res.Deleted)
	}
	if _, err := os.Stat(garbage); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("garbage still there: %v", err)
	}
	for _, p := range []string{live, alsoLive} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("live %s deleted: %v", p, err)
		}
	}
}

func TestLocalDeleterKeys(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ns, err := namespace.Parse("local://repo1")
	if err != nil {
		t.Fatal(err)
	}
	deleter, err := ns.LocalDeleter(namespace.WithLocalRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "repo1", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	failed, err := deleter.DeleteBatch(ctx, []string{"data/gone", "data//x", "../x", "a../b", "data/x/", "/x", "a__0x2f__b", "data", "x.attrs", "a\x01b"})
	if err != nil {
		t.Fatal(err)
	}
	code := func(err error) gcerrors.ErrorCode {
		var c interface{ ErrorCode() gcerrors.ErrorCode }
		if errors.As(err, &c) {
			return c.ErrorCode()
		}
		return gcerrors.Unknown
	}
	if c := code(failed["data/gone"]); c != gcerrors.NotFound {
		t.Errorf("missing file: %v (%v)", c, failed["data/gone"])
	}
	for _, k := range []string{"data//x", "../x", "a../b", "data/x/", "/x", "a__0x2f__b", "data", "x.attrs", "a\x01b"} {
		if c := code(failed[k]); c != gcerrors.FailedPrecondition {
			t.Errorf("%q: %v, want FailedPrecondition", k, failed[k])
		}
	}
	if _, err := os.Stat(filepath.Join(root, "repo1", "data")); err != nil {
		t.Errorf("the folder named by a key was removed: %v", err)
	}
	if _, err := (namespace.Namespace{Kind: namespace.S3, Bucket: "b"}).LocalDeleter(); !errors.Is(err, namespace.ErrInvalidInput) {
		t.Errorf("S3 namespace: %v", err)
	}
	if _, err := ns.LocalDeleter(); !errors.Is(err, namespace.ErrNoLocalRoot) {
		t.Errorf("no root: %v", err)
	}
}
