package clouds_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/lakegc/lakegc/internal/s3test"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/tests/internal/azuritetest"
	"github.com/lakegc/lakegc/tests/internal/gcstest"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

func TestScenarioMemory(t *testing.T) {
	d := &refusingDeleter{}
	runScenario(t, store{
		ns: "mem://repo1", // lakeFS's in-memory blockstore; memblob stands in
		open: func(t *testing.T) *blob.Bucket {
			b := memblob.OpenBucket(nil)
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
		refuse: func(t *testing.T, b *blob.Bucket, key string) string {
			d.bucket, d.key = b, key
			return "operation not permitted"
		},
		deleter:     func(*testing.T, *blob.Bucket) sweep.BatchDeleter { return d },
		deletesGone: true,
	})
}

// refusingDeleter deletes key by key, but refuses one key as a file system
// would: memblob cannot refuse a delete.
type refusingDeleter struct {
	bucket *blob.Bucket
	key    string
}

func (d *refusingDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	failed := map[string]error{}
	for _, k := range keys {
		var err error
		if k == d.key {
			err = &os.PathError{Op: "remove", Path: k, Err: syscall.EPERM}
		} else {
			err = d.bucket.Delete(ctx, k)
		}
		if err != nil {
			failed[k] = err
		}
	}
	return failed, nil
}

// TestScenarioLocal runs on a local namespace, laid out as lakeFS's local
// blockstore lays it out, with the default deleter.
func TestScenarioLocal(t *testing.T) {
	var dir string
	runScenario(t, store{
		ns: "local://lake/repo1",
		open: func(t *testing.T) *blob.Bucket {
			root := t.TempDir()
			dir = filepath.Join(root, "lake", "repo1")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			b, err := namespace.OpenBucket(context.Background(), "local://lake/repo1", namespace.WithLocalRoot(root))
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
		refuse: func(t *testing.T, _ *blob.Bucket, key string) string {
			return refuseFile(t, filepath.Join(dir, filepath.FromSlash(key)))
		},
		deletesGone: true,
	})
}

// refuseFile makes path undeletable: immutable for root (who ignores
// permissions), in a read-only folder for anyone else. It returns the
// error's text.
func refuseFile(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := filepath.Dir(path)
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		return "permission denied"
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file immutable here (chattr +i: %v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
	return "operation not permitted"
}

func TestScenarioS3(t *testing.T) {
	for name, deleter := range map[string]func(*testing.T, *blob.Bucket) sweep.BatchDeleter{
		"default":  nil,
		"s3delete": batchDeleter(s3delete.FromBucket),
	} {
		t.Run(name, func(t *testing.T) {
			var srv *s3test.Server
			runScenario(t, store{
				ns: "s3://lake/repo1",
				open: func(t *testing.T) *blob.Bucket {
					srv = s3test.Start(t, s3test.WithFailingDeletes(func(key string) bool { return strings.Contains(key, "refused") }))
					u, err := url.Parse(srv.BucketURL(t, "lake")) // and the credentials, in the environment
					require.NoError(t, err)
					b, err := namespace.OpenBucket(context.Background(), "s3://lake/repo1", namespace.WithURLParams(namespace.S3, u.Query()))
					require.NoError(t, err)
					t.Cleanup(func() { _ = b.Close() })
					return b
				},
				refuse:      func(*testing.T, *blob.Bucket, string) string { return "AccessDenied" },
				deleter:     deleter,
				deletesGone: deleter == nil, // DeleteObjects does not tell
				requests: func(t *testing.T) func(int) {
					before := srv.Counts()
					return func(n int) {
						want := s3test.Counts{DeleteObject: int64(n), DeletedKeys: int64(n - 1), RefusedKeys: 1}
						if deleter != nil {
							want = s3test.Counts{DeleteObjects: 1, DeletedKeys: int64(n - 1), RefusedKeys: 1}
						}
						require.Equal(t, want, s3Deletes(before, srv.Counts()))
					}
				},
			})
		})
	}
}

func TestScenarioAzure(t *testing.T) {
	for name, deleter := range map[string]func(*testing.T, *blob.Bucket) sweep.BatchDeleter{
		"default":  nil,
		"azdelete": batchDeleter(azdelete.FromBucket),
	} {
		t.Run(name, func(t *testing.T) {
			var srv *azuritetest.Server
			runScenario(t, store{
				ns: "https://devstoreaccount1.blob.core.windows.net/lake/repo1",
				open: func(t *testing.T) *blob.Bucket {
					srv = azuritetest.Start(t)
					srv.Container(t, "lake")
					srv.SetEnv(t) // for azureblob's default URL opener
					b, err := namespace.OpenBucket(context.Background(), "https://devstoreaccount1.blob.core.windows.net/lake/repo1",
						namespace.WithAzureEndpoint(srv.Endpoint()))
					require.NoError(t, err)
					t.Cleanup(func() { _ = b.Close() })
					return b
				},
				refuse: func(t *testing.T, b *blob.Bucket, key string) string {
					leaseBlob(t, b, "repo1/"+key)
					return "LeaseIdMissing"
				},
				deleter:     deleter,
				deletesGone: true,
				requests: func(t *testing.T) func(int) {
					before := srv.Counts()
					return func(n int) {
						want := azuritetest.Counts{Deletes: int64(n)} // the lease's 412 is not retried
						if deleter != nil {
							want = azuritetest.Counts{Batches: 1}
						}
						after := srv.Counts()
						require.Equal(t, want, azuritetest.Counts{Deletes: after.Deletes - before.Deletes, Batches: after.Batches - before.Batches})
					}
				},
			})
		})
	}
}

// leaseBlob takes an infinite lease on a blob of the bucket's container.
func leaseBlob(t *testing.T, b *blob.Bucket, name string) {
	t.Helper()
	var c *container.Client
	require.True(t, b.As(&c))
	l, err := lease.NewBlobClient(c.NewBlobClient(name), nil)
	require.NoError(t, err)
	_, err = l.AcquireLease(context.Background(), -1, nil)
	require.NoError(t, err)
}

func TestScenarioGCS(t *testing.T) {
	for name, deleter := range map[string]func(*testing.T, *blob.Bucket) sweep.BatchDeleter{
		"default":   nil,
		"gcsdelete": batchDeleter(func(b *blob.Bucket) (sweep.BatchDeleter, error) { return gcsdelete.FromBucket(b) }),
	} {
		t.Run(name, func(t *testing.T) {
			var srv *gcstest.Server
			runScenario(t, store{
				ns: "gs://lake/repo1",
				open: func(t *testing.T) *blob.Bucket {
					srv = gcstest.Start(t, gcstest.WithFailingDeletes(func(_, object string) bool { return strings.Contains(object, "refused") }))
					srv.CreateBucket(t, "lake")
					mux := new(blob.URLMux)
					mux.RegisterBucket("gs", srv.URLOpener())
					b, err := namespace.OpenBucket(context.Background(), "gs://lake/repo1", namespace.WithURLMux(mux))
					require.NoError(t, err)
					t.Cleanup(func() { _ = b.Close() })
					return b
				},
				refuse:      func(*testing.T, *blob.Bucket, string) string { return "Error 403" },
				deleter:     deleter,
				deletesGone: true,
				requests: func(t *testing.T) func(int) {
					before := srv.Counts()
					return func(n int) {
						// The 403 is neither retried nor counted as gone.
						after := srv.Counts()
						require.Equal(t, gcstest.Counts{Deletes: int64(n), Refused: 1},
							gcstest.Counts{Deletes: after.Deletes - before.Deletes, Refused: after.Refused - before.Refused})
					}
				},
			})
		})
	}
}

// s3Deletes is the delete counts from before to after.
func s3Deletes(before, after s3test.Counts) s3test.Counts {
	return s3test.Counts{
		DeleteObject:  after.DeleteObject - before.DeleteObject,
		DeleteObjects: after.DeleteObjects - before.DeleteObjects,
		DeletedKeys:   after.DeletedKeys - before.DeletedKeys,
		RefusedKeys:   after.RefusedKeys - before.RefusedKeys,
	}
}

func batchDeleter(from func(*blob.Bucket) (sweep.BatchDeleter, error)) func(*testing.T, *blob.Bucket) sweep.BatchDeleter {
	return func(t *testing.T, b *blob.Bucket) sweep.BatchDeleter {
		d, err := from(b)
		require.NoError(t, err)
		return d
	}
}
