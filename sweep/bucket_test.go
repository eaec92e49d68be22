package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// testDriver wraps a bucket to control what the tests need: the order of
// listings (shuffled across pages), the modification times objects report,
// keys listed more than once, delimiters ignored, and injected failures.
type testDriver struct {
	base *blob.Bucket

	mu       sync.Mutex
	rng      *rand.Rand // non-nil: listings come back shuffled
	listings map[string][]*driver.ListObject
	modTime  func(key string) time.Time // nil: the base's
	// copies gives the modification times of further copies of key that a
	// listing returns, as a store that lists versions or replays a page
	// would: after the listing's last key (in order), or anywhere when
	// shuffled.
	copies func(key string) []time.Time
	// ignoreDelimiter says which delimited listings come back as if no
	// delimiter had been given, as from a backend that ignores it.
	ignoreDelimiter func(prefix string) bool
	// edit changes an entry of a listing of prefix before it is returned.
	edit      func(prefix string, o *driver.ListObject)
	listErr   func(prefix string) error
	deleteErr func(key string) error
	writeErr  func(key string) error
	readErr   func(key string) error
}

// codeErr is an injected error with a gocloud code.
type codeErr struct{ code gcerrors.ErrorCode }

func (e codeErr) Error() string { return "injected " + e.code.String() }

func (e codeErr) ErrorCode() gcerrors.ErrorCode { return e.code }

func newTestBucket(base *blob.Bucket, d *testDriver) *blob.Bucket {
	d.base = base
	d.listings = map[string][]*driver.ListObject{}
	return blob.NewBucket(d)
}

func (d *testDriver) ErrorCode(err error) gcerrors.ErrorCode {
	var ce codeErr
	if errors.As(err, &ce) {
		return ce.code
	}
	return gcerrors.Code(err)
}

func (d *testDriver) As(any) bool             { return false }
func (d *testDriver) ErrorAs(error, any) bool { return false }
func (d *testDriver) Close() error            { return nil }
func (d *testDriver) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return codeErr{gcerrors.Unimplemented}
}
func (d *testDriver) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", codeErr{gcerrors.Unimplemented}
}

func (d *testDriver) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := d.base.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ContentType: a.ContentType, ModTime: d.mod(key, a.ModTime), Size: a.Size, Metadata: a.Metadata}, nil
}

func (d *testDriver) mod(key string, t time.Time) time.Time {
	if d.modTime != nil {
		return d.modTime(key)
	}
	return t
}

func (d *testDriver) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if d.listErr != nil {
		if err := d.listErr(opts.Prefix); err != nil {
			return nil, err
		}
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = 1000
	}
	bopts := &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter}
	if d.ignoreDelimiter != nil && d.ignoreDelimiter(opts.Prefix) {
		bopts.Delimiter = ""
	}
	if d.rng == nil && d.copies == nil {
		tok := opts.PageToken
		if len(tok) == 0 {
			tok = blob.FirstPageToken
		}
		objs, next, err := d.base.ListPage(ctx, tok, pageSize, bopts)
		if err != nil {
			return nil, err
		}
		page := &driver.ListPage{NextPageToken: next}
		for _, o := range objs {
			page.Objects = append(page.Objects, d.convert(opts.Prefix, o))
		}
		return page, nil
	}
	// Shuffled or with copies: the whole listing is read on the first page,
	// copies added, shuffled, and served in pages from memory.
	d.mu.Lock()
	defer d.mu.Unlock()
	var id string
	offset := 0
	if len(opts.PageToken) == 0 {
		var all, again []*driver.ListObject
		it := d.base.List(bopts)
		for {
			o, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			all = append(all, d.convert(opts.Prefix, o))
			if d.copies != nil && !o.IsDir {
				for _, mod := range d.copies(o.Key) {
					again = append(again, &driver.ListObject{Key: o.Key, ModTime: mod, Size: o.Size, MD5: o.MD5})
				}
			}
		}
		all = append(all, again...)
		if d.rng != nil {
			d.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		}
		id = strconv.Itoa(len(d.listings))
		d.listings[id] = all
	} else {
		var err error
		id, offset, err = parseToken(string(opts.PageToken))
		if err != nil {
			return nil, err
		}
	}
	all := d.listings[id]
	end := min(offset+pageSize, len(all))
	page := &driver.ListPage{Objects: all[offset:end]}
	if end < len(all) {
		page.NextPageToken = []byte(fmt.Sprintf("%s:%d", id, end))
	}
	return page, nil
}

func parseToken(tok string) (string, int, error) {
	id, off, ok := strings.Cut(tok, ":")
	n, err := strconv.Atoi(off)
	if !ok || err != nil {
		return "", 0, codeErr{gcerrors.InvalidArgument}
	}
	return id, n, nil
}

func (d *testDriver) convert(prefix string, o *blob.ListObject) *driver.ListObject {
	mod := o.ModTime
	if !o.IsDir {
		mod = d.mod(o.Key, o.ModTime)
	}
	out := &driver.ListObject{Key: o.Key, ModTime: mod, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir}
	if d.edit != nil {
		d.edit(prefix, out)
	}
	return out
}

type testReader struct{ r *blob.Reader }

func (r testReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r testReader) Close() error               { return r.r.Close() }
func (r testReader) As(any) bool                { return false }
func (r testReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (d *testDriver) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if d.readErr != nil {
		if err := d.readErr(key); err != nil {
			return nil, err
		}
	}
	r, err := d.base.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return testReader{r}, nil
}

func (d *testDriver) NewTypedWriter(ctx context.Context, key, contentType string, _ *driver.WriterOptions) (driver.Writer, error) {
	if d.writeErr != nil {
		if err := d.writeErr(key); err != nil {
			return nil, err
		}
	}
	return d.base.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
}

func (d *testDriver) Delete(ctx context.Context, key string) error {
	if d.deleteErr != nil {
		if err := d.deleteErr(key); err != nil {
			return err
		}
	}
	return d.base.Delete(ctx, key)
}
