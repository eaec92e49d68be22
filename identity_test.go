package lakegc_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// fullStore is a tinyStore whose staged addresses are full when they are
// URIs.
type fullStore struct{ tinyStore }

func (s *fullStore) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for e, err := range s.tinyStore.Uncommitted(ctx, branch, from) {
			if strings.Contains(e.PhysicalAddress, ":") {
				e.AddressType = uncommitted.Full
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// identityCase is a repository whose live objects the host names by the
// given addresses; the bucket holds them, and the GC runs two days later.
type identityCase struct {
	bucket    *blob.Bucket
	namespace string
	live      []string // keys of live objects
	committed []string // the commit's addresses
	staged    []string // staged addresses
	garbage   []string // keys in no input
}

func (c identityCase) run(t *testing.T) (*lakegc.Report, error) {
	t.Helper()
	ctx := context.Background()
	for _, k := range slices.Concat(c.live, c.garbage) {
		if err := c.bucket.WriteAll(ctx, k, []byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	store := &fullStore{tinyStore{
		head:   retention.Commit{ID: "c1", CreationDate: time.Now(), MetaRangeID: "m1"},
		tree:   c.committed,
		staged: map[string]string{},
	}}
	for i, a := range c.staged {
		store.staged["tables/t/staged-"+string(rune('a'+i))] = a
	}
	cfg := lakegc.Config{
		Bucket:     c.bucket,
		Namespace:  c.namespace,
		Repository: "repo1",
		Clock:      func() time.Time { return time.Now().Add(48 * time.Hour) },
		Sweep:      true,
		// The cases' objects are named for the reader, not as lakeFS
		// names them: the operator includes the data folder.
		Include: []string{"data/"},
	}
	return lakegc.Collect(ctx, lakegc.Host{Staging: store, Commits: store, Committed: store}, cfg)
}

// assertKept fails unless every key is still in the bucket.
func assertKept(t *testing.T, bucket *blob.Bucket, keys []string) {
	t.Helper()
	for _, k := range keys {
		ok, err := bucket.Exists(context.Background(), k)
		if err != nil || !ok {
			t.Errorf("live object %s was deleted (%v)", k, err)
		}
	}
}

func lakeFSKeys(t *testing.T, n int) []string {
	t.Helper()
	paths, err := pathprovider.New()
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = paths.NewPath()
	}
	return keys
}

func fileBucket(t *testing.T, dir string) *blob.Bucket {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// A misspelled namespace: the host stores full file:// addresses and the
// namespace is the README's s3:// example. Before, every address was
// "outside", the keep set empty, and the sweep deleted 9 of 10 live
// objects; now the tails of the addresses are objects of the bucket, and
// the cycle stops before anything is marked.
func TestMisspelledNamespaceDeletesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo1")
	bucket := fileBucket(t, dir)
	ctx := context.Background()
	if err := bucket.WriteAll(ctx, "_lakefs/dummy", []byte("lakeFS's marker"), nil); err != nil {
		t.Fatal(err)
	}
	live := lakeFSKeys(t, 10)
	c := identityCase{bucket: bucket, namespace: "s3://bucket/repo1", live: live, garbage: lakeFSKeys(t, 1)}
	full := func(k string) string { return "file://" + filepath.ToSlash(dir) + "/" + k }
	for _, k := range live[:9] {
		c.committed = append(c.committed, full(k))
	}
	c.staged = []string{full(live[9])}
	rep, err := c.run(t)
	if !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("Collect = %v, want ErrNamespaceMismatch", err)
	}
	if rep != nil && rep.Sweep != nil {
		t.Errorf("swept: %+v", rep.Sweep)
	}
	assertKept(t, bucket, slices.Concat(live, c.garbage))
	if !strings.Contains(err.Error(), "s3://bucket/repo1") || !strings.Contains(err.Error(), "file://") {
		t.Errorf("error %q does not name both spellings", err)
	}
}

// The namespace spelled file:/x, the addresses file:///x: the same folder.
func TestFileURIFormsAreAMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo1")
	bucket := fileBucket(t, dir)
	ns := "file://" + filepath.ToSlash(dir)
	if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	c := identityCase{bucket: bucket, namespace: ns, live: []string{"data/old/a"}, garbage: []string{"data/old/g"},
		committed: []string{"file://localhost" + filepath.ToSlash(dir) + "/data/old/a"}}
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("Collect = %v, want ErrNamespaceMismatch", err)
	}
	assertKept(t, bucket, slices.Concat(c.live, c.garbage))
}

// The namespace through a symbolic link to the folder the host writes in,
// and the other way round: keys of no lakeFS shape, so only the link's
// resolution can tell.
func TestSymlinkedNamespaceIsAMismatch(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real", "repo1")
	bucket := fileBucket(t, real)
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "real"), link); err != nil {
		t.Skip(err)
	}
	realNS := "file://" + filepath.ToSlash(real)
	linkNS := "file://" + filepath.ToSlash(filepath.Join(link, "repo1"))
	if err := bucket.WriteAll(context.Background(), "_lakefs/dummy", []byte("marker"), nil); err != nil {
		t.Fatal(err)
	}
	for _, spell := range [][2]string{{linkNS, realNS}, {realNS, linkNS}} {
		c := identityCase{bucket: bucket, namespace: spell[0], live: []string{"data/old/a", "data/old/b"},
			committed: []string{spell[1] + "/data/old/a"}, staged: []string{spell[1] + "/data/old/b"}}
		if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
			t.Fatalf("namespace %s, addresses %s: Collect = %v, want ErrNamespaceMismatch", spell[0], spell[1], err)
		}
		assertKept(t, bucket, c.live)
	}
}

// A bucket rooted too high: at a shared bucket's root, above the
// repository's folder: no marker there, nothing read or deleted.
func TestBucketAtParentFolderIsRefused(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	for _, k := range []string{"repo1/_lakefs/dummy", "repo1/_lakefs/lakegc.json"} {
		if err := bucket.WriteAll(ctx, k, []byte("{}"), nil); err != nil {
			t.Fatal(err)
		}
	}
	c := identityCase{bucket: bucket, namespace: "s3://bucket/repo1", garbage: []string{"README.txt", "backup.tar"},
		live: []string{"repo1/data/x"}, committed: []string{"data/x"}}
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrNoNamespaceMarker) {
		t.Fatalf("Collect = %v, want ErrNoNamespaceMarker", err)
	}
	assertKept(t, bucket, slices.Concat(c.live, c.garbage))
	// Nothing written either: no export, no report.
	it := bucket.List(&blob.ListOptions{Prefix: "_lakefs/"})
	if obj, err := it.Next(ctx); err == nil {
		t.Errorf("wrote %s", obj.Key)
	}
}

// lakegc's marker names the namespace: another spelling of it is refused,
// and InitNamespace does not overwrite it.
func TestMarkerOfAnotherNamespace(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "s3://bucket/repo1/"}); err != nil {
		t.Fatal(err)
	}
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "S3://bucket/repo1"}); err != nil {
		t.Fatalf("the same namespace again: %v", err)
	}
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "s3://bucket/repo2"}); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("another namespace: %v, want ErrNamespaceMismatch", err)
	}
	c := identityCase{bucket: bucket, namespace: "s3a://bucket/repo1", garbage: []string{"data/old/g"}}
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("Collect = %v, want ErrNamespaceMismatch", err)
	}
	assertKept(t, bucket, c.garbage)
}

// Two spellings: lakeFS before PR #9464 stored a full address's object
// at its decoded path, since then at its raw path; a repository written by
// both holds both, and both are live. For Azure, lakeFS reaches a blob
// through any endpoint domain of its account, with the slashes around its
// name trimmed and its path decoded.
func TestEverySpellingOfAnAddressIsKept(t *testing.T) {
	for _, c := range []struct {
		namespace string
		live      []string
		addresses []string
	}{
		{"s3://bucket/repo1", []string{"data/year%3D2024/part-0", "data/year=2024/part-0"},
			[]string{"s3://bucket/repo1/data/year%3D2024/part-0"}},
		{"https://acct.blob.core.windows.net/container/repo1", []string{"data/dfs", "data/trailing", "data/k=v", "data/k%3Dv"},
			[]string{
				"https://acct.dfs.core.windows.net/container/repo1/data/dfs",
				"https://acct.blob.core.windows.net/container/repo1/data/trailing/",
				"https://acct.blob.core.windows.net/container/repo1/data/k%3Dv",
			}},
	} {
		t.Run(c.namespace, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: c.namespace}); err != nil {
				t.Fatal(err)
			}
			for _, in := range []string{"committed", "staged"} {
				ic := identityCase{bucket: bucket, namespace: c.namespace, live: c.live, garbage: []string{"data/orphan"}}
				if in == "committed" {
					ic.committed = c.addresses
				} else {
					ic.staged = c.addresses
				}
				rep, err := ic.run(t)
				if err != nil {
					t.Fatal(err)
				}
				assertKept(t, bucket, c.live)
				if rep.Sweep.Deleted != 1 {
					t.Errorf("%s: deleted %d, want the orphan only", in, rep.Sweep.Deleted)
				}
			}
		})
	}
}

// An import is outside the namespace: kept out of the keep set, counted,
// and the cycle runs.
func TestForeignAddressesAreCounted(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	ns := "s3://bucket/repo1"
	if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	imp := "s3://imports/" + lakeFSKeys(t, 1)[0]
	c := identityCase{bucket: bucket, namespace: ns, live: []string{"data/a"}, garbage: []string{"data/g"},
		committed: []string{ns + "/data/a", imp, "gs://elsewhere/x.parquet"}}
	rep, err := c.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mark.Foreign != 2 || !slices.Equal(rep.Mark.ForeignSample, []string{imp, "gs://elsewhere/x.parquet"}) {
		t.Errorf("foreign %d %q", rep.Mark.Foreign, rep.Mark.ForeignSample)
	}
	if rep.Sweep.Deleted != 1 {
		t.Errorf("deleted %d, want 1", rep.Sweep.Deleted)
	}
	assertKept(t, bucket, c.live)
}

// Userinfo before the host is not part of the bucket lakeFS reads: lakeFS
// resolves s3://user@bucket/repo1/x (an address a user may stage) to the
// object repo1/x of bucket "bucket". Before, such an address was
// "outside", only a key of a lakeFS shape was kept, and an object of
// another name, such as a file imported from inside the namespace, was
// deleted.
func TestUserinfoSpellingIsNotOutside(t *testing.T) {
	for _, ns := range []string{"s3://bucket/repo1", "gs://bucket/repo1"} {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
			t.Fatal(err)
		}
		scheme, rest, _ := strings.Cut(ns, "://")
		spelled := scheme + "://importer@" + rest
		c := identityCase{bucket: bucket, namespace: ns, live: []string{"data/imports/t.parquet", "t.csv"},
			committed: []string{spelled + "/data/imports/t.parquet"}, staged: []string{spelled + "/t.csv"}}
		if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
			t.Errorf("%s: Collect = %v, want ErrNamespaceMismatch", ns, err)
		}
		assertKept(t, bucket, c.live)
	}
}

// A local namespace relative to lakeFS's blockstore root (local://repo1),
// whose root lakegc does not know, and an address of the same folder by its
// absolute path, which lakeFS's local adapter reads (an import from inside
// the blockstore, which lakeFS allows): before, "outside", and a file of
// no lakeFS shape was deleted; now a mismatch, until the namespace is
// spelled with its absolute path.
func TestLocalNamespaceUnderAnUnknownRoot(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	ns := "local://repo1"
	if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	c := identityCase{bucket: bucket, namespace: ns, live: []string{"data/imports/t.csv", "t.csv"}, garbage: []string{"data/old/g"},
		committed: []string{"local:///var/lakefs/repo1/data/imports/t.csv"}, staged: []string{"local:///var/lakefs/repo1/t.csv"}}
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Errorf("Collect = %v, want ErrNamespaceMismatch", err)
	}
	assertKept(t, bucket, c.live)
}

// lakeFS before v0.108 wrote its marker "dummy" at the namespace's top
// level; since then at _lakefs/dummy, with other words. A bucket whose top
// level holds a "dummy" of other content is not a repository's folder: a
// bucket rooted at a repository's _lakefs folder (lakeFS's marker is then
// at its top level, and lakeFS's range files beside it), or a shared
// bucket where some tenant keeps a file named dummy. Before, either passed
// the marker check and the top-level files were marked.
func TestTopLevelDummyMustBeLakeFSs(t *testing.T) {
	const (
		legacy  = "this is dummy data - created by lakeFS in order to check accessibility"
		current = "this is dummy data - created by lakeFS to check accessibility"
	)
	ctx := context.Background()
	for _, c := range []struct {
		name, dummy string
		want        error
	}{
		{"rooted at _lakefs", current, lakegc.ErrNoNamespaceMarker},
		{"a tenant's dummy", "hello", lakegc.ErrNoNamespaceMarker},
		{"lakeFS before v0.108", legacy, nil},
	} {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		if err := bucket.WriteAll(ctx, "dummy", []byte(c.dummy), nil); err != nil {
			t.Fatal(err)
		}
		ic := identityCase{bucket: bucket, namespace: "s3://bucket/repo1",
			live: []string{"data/a"}, committed: []string{"data/a"},
			garbage: []string{"9d3c5a1f0b7e4d2c8a6f1e3b5d7c9a0f2e4b6d8c1a3f5e7b9d0c2a4f6e8b1d3c"}}
		_, err := ic.run(t)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: Collect = %v, want %v", c.name, err, c.want)
		}
		if c.want != nil {
			assertKept(t, bucket, slices.Concat(ic.live, ic.garbage))
		}
	}
}

// hostExport is a host's own export of the given addresses.
type hostExport []string

func (h hostExport) Export(context.Context) (*lakegc.HostExport, error) {
	return &lakegc.HostExport{RunID: "own", Addresses: func(yield func(string, error) bool) {
		for _, a := range h {
			if !yield(a, nil) {
				return
			}
		}
	}}, nil
}

// The first 64 distinct tails of each input are probed: a host export full
// of imports from another lakeFS repository does not use up the committed
// addresses' probes. Before, one sample served every input, read in turn.
func TestEachInputIsProbed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo1")
	bucket := fileBucket(t, dir)
	ctx := context.Background()
	ns := "file://" + filepath.ToSlash(dir)
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	live := lakeFSKeys(t, 1)[0]
	if err := bucket.WriteAll(ctx, live, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	var imports hostExport
	for _, k := range lakeFSKeys(t, 64) {
		imports = append(imports, "s3://other-repo/"+k)
	}
	store := &tinyStore{
		head: retention.Commit{ID: "c1", CreationDate: time.Now(), MetaRangeID: "m1"},
		// The namespace in a spelling no rule relates to file://: only
		// the probe of its tail can tell.
		tree: []string{"s3://bucket/repo1/" + live},
	}
	cfg := lakegc.Config{Bucket: bucket, Namespace: ns, Repository: "repo1",
		Clock: func() time.Time { return time.Now().Add(48 * time.Hour) }}
	_, err := lakegc.Collect(ctx, lakegc.Host{Export: imports, Commits: store, Committed: store}, cfg)
	if !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("Collect = %v, want ErrNamespaceMismatch", err)
	}
}

// lakeFS before v0.110 read and wrote S3 through aws-sdk-go v1, which
// cleaned each request's path: an address data//old/x (which lakeFS made
// of a staged full address under the data folder) named the object
// data/old/x. Before, only data//old/x was kept, and data/old/x deleted.
func TestS3AddressesAsSDKv1CleanedThem(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	ns := "s3://bucket/repo1"
	if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	c := identityCase{bucket: bucket, namespace: ns, live: []string{"data/old/x", "data/old/y", "data/old/z"}, garbage: []string{"data/old/g"},
		committed: []string{"data//old/x", ns + "/data/old/./z"}, staged: []string{"data/./old/y"}}
	rep, err := c.run(t)
	if err != nil {
		t.Fatal(err)
	}
	assertKept(t, bucket, c.live)
	if rep.Sweep.Deleted != 1 {
		t.Errorf("deleted %d, want the garbage only", rep.Sweep.Deleted)
	}
}

// Config.Namespace stays required for a host whose addresses are all
// relative: with lakegc's marker, it is the only proof that Bucket is this
// repository's folder. Two repositories of such a host, each marked with
// its own namespace: a cycle of repo1 given repo2's folder (a mix-up of
// buckets or prefixes) is refused, and deletes nothing of repo2's.
func TestRelativeOnlyHostNeedsItsNamespace(t *testing.T) {
	ctx := context.Background()
	repo2 := memblob.OpenBucket(nil)
	defer repo2.Close()
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: repo2, Namespace: "file:///srv/lake/repo2"}); err != nil {
		t.Fatal(err)
	}
	c := identityCase{bucket: repo2, namespace: "file:///srv/lake/repo1",
		live: []string{"data/s/live"}, committed: []string{"data/s/live"}, garbage: []string{"data/old/g"}}
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("Collect of repo1 over repo2's folder = %v, want ErrNamespaceMismatch", err)
	}
	assertKept(t, repo2, c.garbage)
	c.namespace = ""
	if _, err := c.run(t); !errors.Is(err, lakegc.ErrInvalidInput) {
		t.Fatalf("Collect without a Namespace = %v, want ErrInvalidInput", err)
	}
	assertKept(t, repo2, c.garbage)
	c.namespace = "file:///srv/lake/repo2"
	if _, err := c.run(t); err != nil {
		t.Fatalf("Collect of repo2: %v", err)
	}
	if ok, _ := repo2.Exists(ctx, "data/old/g"); ok {
		t.Error("repo2's own cycle kept its garbage")
	}
}
