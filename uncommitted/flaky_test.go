package uncommitted_test

import (
	"context"
	"errors"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// errAmbiguous is what a flaky bucket's Close reports after it committed
// the object: the upload's outcome looks unknown to the caller.
var errAmbiguous = errors.New("injected: connection reset after the upload")

// flakyDriver serves a base bucket and, for each write that failClose
// picks, commits the object and then reports errAmbiguous from Close.
type flakyDriver struct {
	base *blob.Bucket

	mu        sync.Mutex
	failClose func(key string) bool
}

func newFlakyBucket(base *blob.Bucket, failClose func(key string) bool) *blob.Bucket {
	return blob.NewBucket(&flakyDriver{base: base, failClose: failClose})
}

func (d *flakyDriver) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (d *flakyDriver) As(any) bool                            { return false }
func (d *flakyDriver) ErrorAs(error, any) bool                { return false }
func (d *flakyDriver) Close() error                           { return nil }

func (d *flakyDriver) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := d.base.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ContentType: a.ContentType, ModTime: a.ModTime, Size: a.Size, Metadata: a.Metadata, MD5: a.MD5}, nil
}

func (d *flakyDriver) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	tok := opts.PageToken
	if len(tok) == 0 {
		tok = blob.FirstPageToken
	}
	size := opts.PageSize
	if size <= 0 {
		size = 1000
	}
	objs, next, err := d.base.ListPage(ctx, tok, size, &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

type flakyReader struct{ r *blob.Reader }

func (r flakyReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r flakyReader) Close() error               { return r.r.Close() }
func (r flakyReader) As(any) bool                { return false }
func (r flakyReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (d *flakyDriver) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	r, err := d.base.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return flakyReader{r}, nil
}

// flakyWriter is a write to the base bucket whose Close may fail after it
// committed.
type flakyWriter struct {
	w    *blob.Writer
	fail bool
}

func (w *flakyWriter) Write(p []byte) (int, error) { return w.w.Write(p) }

func (w *flakyWriter) Close() error {
	if err := w.w.Close(); err != nil {
		return err // aborted, or failed for real: nothing committed
	}
	if w.fail {
		return errAmbiguous
	}
	return nil
}

func (d *flakyDriver) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	w, err := d.base.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType, ContentMD5: opts.ContentMD5})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	fail := d.failClose != nil && d.failClose(key)
	d.mu.Unlock()
	return &flakyWriter{w: w, fail: fail}, nil
}

func (d *flakyDriver) Copy(ctx context.Context, dst, src string, _ *driver.CopyOptions) error {
	return d.base.Copy(ctx, dst, src, nil)
}

func (d *flakyDriver) Delete(ctx context.Context, key string) error { return d.base.Delete(ctx, key) }

func (d *flakyDriver) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("flaky bucket: no signed URLs")
}
