package metarange

import (
	"testing"

	"gocloud.dev/blob/memblob"
)

// TestCacheVersion: a Cache's Version changes with every setting a range's
// keys depend on (the namespace as given, in any spelling, and the storage
// prefix), and with none that only bounds the work (concurrency, sizes),
// so a caller remembering ranges' keys by ID forgets them exactly when
// they may differ.
func TestCacheVersion(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	version := func(ns string, opts ...Option) string {
		t.Helper()
		c, err := NewCache(b, ns, opts...)
		if err != nil {
			t.Fatal(err)
		}
		v := c.Version()
		if len(v) != 64 {
			t.Fatalf("Version %q: not 64 hex digits", v)
		}
		return v
	}
	base := version(testNamespace)
	if v := version(testNamespace, WithConcurrency(1), WithCacheMaxBytes(1<<20), WithMaxFileSize(1<<20)); v != base {
		t.Errorf("bounds changed the Version: %s, %s", v, base)
	}
	if v := version(testNamespace, WithStoragePrefix("_lakefs")); v != base {
		t.Errorf("the default storage prefix given changed the Version")
	}
	seen := map[string]string{base: testNamespace}
	for _, other := range []struct {
		ns   string
		opts []Option
	}{
		{testNamespace + "/", nil},
		{"s3://Bucket/repo", nil},
		{"s3://other/repo", nil},
		{testNamespace, []Option{WithStoragePrefix("_lakefs2")}},
	} {
		v := version(other.ns, other.opts...)
		if prev, ok := seen[v]; ok {
			t.Errorf("%q (%d options) has the Version of %q", other.ns, len(other.opts), prev)
		}
		seen[v] = other.ns
	}
}
