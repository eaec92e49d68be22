package namespace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/namespace"
)

// FuzzParse checks that Parse never panics, that every error wraps
// ErrInvalidInput, and that what it accepts is a clean prefix that survives a
// round trip through String and maps to a bucket URL.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"s3://bucket/repo1", "s3://bucket", "gs://b/a/b/", "local://repo1", "local:///data/r",
		"https://acct1.blob.core.windows.net/container/repo1", "http://devstoreaccount1.blob.core.windows.net/c-1/x",
		"s3://bucket/a%20b", "s3://bucket/a/../b", "s3://b:1/x", "mem://x", "https://acct1.blob.core.windows.net/$root",
		"s3://bucket/%2e%2e/x", "local://a%2F..%2Fb", "gs://b/€/x", "s3://bucket/x?y#z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		n, err := namespace.Parse(uri)
		if err != nil {
			if !errors.Is(err, namespace.ErrInvalidInput) {
				t.Fatalf("Parse(%q) = %v, not ErrInvalidInput", uri, err)
			}
			if n != (namespace.Namespace{}) {
				t.Fatalf("Parse(%q) failed but returned %+v", uri, n)
			}
			return
		}
		if n.Path != "" {
			if strings.HasPrefix(n.Path, "/") || strings.HasSuffix(n.Path, "/") {
				t.Fatalf("Parse(%q).Path = %q", uri, n.Path)
			}
			for _, seg := range strings.Split(n.Path, "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("Parse(%q).Path = %q has segment %q", uri, n.Path, seg)
				}
			}
		}
		if (n.Kind == namespace.Local) != (n.Bucket == "") || (n.Kind == namespace.Local && n.Path == "") {
			t.Fatalf("Parse(%q) = %+v", uri, n)
		}
		back, err := namespace.Parse(n.String())
		if err != nil || back != n {
			t.Fatalf("Parse(%q) = %+v; String() = %q parses as %+v, %v", uri, n, n.String(), back, err)
		}
		if _, err := n.BucketURL(namespace.WithLocalRoot("/lakefs")); err != nil {
			t.Fatalf("Parse(%q) = %+v: BucketURL: %v", uri, n, err)
		}
	})
}
