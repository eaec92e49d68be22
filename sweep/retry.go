package sweep

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/aimd"
)

// Attempts of a request that fails with a transient error (see
// BatchDeleter), the first included. A listing page gets more than a delete
// batch: a listing that gives up fails the whole Mark, while a key that
// gives up is listed in failed/ and the next Sweep tries it again. With the
// default backoff, ten attempts wait out three to six minutes of throttling
// (1+2+...+64+120+120 s at most, each wait drawn from its upper half).
const (
	deleteAttempts = 5
	listAttempts   = 10
)

// listPageSize is the keys a listing request asks for: the most S3 returns.
const listPageSize = 1000

// backoff is the wait before each retry of a request: from lo, doubling
// with each retry up to hi, each wait drawn uniformly from its upper half so
// that requests throttled together do not come back together.
type backoff struct {
	lo, hi time.Duration
	// sleep waits: the function sleep, but in tests, which run minutes
	// of backoff in simulated time.
	sleep func(ctx context.Context, d time.Duration) error
}

// wait sleeps before retry number n (1 for the first retry).
func (b backoff) wait(ctx context.Context, n int) error {
	d := b.lo
	for i := 1; i < n && d < b.hi; i++ {
		if d > b.hi/2 {
			d = b.hi
			break
		}
		d *= 2
	}
	d = min(d, b.hi)
	return b.sleep(ctx, d/2+rand.N(d/2+1))
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// judge says what a request's error tells the window.
func judge(err error, cs classifiers) aimd.Outcome {
	switch {
	case err == nil:
		return aimd.Answered
	case cs.errorCode(err) == gcerrors.ResourceExhausted:
		return aimd.Throttled
	}
	return aimd.Failed
}

// pager lists a prefix one page (one request) at a time, each request
// within the window and retried after a backoff when it fails with a
// transient error: a page of the bucket's ListPage (or WithPageLister's
// lister), or, with WithLocalListing, a chunk of a local folder read by
// internal/localfs. Its Next has the contract of blob.ListIterator's, but
// once it has failed it returns the same error again, never io.EOF: a
// caller that asks again must not take a broken listing for a whole one.
// close releases what a listing left before its end holds. Not safe for
// concurrent use.
type pager struct {
	// read makes the request of the next page, appending its objects to
	// page, and says whether more follow. On an error, page keeps what
	// was appended, and the next call resumes.
	read    func(ctx context.Context, page []*blob.ListObject) ([]*blob.ListObject, bool, error)
	release func() // nil: nothing to release
	win     *aimd.Window
	backoff backoff
	cls     classifiers

	more     bool
	page     []*blob.ListObject
	i        int
	err      error     // the error that ended the listing, returned again
	answered time.Time // when the last page arrived
}

// newBucketPager returns the pager of pl's listing of opts.
func newBucketPager(pl PageLister, opts *blob.ListOptions, win *aimd.Window, b backoff) *pager {
	token := blob.FirstPageToken
	read := func(ctx context.Context, _ []*blob.ListObject) ([]*blob.ListObject, bool, error) {
		page, next, err := pl.ListPage(ctx, token, listPageSize, opts)
		if err != nil {
			return nil, true, err
		}
		token = next
		return page, len(next) > 0, nil
	}
	return &pager{read: read, win: win, backoff: b, more: true}
}

// pages returns a pager of the listing of opts: with WithLocalListing, it
// reads the folder itself where it can list the prefix as fileblob does.
func (l *lister) pages(opts *blob.ListOptions) *pager {
	l.winOnce.Do(func() { l.win = l.cfg.list.window() })
	var p *pager
	if l.cfg.localDir != "" {
		switch opts.Delimiter {
		case "":
			p, _ = newLocalPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff)
		case "/":
			p, _ = newLocalLevelPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff)
		}
	}
	if p == nil {
		var pl PageLister = l.bucket
		if l.cfg.pageLister != nil {
			pl = l.cfg.pageLister
		}
		p = newBucketPager(pl, opts, l.win, l.cfg.backoff)
	}
	p.cls = l.cfg.classify
	return p
}

func (p *pager) close() {
	if p.release != nil {
		p.release()
	}
}

// Next returns the next object of the listing, or io.EOF after the last.
func (p *pager) Next(ctx context.Context) (*blob.ListObject, error) {
	if p.err != nil {
		return nil, p.err
	}
	for p.i == len(p.page) {
		if !p.more {
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

// fetch reads the next page. The caller's work on the previous page (from
// its arrival to this call) tells the window whether more requests at once
// would help.
func (p *pager) fetch(ctx context.Context) error {
	p.page, p.i = p.page[:0], 0
	return fetchPage(ctx, p.win, p.cls, p.backoff, &p.answered, func() (err error) {
		p.page, p.more, err = p.read(ctx, p.page)
		return err
	})
}

// fetchPage makes read, the request of one listing page, within win,
// retrying it after a backoff b when it fails with an error cls calls
// transient, up to listAttempts in all. *answered is when the previous page
// arrived (zero before the first): the caller's work since tells the window
// whether more requests at once would help; it is set when this page
// arrives.
func fetchPage(ctx context.Context, win *aimd.Window, cls classifiers, b backoff, answered *time.Time, read func() error) error {
	var work time.Duration
	if !answered.IsZero() {
		work = time.Since(*answered)
	}
	for attempt := 1; ; attempt++ {
		// The window checks ctx only when it has no room.
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := win.Acquire(ctx)
		if err != nil {
			return err
		}
		err = read()
		win.Release(s, judge(err, cls), work)
		if err == nil {
			*answered = time.Now()
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if !cls.transient(err) {
			return err
		}
		if attempt >= listAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		if err := b.wait(ctx, attempt); err != nil {
			return err
		}
		work = 0
	}
}
