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
// transient error. Its Next has the contract of blob.ListIterator's.
type pager struct {
	bucket  PageLister
	opts    *blob.ListOptions
	win     *aimd.Window
	backoff backoff
	cls     classifiers

	token    []byte
	page     []*blob.ListObject
	i        int
	answered time.Time // when the last page arrived
}

// objectPager is a listing, one page at a time: a pager, or a localPager
// when Mark lists a local namespace's folders itself (WithLocalListing).
// Next has the contract of blob.ListIterator's; close releases what the
// listing holds when it is left before its end.
type objectPager interface {
	Next(ctx context.Context) (*blob.ListObject, error)
	close()
}

// pages returns a pager of the listing of opts: with WithLocalListing, it
// reads the folder itself where it can list the prefix as fileblob does.
func (l *lister) pages(opts *blob.ListOptions) objectPager {
	l.winOnce.Do(func() { l.win = l.cfg.list.window() })
	if l.cfg.localDir != "" {
		var p *localPager
		switch opts.Delimiter {
		case "":
			p = newLocalPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff)
		case "/":
			p = newLocalLevelPager(l.cfg.localDir, opts.Prefix, l.win, l.cfg.backoff)
		}
		if p != nil {
			p.cls = l.cfg.classify
			return p
		}
	}
	var pl PageLister = l.bucket
	if l.cfg.pageLister != nil {
		pl = l.cfg.pageLister
	}
	return &pager{
		bucket:  pl,
		opts:    opts,
		win:     l.win,
		backoff: l.cfg.backoff,
		cls:     l.cfg.classify,
		token:   blob.FirstPageToken,
	}
}

func (p *pager) close() {}

// Next returns the next object of the listing, or io.EOF after the last.
func (p *pager) Next(ctx context.Context) (*blob.ListObject, error) {
	for p.i == len(p.page) {
		if len(p.token) == 0 {
			return nil, io.EOF
		}
		if err := p.fetch(ctx); err != nil {
			return nil, err
		}
	}
	o := p.page[p.i]
	p.page[p.i] = nil
	p.i++
	return o, nil
}

// fetch reads the page of p.token. The caller's work on the previous page
// (from its arrival to this call) tells the window whether more requests at
// once would help.
func (p *pager) fetch(ctx context.Context) error {
	return fetchPage(ctx, p.win, p.cls, p.backoff, &p.answered, func() error {
		page, next, err := p.bucket.ListPage(ctx, p.token, listPageSize, p.opts)
		if err == nil {
			p.page, p.i, p.token = page, 0, next
		}
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
