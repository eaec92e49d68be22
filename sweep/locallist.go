package sweep

import (
	"context"
	"fmt"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/localfs"
	"github.com/lakegc/lakegc/internal/retry"
	"gocloud.dev/blob"
)

// WithLocalListing's pager: internal/localfs reads a local namespace's
// folders once each, listing the keys fileblob's listing would; here each
// chunk it reads is one request of the listing window, retried as a failed
// page is. Its order is the file system's: Mark sorts it as any listing not
// in ascending order.

// newLocalPager returns the pager of prefix in the bucket whose folder is
// root, and its Lister, or nil when localfs cannot list it exactly as
// fileblob does; the caller then lists through the bucket.
func newLocalPager(root, prefix string, win *aimd.Window, b retry.Backoff, cls retry.Classifier) (*retry.Pager, *localfs.Lister) {
	return localPager(localfs.New(root, prefix), win, b, cls)
}

// newLocalLevelPager is newLocalPager with the delimiter "/".
func newLocalLevelPager(root, prefix string, win *aimd.Window, b retry.Backoff, cls retry.Classifier) (*retry.Pager, *localfs.Lister) {
	return localPager(localfs.NewLevel(root, prefix), win, b, cls)
}

func localPager(l *localfs.Lister, win *aimd.Window, b retry.Backoff, cls retry.Classifier) (*retry.Pager, *localfs.Lister) {
	if l == nil {
		return nil, nil
	}
	read := func(_ context.Context, page []*blob.ListObject) ([]*blob.ListObject, bool, error) {
		page, err := l.Read(page)
		return page, !l.Done(), err
	}
	return retry.NewPager(read, l.Close, !l.Done(), win, b, cls), l
}

// checkLocalRoot checks WithLocalListing's folder against the bucket (see
// localfs.CheckRoot): a bucket opened at another folder or with a prefix
// would make the listing's keys another bucket's.
func checkLocalRoot(ctx context.Context, bucket *blob.Bucket, dir string) error {
	if err := localfs.CheckRoot(ctx, bucket, dir); err != nil {
		return fmt.Errorf("%w: WithLocalListing(%q): %w", ErrInvalidInput, dir, err)
	}
	return nil
}
