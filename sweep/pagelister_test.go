package sweep

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// countingLister lists through a bucket, counting its pages, and lets a
// test edit them.
type countingLister struct {
	b     *blob.Bucket
	pages atomic.Int64 // ListPage is called from the listing's goroutines
	edit  func(prefix string, objs []*blob.ListObject)
}

func (c *countingLister) ListPage(ctx context.Context, tok []byte, n int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error) {
	objs, next, err := c.b.ListPage(ctx, tok, n, opts)
	c.pages.Add(1)
	if err == nil && c.edit != nil {
		c.edit(opts.Prefix, objs)
	}
	return objs, next, err
}

// TestMarkListsThroughPageLister: with WithPageLister every page comes from
// the lister, the mark equals the bucket's own, and the lister's pages get
// the listing's checks.
func TestMarkListsThroughPageLister(t *testing.T) {
	plain, keys := oldNamespace(t, 40)
	want, err := Mark(context.Background(), plain, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), want.NumDeletedObjects)

	b := plain // the same namespace, marked again through the lister
	l := &countingLister{b: b}
	got, err := Mark(context.Background(), b, "run2", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithPageLister(l))
	require.NoError(t, err)
	require.Positive(t, l.pages.Load())
	require.Equal(t, want.NumDeletedObjects, got.NumDeletedObjects)
	require.Equal(t, want.FirstSlice, got.FirstSlice)
	require.Equal(t, collect(t, Candidates(context.Background(), plain, DefaultStoragePrefix, "run1")),
		collect(t, Candidates(context.Background(), b, DefaultStoragePrefix, "run2")))

	b, keys = oldNamespace(t, 40)
	slice := strings.Split(keys[0], "/")[1]
	bad := &countingLister{b: b, edit: func(prefix string, objs []*blob.ListObject) {
		if prefix == "data/"+slice+"/" && len(objs) > 0 {
			objs[0].Key = "_lakefs/meta/x" // outside the folder listed
		}
	}}
	sum, err := Mark(context.Background(), b, "run3", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithPageLister(bad))
	require.ErrorIs(t, err, ErrBadListing)
	require.Nil(t, sum)
}
