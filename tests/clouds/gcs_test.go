package clouds_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/tests/internal/gcstest"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/iterator"
)

// bucketObjects lists every object of a GCS bucket by its stored name.
func bucketObjects(t *testing.T, c *storage.Client, bucket string) []string {
	t.Helper()
	var out []string
	it := c.Bucket(bucket).Objects(context.Background(), nil)
	for {
		o, err := it.Next()
		if errors.Is(err, iterator.Done) {
			slices.Sort(out)
			return out
		}
		require.NoError(t, err)
		out = append(out, o.Name)
	}
}

// TestGCSDeleter deletes 300 objects and the odd keys through a prefixed
// bucket, a few at a time: nothing outside the prefix, and a second delete
// finds them gone.
func TestGCSDeleter(t *testing.T) {
	ctx := context.Background()
	srv := gcstest.Start(t)
	root := srv.Bucket(t, "lake")
	writeKeys(t, root, []string{"outside", "repo10/sibling"})
	b := blob.PrefixedBucket(root, "repo1/")
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("data/s%d/obj-%03d", i%3, i))
	}
	keys = append(keys, oddKeys...)
	writeKeys(t, b, keys)
	require.Len(t, bucketObjects(t, srv.Client(), "lake"), len(keys)+2)

	d, err := gcsdelete.FromBucket(b, gcsdelete.WithConcurrency(4))
	require.NoError(t, err)
	before := srv.Counts()
	failed, err := d.DeleteBatch(ctx, keys)
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Equal(t, int64(len(keys)), srv.Counts().Deletes-before.Deletes, "one request an object")
	require.Equal(t, []string{"outside", "repo10/sibling"}, bucketObjects(t, srv.Client(), "lake"))

	failed, err = d.DeleteBatch(ctx, keys)
	require.NoError(t, err)
	require.Len(t, failed, len(keys))
	for k, err := range failed {
		require.ErrorIs(t, err, storage.ErrObjectNotExist, "%q", k)
	}
}

func TestGCSDeleterOptions(t *testing.T) {
	srv := gcstest.Start(t)
	b := srv.Bucket(t, "lake")
	_, err := gcsdelete.FromBucket(b, gcsdelete.WithConcurrency(0))
	require.ErrorIs(t, err, gcsdelete.ErrInvalidInput)
	_, err = gcsdelete.FromBucket(nil)
	require.ErrorIs(t, err, gcsdelete.ErrNotGCS)
	_, err = gcsdelete.FromBucket(memblob.OpenBucket(nil))
	require.ErrorIs(t, err, gcsdelete.ErrNotGCS)
}

// TestGCSForbiddenIsNotGone: gcsblob calls GCS's 403 NotFound, but the
// object is there; Sweep must count it as failed, not as already gone.
func TestGCSForbiddenIsNotGone(t *testing.T) {
	ctx := context.Background()
	srv := gcstest.Start(t, gcstest.WithFailingDeletes(func(_, object string) bool { return strings.HasSuffix(object, "-001") }))
	b := srv.Bucket(t, "lake")
	keys := oldGarbage(t, b, "run-1", 3)

	err := b.Delete(ctx, keys[1])
	require.Equal(t, gcerrors.NotFound, gcerrors.Code(err), "gocloud's code for GCS's 403")
	ok, err := b.Exists(ctx, keys[1])
	require.NoError(t, err)
	require.True(t, ok, "yet the object is there")

	res, err := sweep.Sweep(ctx, b, "run-1", include, sweep.WithErrorClassifier(gcsdelete.Classifier{}))
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: 2, Failed: 1}, *res)
	require.Contains(t, readFailed(t, b, "run-1")[keys[1]], "Event-Based hold")
}

// TestGCSThrottled sweeps while GCS answers 429: Sweep retries, with
// gcsdelete and with the default deleter.
func TestGCSThrottled(t *testing.T) {
	ctx := context.Background()
	srv := gcstest.Start(t)
	b := srv.Bucket(t, "lake")
	for i, deleter := range []func() sweep.BatchDeleter{
		func() sweep.BatchDeleter {
			d, err := gcsdelete.FromBucket(b)
			require.NoError(t, err)
			return d
		},
		nil,
	} {
		runID := fmt.Sprintf("run-%d", i)
		keys := oldGarbage(t, b, runID, 40)
		opts := append([]sweep.SweepOption{include}, classify...)
		if deleter != nil {
			opts = append(opts, sweep.WithBatchDeleter(deleter()))
		}
		before := srv.Counts()
		srv.Throttle(3)
		res, err := sweep.Sweep(ctx, b, runID, opts...)
		require.NoError(t, err)
		require.Equal(t, sweep.Result{Deleted: int64(len(keys))}, *res)
		after := srv.Counts()
		require.Equal(t, int64(3), after.Throttled-before.Throttled)
		require.Equal(t, int64(len(keys)+3), after.Deletes-before.Deletes)
	}
}
