package retry

import (
	"context"
	"fmt"
	"io"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/aimd"
)

// A ReadFunc makes the request of a listing's next page, appending its
// objects to page, and says whether more follow. On an error, the page
// keeps what was appended, and the next call resumes.
type ReadFunc func(ctx context.Context, page []*blob.ListObject) (_ []*blob.ListObject, more bool, _ error)

// A PageLister lists one page of a bucket, with the contract of
// blob.Bucket's ListPage.
type PageLister interface {
	ListPage(ctx context.Context, pageToken []byte, pageSize int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error)
}

// A Pager lists a prefix one page (one request) at a time, each request
// within a window and tried again after a backoff when it fails with a
// transient error, up to PageAttempts in all. Its Next has the contract of
// blob.ListIterator's, but once it has failed it returns the same error
// again, never io.EOF: a caller that asks again must not take a broken
// listing for a whole one. Not safe for concurrent use.
type Pager struct {
	read     ReadFunc
	release  func() // nil: nothing to release
	win      *aimd.Window
	backoff  Backoff
	classify Classifier

	more     bool
	page     []*blob.ListObject
	i        int
	err      error     // the error that ended the listing, returned again
	answered time.Time // when the last page arrived
}

// NewPager returns the Pager of the pages read reads, the first only if
// more; release (nil: none) frees what a listing left before its end
// holds, and is called once the listing failed or by Close.
func NewPager(read ReadFunc, release func(), more bool, win *aimd.Window, b Backoff, classify Classifier) *Pager {
	return &Pager{read: read, release: release, win: win, backoff: b, classify: classify, more: more}
}

// NewBucketPager returns the Pager of pl's listing of opts, PageSize keys
// a request.
func NewBucketPager(pl PageLister, opts *blob.ListOptions, win *aimd.Window, b Backoff, classify Classifier) *Pager {
	token := blob.FirstPageToken
	read := func(ctx context.Context, _ []*blob.ListObject) ([]*blob.ListObject, bool, error) {
		page, next, err := pl.ListPage(ctx, token, PageSize, opts)
		if err != nil {
			return nil, true, err
		}
		token = next
		return page, len(next) > 0, nil
	}
	return NewPager(read, nil, true, win, b, classify)
}

// Close releases what a listing left before its end holds.
func (p *Pager) Close() {
	if p.release != nil {
		p.release()
	}
}

// Next returns the next object of the listing, or io.EOF after the last.
func (p *Pager) Next(ctx context.Context) (*blob.ListObject, error) {
	if p.err != nil {
		return nil, p.err
	}
	for p.i == len(p.page) {
		if !p.more {
			return nil, io.EOF
		}
		if err := p.fetch(ctx); err != nil {
			p.Close()
			p.err = err
			return nil, err
		}
	}
	o := p.page[p.i]
	p.page[p.i] = nil
	p.i++
	return o, nil
}

// fetch reads the next page, within the window, trying it again after a
// backoff when it fails with a transient error, up to PageAttempts in all.
// The caller's work on the previous page (from its arrival to this call)
// tells the window whether more requests at once would help.
func (p *Pager) fetch(ctx context.Context) error {
	p.page, p.i = p.page[:0], 0
	var work time.Duration
	if !p.answered.IsZero() {
		work = time.Since(p.answered)
	}
	for attempt := 1; ; attempt++ {
		// The window checks ctx only when it has no room.
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := p.win.Acquire(ctx)
		if err != nil {
			return err
		}
		p.page, p.more, err = p.read(ctx, p.page)
		p.win.Release(s, p.classify.Judge(err), work)
		if err == nil {
			p.answered = time.Now()
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if !p.classify.Transient(err) {
			return err
		}
		if attempt >= PageAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		if err := p.backoff.Wait(ctx, attempt); err != nil {
			return err
		}
		work = 0
	}
}
