package host

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc/namespace"
)

// A linked object's address is kept with and without its signature.
func TestWithUnsigned(t *testing.T) {
	in := func(yield func(string, error) bool) {
		for _, a := range []string{"data/g1/x,sig", "data/g1/y", "a,b/c"} {
			if !yield(a, nil) {
				return
			}
		}
	}
	var got []string
	for a, err := range withUnsigned(in) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if want := []string{"data/g1/x,sig", "data/g1/x", "data/g1/y", "a,b/c"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// urlRecorder opens every bucket URL as a folder of dir, and records the URL.
type urlRecorder struct {
	dir  string
	urls []string
}

func (r *urlRecorder) OpenBucketURL(_ context.Context, u *url.URL) (*blob.Bucket, error) {
	r.urls = append(r.urls, u.String())
	return fileblob.OpenBucket(r.dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
}

// openNamespaceURL opens ns as openNamespace does, and returns the bucket
// URL the driver was given (the mux takes the prefix out of it), the key the
// driver's bucket holds for the object "k" written through the opened one
// (the prefix put back), and the namespace as openNamespace says lakeFS
// spells full addresses.
func openNamespaceURL(t *testing.T, ns, blockstorePath string) (string, string, string, error) {
	t.Helper()
	rec := &urlRecorder{dir: t.TempDir()}
	mux := new(blob.URLMux)
	for _, scheme := range []string{"s3", "gs", "azblob", "file"} {
		mux.RegisterBucket(scheme, rec)
	}
	resolved, b, err := openNamespace(t.Context(), ns, blockstorePath, nil, namespace.WithURLMux(mux))
	if err != nil {
		return "", "", "", err
	}
	defer b.Close()
	if len(rec.urls) != 1 {
		t.Fatalf("%s: opened %q", ns, rec.urls)
	}
	if err := b.WriteAll(t.Context(), "k", nil, nil); err != nil {
		t.Fatal(err)
	}
	var keys []string
	err = filepath.WalkDir(rec.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(rec.dir, p)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec.urls[0], strings.Join(keys, " "), resolved, nil
}

func TestOpenNamespace(t *testing.T) {
	for ns, want := range map[string][2]string{
		"s3://bucket/repo1": {"s3://bucket", "repo1/k"},
		"s3://bucket":       {"s3://bucket", "k"},
		"gs://b/a/b":        {"gs://b", "a/b/k"},
		"https://acct.blob.core.windows.net/container/repo1": {"azblob://container?storage_account=acct", "repo1/k"},
	} {
		if u, key, resolved, err := openNamespaceURL(t, ns, "/ignored"); err != nil || u != want[0] || key != want[1] || resolved != ns {
			t.Errorf("openNamespace(%q) opened %q, key %q (%q), %v; want %q, key %q", ns, u, key, resolved, err, want[0], want[1])
		}
	}
	for _, ns := range []string{"ftp://x/y", "https://example.com/c/p", "s3://", "s3://b/p?x=1", "local://a/../b", "local://"} {
		if u, _, _, err := openNamespaceURL(t, ns, "/var/lakefs"); err == nil {
			t.Errorf("openNamespace(%q) opened %q, accepted", ns, u)
		}
	}
	// A local namespace is the folder under the blockstore's, and lakeFS
	// spells its full addresses with the blockstore's absolute path.
	root := t.TempDir()
	u, key, resolved, err := openNamespaceURL(t, "local://repo1/", root)
	if want := "file://" + filepath.ToSlash(root) + "/repo1?metadata=skip"; err != nil || u != want || key != "k" || resolved != "local://"+filepath.ToSlash(root)+"/repo1" {
		t.Errorf("local: opened %q, key %q (%q), %v; want %q", u, key, resolved, err, want)
	}
	if _, _, _, err := openNamespaceURL(t, "local://repo1", ""); !errors.Is(err, namespace.ErrNoLocalRoot) || !strings.Contains(err.Error(), "--blockstore-path") {
		t.Errorf("local without --blockstore-path: %v", err)
	}
}
