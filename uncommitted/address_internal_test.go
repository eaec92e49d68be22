package uncommitted

import (
	"strings"
	"testing"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

// TestAddressRules lists the export's address rules, entries and trailer.
func TestAddressRules(t *testing.T) {
	cases := []struct {
		namespace, address string
		typ                AddressType
		trailer            bool
		want               string // "" = not exported
	}{
		{"s3://b/repo1", "data/a/b", Relative, false, "data/a/b"},
		// A relative address as it is, and on S3 as lakeFS before v0.110
		// read it: aws-sdk-go v1 cleaned the request's path.
		{"s3://b/repo1", "s3://b/other/x", Relative, false, "s3://b/other/x|s3:/b/other/x"},
		{"s3://b/repo1", "/data/a", Relative, false, "/data/a|data/a"},
		{"s3://b/repo1", "data//a/./b", Relative, false, "data//a/./b|data/a/b"},
		{"s3://b/repo1", "data/../../x", Relative, false, "data/../../x"}, // cleaned out of the namespace
		{"gs://b/repo1", "data//a", Relative, false, "data//a"},
		{"s3://b/repo1", "", Relative, false, ""},
		{"s3://b/repo1", "s3://b/repo1/data/a", Full, false, "data/a"},
		{"s3://b/repo1/", "s3://b/repo1/data/a", Full, false, "data/a"},
		{"s3://b/repo1//", "s3://b/repo1/data/a", Full, false, "data/a"},
		{"s3://b/repo1", "s3://b/repo1x/data/a", Full, false, ""}, // sibling namespace
		{"s3://b/repo1", "s3://b/repo1", Full, false, ""},
		{"s3://b/repo1", "s3://b/repo1/", Full, false, ""},
		{"s3://b/repo1", "gs://b/repo1/data/a", Full, false, ""},
		{"s3://b/repo1", "data/a", Full, false, ""},
		{"s3://b/repo1", "data/t", Relative, true, "data/t"},
		{"s3://b/repo1", "s3://b/repo1/data/t", Relative, true, "data/t"},
		{"s3://b/repo1", "s3://b/repo1x/data/t", Relative, true, ""},
		{"s3://b/repo1", "data/x://y", Relative, true, "data/x://y|data/x:/y"},
		{"s3://b/repo1", "://x", Relative, true, "://x|:/x"},
		// A URI's scheme and authority are case-insensitive (RFC 3986): a
		// reader that parses these reads the namespace's object. The path
		// is compared exactly.
		{"s3://b/repo1", "S3://b/repo1/data/a", Full, false, "data/a"},
		{"s3://b/repo1", "s3://B/repo1/data/a", Full, false, "data/a"},
		{"S3://B/repo1", "s3://b/repo1/data/a", Full, false, "data/a"},
		{"s3://b/repo1", "S3://B/repo1/data/t", Relative, true, "data/t"},
		{"s3://b/repo1", "s3://b/REPO1/data/a", Full, false, ""},
		{"s3://b/repo1", "s3://b\u212a/repo1/data/a", Full, false, ""}, // not ASCII case
		{"s3://b/repo1", "s3://b/repo1/data/\u212a", Full, false, "data/\u212a"},
	}
	for _, c := range cases {
		ns, err := nsaddr.New(c.namespace, "data")
		if err != nil {
			t.Fatal(err)
		}
		typ := c.typ
		if c.trailer {
			typ = trailerType(c.address)
		}
		keys, _, err := exportKeys(nil, c.address, typ, ns)
		got, ok := strings.Join(keys, "|"), len(keys) > 0
		if err != nil || ok != (c.want != "") || got != c.want {
			t.Errorf("namespace %q, %v address %q (trailer %v): got %q, %v; want %q", c.namespace, c.typ, c.address, c.trailer, got, ok, c.want)
		}
		if c.typ == Full {
			// CutNamespace is the rule of a full address, exported.
			if got, ok := CutNamespace(c.namespace, c.address); ok != (c.want != "") || got != c.want {
				t.Errorf("CutNamespace(%q, %q) = %q, %v; want %q", c.namespace, c.address, got, ok, c.want)
			}
		}
	}
}

// CutNamespace runs once per committed address of a GC: it must not
// allocate, and an empty namespace holds nothing.
func TestCutNamespaceAllocs(t *testing.T) {
	// A namespace longer than the compiler's 32-byte stack buffer for
	// concatenations: a prefix built per call would be on the heap.
	const ns, address = "S3://a-bucket/a/namespace/of/some/length//", "s3://A-BUCKET/a/namespace/of/some/length/data/a"
	if n := testing.AllocsPerRun(100, func() { CutNamespace(ns, address) }); n != 0 {
		t.Errorf("CutNamespace allocates %v times", n)
	}
	for _, ns := range []string{"", "/", "//"} {
		if key, ok := CutNamespace(ns, "/data/a"); ok {
			t.Errorf("CutNamespace(%q, %q) = %q, true: an empty namespace holds nothing", ns, "/data/a", key)
		}
	}
}

// FuzzCutNamespace checks CutNamespace against what it promises: every
// address it cuts is the namespace (trailing slashes dropped), up to ASCII
// case in its scheme and authority and exactly in its path, then '/' and
// the key; and the namespace, spelled so, then '/' and any key, is cut.
func FuzzCutNamespace(f *testing.F) {
	f.Add("s3://b/repo1", "data/a", uint64(0))
	f.Add("S3://Bucket/Repo//", "x", uint64(0b1010110))
	f.Add("https://acct.blob.core.windows.net/c/p", "data/\u212a", uint64(1<<40-1))
	f.Add("s3://b", "k", uint64(3))
	f.Add("repo1", "k", uint64(1))
	f.Fuzz(func(t *testing.T, ns, key string, flips uint64) {
		trimmed := strings.TrimRight(ns, "/")
		// Spell the namespace with the case of some ASCII letters flipped:
		// those of the scheme and authority keep it the same namespace.
		end := 0
		if nsaddr.HasScheme(trimmed) {
			i := strings.Index(trimmed, "://")
			end = len(trimmed)
			if j := strings.IndexByte(trimmed[i+3:], '/'); j >= 0 {
				end = i + 3 + j
			}
		} else if nsaddr.IsFull(trimmed) {
			end = strings.IndexByte(trimmed, ':') + 1
		}
		spelled := []byte(trimmed)
		pathFlipped := false
		for i, c := range spelled {
			if flips>>(i%64)&1 == 0 || !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				continue
			}
			spelled[i] ^= 0x20
			if i >= end {
				pathFlipped = true
			}
		}
		address := string(spelled) + "/" + key
		got, ok := CutNamespace(ns, address)
		if want := trimmed != "" && key != "" && !pathFlipped; ok != want || ok && got != key {
			t.Fatalf("CutNamespace(%q, %q) = %q, %v; want %q, %v", ns, address, got, ok, key, want)
		}
		// Soundness, for any address.
		for _, a := range []string{address, key, ns + key} {
			got, ok := CutNamespace(ns, a)
			if !ok {
				continue
			}
			n := len(trimmed)
			if got == "" || len(a) != n+1+len(got) || a[n] != '/' || a[n+1:] != got ||
				!strings.EqualFold(a[:end], trimmed[:end]) || a[end:n] != trimmed[end:] {
				t.Fatalf("CutNamespace(%q, %q) = %q: not the namespace, '/', then the key", ns, a, got)
			}
		}
	})
}
