package sweep

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/localfs"
	"gocloud.dev/blob"
)

// WithLocalListing's pager: internal/localfs reads a local namespace's
// folders once each, listing the keys fileblob's listing would; here each
// chunk it reads is one request of the listing window, retried as a failed
// page is. Its order is the file system's: Mark sorts it as any listing not
// in ascending order.

// localPager is the pager of a localfs.Lister. Its Next has the contract of
// blob.ListIterator's; close releases its open folder. Not safe for
// concurrent use.
type localPager struct {
	lst      *localfs.Lister
	win      *aimd.Window
	backoff  backoff
	cls      classifiers // WithErrorClassifier's, as the pager's
	page     []*blob.ListObject
	i        int
	err      error     // the error that ended the listing, returned again
	answered time.Time // when the last page was read
}

// newLocalPager returns the pager of prefix in the bucket whose folder is
// root, or nil when localfs cannot list it exactly as fileblob does; the
// caller then lists through the bucket.
func newLocalPager(root, prefix string, win *aimd.Window, b backoff) *localPager {
	return wrapLocal(localfs.New(root, prefix), win, b)
}

// newLocalLevelPager is newLocalPager with the delimiter "/".
func newLocalLevelPager(root, prefix string, win *aimd.Window, b backoff) *localPager {
	return wrapLocal(localfs.NewLevel(root, prefix), win, b)
}

func wrapLocal(l *localfs.Lister, win *aimd.Window, b backoff) *localPager {
	if l == nil {
		return nil
	}
	return &localPager{lst: l, win: win, backoff: b}
}

// Next returns the next object of the listing, or io.EOF after the last.
// Once it has failed it returns the same error again, never io.EOF: a
// caller that asks again must not take a broken listing for a whole one.
func (p *localPager) Next(ctx context.Context) (*blob.ListObject, error) {
	if p.err != nil {
		return nil, p.err
	}
	for p.i == len(p.page) {
		if p.lst.Done() {
			return nil, io.EOF
		}
		if err := p.fetch(ctx); err != nil {
			p.close()
			p.err = err
			return nil, err
		}
	}
	o := p.page[p.i]
	p.page[p.i] = nil
	p.i++
	return o, nil
}

// close releases the folder being read; Next must not be called after.
func (p *localPager) close() { p.lst.Close() }

// fetch reads the next page within the window, retrying as pager.fetch
// does: transient errors after a backoff, up to listAttempts in all.
func (p *localPager) fetch(ctx context.Context) error {
	p.page, p.i = p.page[:0], 0
	return fetchPage(ctx, p.win, p.cls, p.backoff, &p.answered, func() error {
		var err error
		p.page, err = p.lst.Read(p.page)
		return err
	})
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
