package clouds_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/tests/internal/azuritetest"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// oddKeys are keys azureblob or gcsblob escape, or that a URL would mangle.
var oddKeys = []string{
	"odd/a#b", "odd/q?x=1", "odd/100%", "odd/sp ace", "odd/back\\slash", "odd/tab\tx", "odd/nl\nx",
	"odd/dir/", "odd/x/../y", "odd/ünïcode", "odd/__0x41__",
}

// writeKeys writes keys, each with its name as content.
func writeKeys(t *testing.T, b *blob.Bucket, keys []string) {
	t.Helper()
	for _, k := range keys {
		require.NoError(t, b.WriteAll(context.Background(), k, []byte(k), nil), "%q", k)
	}
}

// containerBlobs lists every blob of the container, snapshots included.
func containerBlobs(t *testing.T, c *container.Client) []string {
	t.Helper()
	var out []string
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Segment.BlobItems {
			name := *it.Name
			if it.Snapshot != nil && *it.Snapshot != "" {
				name += "@snapshot"
			}
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestAzureDeleter deletes 600 blobs and the odd keys, some with snapshots,
// through a prefixed bucket: 256 blobs a request, each blob with its
// snapshots, nothing outside the prefix; and a second delete finds them
// gone (404).
func TestAzureDeleter(t *testing.T) {
	ctx := context.Background()
	srv := azuritetest.Start(t)
	root, c := azureBucket(t, srv)
	writeKeys(t, root, []string{"outside", "repo10/sibling"})
	b := blob.PrefixedBucket(root, "repo1/")
	var keys []string
	for i := range 600 {
		keys = append(keys, fmt.Sprintf("data/s%d/obj-%03d", i%3, i))
	}
	keys = append(keys, oddKeys...)
	writeKeys(t, b, keys)
	for _, k := range keys[:5] {
		_, err := c.NewBlobClient("repo1/"+k).CreateSnapshot(ctx, nil)
		require.NoError(t, err)
	}
	require.Len(t, containerBlobs(t, c), len(keys)+5+2)

	d, err := azdelete.FromBucket(b)
	require.NoError(t, err)
	before := srv.Counts()
	failed, err := d.DeleteBatch(ctx, keys)
	require.NoError(t, err)
	require.Empty(t, failed)
	after := srv.Counts()
	require.Equal(t, int64((len(keys)+azdelete.MaxBlobs-1)/azdelete.MaxBlobs), after.Batches-before.Batches, "256 blobs a request")
	require.Zero(t, after.Deletes-before.Deletes)
	require.Equal(t, []string{"outside", "repo10/sibling"}, containerBlobs(t, c), "every blob and snapshot under the prefix, nothing else")

	failed, err = d.DeleteBatch(ctx, keys)
	require.NoError(t, err)
	require.Len(t, failed, len(keys))
	for k, err := range failed {
		var re *azcore.ResponseError
		require.True(t, errors.As(err, &re), "%q: %v", k, err)
		require.Equal(t, http.StatusNotFound, re.StatusCode, k)
	}
}

// azureBucket creates the container "lake" and opens it, with a client
// that does not retry; it returns the container's client too.
func azureBucket(t *testing.T, srv *azuritetest.Server) (*blob.Bucket, *container.Client) {
	t.Helper()
	b := srv.Bucket(t, "lake")
	var c *container.Client
	require.True(t, b.As(&c))
	return b, c
}

// oldGarbage writes n objects in old slices and marks them all.
func oldGarbage(t *testing.T, b *blob.Bucket, runID string, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("data/%s/%s-%03d", oldSlice(i%3), runID, i))
	}
	writeKeys(t, b, keys)
	sum, err := sweep.Mark(context.Background(), b, runID, sweep.Inputs{Uncommitted: seq(nil), Committed: seq(nil), ExportStart: now},
		sweep.WithClock(clock), sweep.WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	require.Equal(t, int64(n), sum.NumDeletedObjects)
	return keys
}

// TestAzureSnapshots sweeps a blob that has a snapshot: the default deleter
// cannot delete it (409 SnapshotsPresent, failed at once, not retried);
// azdelete deletes it with its snapshot.
func TestAzureSnapshots(t *testing.T) {
	ctx := context.Background()
	srv := azuritetest.Start(t)
	b, c := azureBucket(t, srv)
	keys := oldGarbage(t, b, "run-1", 3)
	_, err := c.NewBlobClient(keys[1]).CreateSnapshot(ctx, nil)
	require.NoError(t, err)

	before := srv.Counts()
	res, err := sweep.Sweep(ctx, b, "run-1", include, sweep.WithErrorClassifier(azdelete.Classifier{}))
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: 2, Failed: 1}, *res)
	require.Equal(t, int64(3), srv.Counts().Deletes-before.Deletes, "SnapshotsPresent is not retried")
	require.Contains(t, readFailed(t, b, "run-1")[keys[1]], "SnapshotsPresent")

	d, err := azdelete.FromBucket(b)
	require.NoError(t, err)
	res, err = sweep.Sweep(ctx, b, "run-1", sweep.WithBatchDeleter(d), include)
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: 1, AlreadyGone: 2}, *res)
	for _, name := range containerBlobs(t, c) {
		require.True(t, strings.HasPrefix(name, "_lakefs/"), "left: %s", name)
	}
}

// TestAzureThrottled sweeps while Azure answers 503 ServerBusy: Sweep
// retries, with azdelete (whole batches refused) and with the default
// deleter (single deletes refused).
func TestAzureThrottled(t *testing.T) {
	ctx := context.Background()
	srv := azuritetest.Start(t)
	b, _ := azureBucket(t, srv)

	keys := oldGarbage(t, b, "run-1", 300)
	d, err := azdelete.FromBucket(b)
	require.NoError(t, err)
	before := srv.Counts()
	srv.Throttle(2)
	res, err := sweep.Sweep(ctx, b, "run-1", sweep.WithBatchDeleter(d), include)
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: int64(len(keys))}, *res)
	after := srv.Counts()
	require.Equal(t, int64(2), after.Throttled-before.Throttled)
	require.Equal(t, int64(2+2), after.Batches-before.Batches, "two batches of 256 and 44, two refused and sent again")

	keys = oldGarbage(t, b, "run-2", 20)
	before = srv.Counts()
	srv.Throttle(3)
	res, err = sweep.Sweep(ctx, b, "run-2", include, sweep.WithErrorClassifier(azdelete.Classifier{}))
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: int64(len(keys))}, *res)
	after = srv.Counts()
	require.Equal(t, int64(3), after.Throttled-before.Throttled)
	require.Equal(t, int64(len(keys)+3), after.Deletes-before.Deletes)
}
