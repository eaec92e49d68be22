package sweep

import (
	"github.com/lakegc/lakegc/internal/retry"
	"gocloud.dev/blob"
)

// deleteAttempts is the attempts of a delete that fails with a transient
// error (see BatchDeleter), the first included: fewer than a listing page's
// (retry.PageAttempts), as a listing that gives up fails the whole Mark,
// while a key that gives up is listed in failed/ and the next Sweep tries
// it again.
const deleteAttempts = 5

// pages returns the pager of the listing of opts (see internal/retry):
// with WithLocalListing, it reads the folder itself where it can list the
// prefix as fileblob does; otherwise a page is the bucket's ListPage, or
// WithPageLister's lister's.
func (l *lister) pages(opts *blob.ListOptions) *retry.Pager {
	l.winOnce.Do(func() { l.win = l.cfg.list.doublingWindow() })
	cls := l.cfg.classify.classifier()
	var p *retry.Pager
	if l.cfg.localDir != "" {
		switch opts.Delimiter {
		case "":
			p, _ = newLocalPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff, cls)
		case "/":
			p, _ = newLocalLevelPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff, cls)
		}
	}
	if p == nil {
		var pl PageLister = l.bucket
		if l.cfg.pageLister != nil {
			pl = l.cfg.pageLister
		}
		p = retry.NewBucketPager(pl, opts, l.win, l.cfg.backoff, cls)
	}
	return p
}
