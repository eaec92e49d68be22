package namespace_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakegc/lakegc/namespace"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		uri  string
		want namespace.Namespace
		str  string // String(), when not uri
	}{
		{uri: "s3://bucket", want: namespace.Namespace{Kind: namespace.S3, Bucket: "bucket"}},
		{uri: "s3://bucket/", want: namespace.Namespace{Kind: namespace.S3, Bucket: "bucket"}, str: "s3://bucket"},
		{uri: "s3://bucket/repo1", want: namespace.Namespace{Kind: namespace.S3, Bucket: "bucket", Path: "repo1"}},
		{uri: "s3://my.bucket-1/a/b/c//", want: namespace.Namespace{Kind: namespace.S3, Bucket: "my.bucket-1", Path: "a/b/c"}, str: "s3://my.bucket-1/a/b/c"},
		{uri: "S3://bucket/x", want: namespace.Namespace{Kind: namespace.S3, Bucket: "bucket", Path: "x"}, str: "s3://bucket/x"},
		{uri: "s3://bucket/a%20b/%E2%82%AC", want: namespace.Namespace{Kind: namespace.S3, Bucket: "bucket", Path: "a b/€"}, str: "s3://bucket/a%20b/%E2%82%AC"},
		{uri: "gs://bucket/repos/r1", want: namespace.Namespace{Kind: namespace.GCS, Bucket: "bucket", Path: "repos/r1"}},
		{uri: "gs://my_bucket", want: namespace.Namespace{Kind: namespace.GCS, Bucket: "my_bucket"}},
		{uri: "https://acct1.blob.core.windows.net/container/repo1",
			want: namespace.Namespace{Kind: namespace.Azure, Account: "acct1", Domain: "blob.core.windows.net", Bucket: "container", Path: "repo1"}},
		{uri: "https://acct1.blob.core.windows.net/container/",
			want: namespace.Namespace{Kind: namespace.Azure, Account: "acct1", Domain: "blob.core.windows.net", Bucket: "container"},
			str:  "https://acct1.blob.core.windows.net/container"},
		{uri: "http://devstoreaccount1.blob.core.windows.net/c-1/a/b",
			want: namespace.Namespace{Kind: namespace.Azure, Account: "devstoreaccount1", Domain: "blob.core.windows.net", Bucket: "c-1", Path: "a/b"},
			str:  "https://devstoreaccount1.blob.core.windows.net/c-1/a/b"},
		{uri: "https://acct.blob.core.chinacloudapi.cn/$root/x",
			want: namespace.Namespace{Kind: namespace.Azure, Account: "acct", Domain: "blob.core.chinacloudapi.cn", Bucket: "$root", Path: "x"}},
		{uri: "local://repo1", want: namespace.Namespace{Kind: namespace.Local, Path: "repo1"}},
		{uri: "local://data/repo1/", want: namespace.Namespace{Kind: namespace.Local, Path: "data/repo1"}, str: "local://data/repo1"},
		{uri: "local:///data/repo1", want: namespace.Namespace{Kind: namespace.Local, Path: "data/repo1"}, str: "local://data/repo1"},
		{uri: "local://a%20b", want: namespace.Namespace{Kind: namespace.Local, Path: "a%20b"}},
	} {
		t.Run(c.uri, func(t *testing.T) {
			got, err := namespace.Parse(c.uri)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			str := c.str
			if str == "" {
				str = c.uri
			}
			require.Equal(t, str, got.String())
			back, err := namespace.Parse(got.String())
			require.NoError(t, err)
			require.Equal(t, got, back)
		})
	}
}

func TestParseInvalid(t *testing.T) {
	for _, uri := range []string{
		"", "bucket/path", "/abs/path", "s3:/bucket", "mem://repo", "memory://repo", "file:///tmp/x", "ftp://h/x",
		"s3://", "s3:///path", "s3://bucket:9000/x", "s3://user@bucket/x", "s3://bucket/x?versionId=1", "s3://bucket/x#f",
		"s3://bucket/a//b", "s3://bucket/./b", "s3://bucket/a/../b", "s3://bucket/a%2F..%2Fb", "s3://bucket/a%00b",
		"s3://bucket/a\\b", "s3://[::1]/x", "s3://bu%20cket/x", "s3://-bucket/x", "s3://bucket/%ff",
		"gs://", "gs://b/a/./c",
		"https://blob.core.windows.net/c/x", "https://acct/c/x", "https://a.blob.core.windows.net/c/x",
		"https://Acct1.blob.core.windows.net/c/x", "https://acct1.blob.core.windows.net", "https://acct1.blob.core.windows.net/",
		"https://acct1.blob.core.windows.net/Container/x", "https://acct1.blob.core.windows.net/c/x",
		"https://acct1.blob..net/container/x", "https://acct1.blob.core.windows.net./container/x",
		"https://acct1.blob.core.windows.net:443/container/x", "https://acct_1.blob.core.windows.net/container/x",
		"local://", "local:///", "local://a/../b", "local://a//b", "local://a\x01b",
	} {
		t.Run(uri, func(t *testing.T) {
			n, err := namespace.Parse(uri)
			require.ErrorIs(t, err, namespace.ErrInvalidInput, "parsed as %+v", n)
			require.Equal(t, namespace.Namespace{}, n)
		})
	}
}

func TestBucketURL(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		uri  string
		opts []namespace.Option
		want string
	}{
		{uri: "s3://bucket", want: "s3://bucket"},
		{uri: "s3://bucket/repo1", want: "s3://bucket?prefix=repo1%2F"},
		{uri: "s3://bucket/a%20b/c", want: "s3://bucket?prefix=a+b%2Fc%2F"},
		{uri: "s3://bucket/r", opts: []namespace.Option{namespace.WithURLParams(namespace.S3, url.Values{"endpoint": {"http://127.0.0.1:9000"}, "use_path_style": {"true"}})},
			want: "s3://bucket?endpoint=http%3A%2F%2F127.0.0.1%3A9000&prefix=r%2F&use_path_style=true"},
		{uri: "gs://bucket/repos/r1", want: "gs://bucket?prefix=repos%2Fr1%2F"},
		{uri: "https://acct1.blob.core.windows.net/container/repo1", want: "azblob://container?prefix=repo1%2F&storage_account=acct1"},
		{uri: "https://acct1.blob.core.windows.net/container", want: "azblob://container?storage_account=acct1"},
		{uri: "https://acct1.blob.core.usgovcloudapi.net/container/r", want: "azblob://container?domain=blob.core.usgovcloudapi.net&prefix=r%2F&storage_account=acct1"},
		{uri: "https://devstoreaccount1.blob.core.windows.net/container/r", opts: []namespace.Option{namespace.WithAzureEndpoint("http://127.0.0.1:10000")},
			want: "azblob://container?domain=127.0.0.1%3A10000&localemu=true&prefix=r%2F&protocol=http&storage_account=devstoreaccount1"},
		{uri: "local://data/repo1", opts: []namespace.Option{namespace.WithLocalRoot(root)},
			want: "file://" + filepath.ToSlash(root) + "/data/repo1?metadata=skip"},
		{uri: "local://repo1", opts: []namespace.Option{namespace.WithLocalRoot(root), namespace.WithURLParams(namespace.Local, url.Values{"create_dir": {"1"}})},
			want: "file://" + filepath.ToSlash(root) + "/repo1?create_dir=1&metadata=skip"},
	} {
		t.Run(c.uri, func(t *testing.T) {
			n, err := namespace.Parse(c.uri)
			require.NoError(t, err)
			got, err := n.BucketURL(c.opts...)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestBucketURLErrors(t *testing.T) {
	n, err := namespace.Parse("local://repo1")
	require.NoError(t, err)
	_, err = n.BucketURL()
	require.ErrorIs(t, err, namespace.ErrNoLocalRoot)

	s3, err := namespace.Parse("s3://b/p")
	require.NoError(t, err)
	for _, opt := range []namespace.Option{
		namespace.WithLocalRoot(""),
		namespace.WithAzureEndpoint("127.0.0.1:10000"),
		namespace.WithAzureEndpoint("ftp://127.0.0.1:10000"),
		namespace.WithAzureEndpoint("http://127.0.0.1:10000/devstoreaccount1"),
		namespace.WithURLParams(namespace.S3, url.Values{"prefix": {"x/"}}),
		namespace.WithURLParams(namespace.Kind("mem"), nil),
		namespace.WithURLMux(nil),
	} {
		_, err := s3.BucketURL(opt)
		require.ErrorIs(t, err, namespace.ErrInvalidInput)
		_, err = namespace.OpenBucket(context.Background(), "s3://b/p", opt)
		require.ErrorIs(t, err, namespace.ErrInvalidInput)
	}

	// A Namespace made by hand must be one Parse would return.
	for _, bad := range []namespace.Namespace{
		{},
		{Kind: namespace.S3, Bucket: "b", Path: "a/../c"},
		{Kind: namespace.S3, Bucket: "b", Path: "/a"},
		{Kind: namespace.Local},
		{Kind: namespace.Azure, Bucket: "c", Account: "acct1", Domain: "Blob.core.windows.net"},
		{Kind: namespace.GCS, Bucket: "b", Account: "x"},
	} {
		_, err := bad.BucketURL()
		require.ErrorIs(t, err, namespace.ErrInvalidInput, "%+v", bad)
	}
}

// TestOpenBucketLocal opens a local namespace the way lakeFS lays it out
// (<root>/<namespace path>/<key>) and checks that the bucket sees exactly
// the repository's objects, and writes no metadata file beside them.
func TestOpenBucketLocal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(rel), 0o644))
	}
	write("data/repo1/data/gqj0/obj1")
	write("data/repo1/dummy")
	write("data/repo10/data/gqj0/other") // a sibling whose name extends repo1's
	write("elsewhere/x")

	b, err := namespace.OpenBucket(ctx, "local://data/repo1", namespace.WithLocalRoot(root))
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, []string{"data/gqj0/obj1", "dummy"}, keys(t, b))
	require.NoError(t, b.WriteAll(ctx, "_lakefs/x", []byte("y"), nil))
	entries, err := os.ReadDir(filepath.Join(root, "data/repo1/_lakefs"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no metadata file")
	require.NoError(t, b.Delete(ctx, "dummy"))
	_, err = os.Stat(filepath.Join(root, "data/repo1/dummy"))
	require.ErrorIs(t, err, os.ErrNotExist)

	_, err = namespace.OpenBucket(ctx, "local://missing", namespace.WithLocalRoot(root))
	require.Error(t, err, "a namespace folder that does not exist is an error, not an empty bucket")
	_, err = namespace.OpenBucket(ctx, "local://repo1")
	require.ErrorIs(t, err, namespace.ErrNoLocalRoot)
	_, err = namespace.OpenBucket(ctx, "mem://repo1")
	require.ErrorIs(t, err, namespace.ErrInvalidInput)
	// This test binary links fileblob only.
	_, err = namespace.OpenBucket(ctx, "s3://bucket/repo1")
	require.ErrorIs(t, err, namespace.ErrNoDriver)
	require.ErrorContains(t, err, "gocloud.dev/blob/s3blob")
}

// TestOpenBucketMux opens through a host's own URL openers, with the
// namespace's path as the bucket's prefix.
func TestOpenBucketMux(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	require.NoError(t, mem.WriteAll(ctx, "repos/r1/data/x", []byte("x"), nil))
	require.NoError(t, mem.WriteAll(ctx, "repos/r10/data/y", []byte("y"), nil))
	mux := new(blob.URLMux)
	var opened *url.URL
	mux.RegisterBucket("gs", openerFunc(func(_ context.Context, u *url.URL) (*blob.Bucket, error) {
		opened = u
		if u.Host != "lake" {
			return nil, errors.New("no such bucket")
		}
		return mem, nil
	}))
	b, err := namespace.OpenBucket(ctx, "gs://lake/repos/r1", namespace.WithURLMux(mux))
	require.NoError(t, err)
	require.Equal(t, "gs://lake", opened.String(), "gocloud's mux applies the prefix itself")
	require.Equal(t, []string{"data/x"}, keys(t, b))
	_, err = namespace.OpenBucket(ctx, "gs://other/r1", namespace.WithURLMux(mux))
	require.ErrorContains(t, err, "no such bucket")
	_, err = namespace.OpenBucket(ctx, "s3://lake/r1", namespace.WithURLMux(mux))
	require.Error(t, err, "no opener for s3")
}

type openerFunc func(ctx context.Context, u *url.URL) (*blob.Bucket, error)

func (f openerFunc) OpenBucketURL(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	return f(ctx, u)
}

func keys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out
		}
		out = append(out, o.Key)
	}
}
