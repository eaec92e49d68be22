package lakefs

import (
	"errors"
	"path"
	"testing"

	"github.com/lakegc/lakegc/namespace"
)

// lakeFSLocalFormat is how lakeFS's local adapter formats the full address
// of key in a relative namespace (pkg/block/local QualifiedKey.Format over
// block.DefaultResolveNamespace): "local://" + path.Join(root, the
// namespace's host and path without a trailing "/", key).
func lakeFSLocalFormat(root, ns, key string) string {
	rest := ns[len("local://"):]
	for len(rest) > 0 && rest[len(rest)-1] == '/' {
		rest = rest[:len(rest)-1]
	}
	return "local://" + path.Join(root, rest, key)
}

// AddressNamespace followed by "/" + key is the address lakeFS formats, for
// namespaces and roots of every shape lakeFS accepts.
func TestAddressNamespaceMatchesLakeFS(t *testing.T) {
	for _, root := range []string{"/var/lakefs", "/var/lakefs/", "/var//lakefs"} {
		for _, ns := range []string{"local://repo1", "local://repo1/", "local://a/b/c", "local://data"} {
			got, err := AddressNamespace(ns, root)
			if err != nil {
				t.Fatalf("AddressNamespace(%q, %q): %v", ns, root, err)
			}
			for _, key := range []string{"data/g1/x", "_lakefs/retention/gc/commits/run_id=r/commits.csv"} {
				if want := lakeFSLocalFormat(root, ns, key); got+"/"+key != want {
					t.Errorf("AddressNamespace(%q, %q) = %q: %q, lakeFS %q", ns, root, got, got+"/"+key, want)
				}
			}
		}
	}
	for ns, want := range map[string]string{
		"s3://bucket/repo1/": "s3://bucket/repo1",
		"s3://bucket":        "s3://bucket",
		"gs://b/p":           "gs://b/p",
		"https://acct.blob.core.windows.net/cont/p/": "https://acct.blob.core.windows.net/cont/p",
	} {
		if got, err := AddressNamespace(ns, ""); err != nil || got != want {
			t.Errorf("AddressNamespace(%q) = %q, %v; want %q", ns, got, err, want)
		}
	}
	if _, err := AddressNamespace("local://repo1", ""); !errors.Is(err, namespace.ErrNoLocalRoot) {
		t.Errorf("local without a path: %v", err)
	}
	for _, ns := range []string{"local://../x", "mem://x", "s3://", "repo1"} {
		if _, err := AddressNamespace(ns, "/var/lakefs"); !errors.Is(err, namespace.ErrInvalidInput) {
			t.Errorf("AddressNamespace(%q): %v", ns, err)
		}
	}
}
