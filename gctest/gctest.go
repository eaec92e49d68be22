// Package gctest is the test kit of a host: one simulated clock for every
// time a GC cycle reads, so that a test lives days of a store's history in
// a second.
//
// A GC cycle reads three clocks, and a test must keep them in step:
//
//   - the host's path provider, whose slice names encode the time of each
//     new address: pathprovider.WithClock(clock.Now), or [Clock.Paths];
//   - the bucket's modification times, by which the mark keeps objects
//     younger than its cutoff: [Clock.Bucket] wraps a bucket (memblob,
//     fileblob, any gocloud.dev/blob bucket) so that an object's
//     modification time is the clock's time when its write completed;
//   - the cycle's own: lakegc.Config.Clock = clock.Now (and the clocks of
//     linkaddr and copytrack, if the test uses them).
//
// A test writes its history, moving the clock forward (Advance, Set), and
// runs the cycle at the time it wants:
//
//	clock := gctest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	bucket := clock.Bucket(memblob.OpenBucket(nil))
//	paths, _ := clock.Paths()
//	// ... write objects at paths.NewPath(), commit, stage, clock.Advance(time.Hour) ...
//	clock.Advance(72 * time.Hour)
//	report, err := lakegc.Collect(ctx, host, lakegc.Config{Bucket: bucket, Clock: clock.Now, ...})
//
// gocloud.dev/blob has no way to set an object's modification time
// (memblob stamps the wall clock's, fileblob the file's), so the wrapper
// rewrites the times its driver reports, through blob's driver interface.
// It keeps the times of the objects written, copied and deleted through
// it, in memory, each with what the inner bucket reported of the object
// just after the write (its own modification time, size and MD5, read
// again whenever the wrapper reports a time). An object written to the
// inner bucket directly, or before the wrapper existed, reports no
// modification time, which the mark reads as unknown and keeps; so does
// one written through the wrapper and then overwritten around it, which
// would otherwise look as old as the first write. (An overwrite around it
// with the same bytes, within the file system's timestamp granularity, is
// the one it cannot tell.) Write every object through the wrapper, and
// open it once per test. Everything is safe for concurrent use.
package gctest

import (
	"bytes"
	"context"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/pathprovider"
)

// Clock is a simulated clock. Its zero value is not usable: NewClock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d (back, for a negative d) and returns the
// new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Paths returns a path provider on the clock: pathprovider.New with opts
// and, last, pathprovider.WithClock(c.Now).
func (c *Clock) Paths(opts ...pathprovider.Option) (*pathprovider.Partitioned, error) {
	return pathprovider.New(append(opts, pathprovider.WithClock(c.Now))...)
}

// Bucket wraps inner in a bucket whose modification times follow the
// clock: an object written or copied through it has the clock's time when
// the write (or copy) completed, in listings, attributes and readers; an
// object it did not see written, or saw written and then changed around
// it, has none (the zero time). It goes through
// gocloud.dev/blob's driver interface, so every bucket works. Closing it
// closes inner. Its As answers false to every type, so that no caller
// reads around its times; ErrorAs passes on inner's.
func (c *Clock) Bucket(inner *blob.Bucket) *blob.Bucket {
	return blob.NewBucket(&clockDriver{clock: c, inner: inner, times: map[string]stamp{}})
}

// clockDriver is the driver of Clock.Bucket: it calls inner's public API
// and rewrites modification times.
type clockDriver struct {
	clock *Clock
	inner *blob.Bucket
	mu    sync.Mutex
	times map[string]stamp
}

// stamp is the clock's time of an object's last write through the wrapper,
// with what the inner bucket reported of the object then: the time holds
// only while the inner bucket still reports the same object.
type stamp struct {
	at    time.Time // the clock's
	inner time.Time // the inner bucket's modification time
	size  int64
	md5   []byte
}

var _ driver.Bucket = (*clockDriver)(nil)

// modTime is the clock's time of the object at key, if the wrapper wrote
// it and the inner bucket still reports that object, by its attributes
// (attrs, or read now if nil): the same modification time, size and MD5;
// else the zero time, which the mark keeps.
func (d *clockDriver) modTime(ctx context.Context, key string, attrs *blob.Attributes) time.Time {
	d.mu.Lock()
	st, ok := d.times[key]
	d.mu.Unlock()
	if !ok {
		return time.Time{}
	}
	if attrs == nil {
		a, err := d.inner.Attributes(ctx, key)
		if err != nil {
			return time.Time{}
		}
		attrs = a
	}
	if !st.inner.Equal(attrs.ModTime) || st.size != attrs.Size || !bytes.Equal(st.md5, attrs.MD5) {
		return time.Time{}
	}
	return st.at
}

// touch records the clock's time for the object just written at key, with
// what the inner bucket reports of it; an object it cannot read gets no
// time.
func (d *clockDriver) touch(ctx context.Context, key string) {
	now := d.clock.Now()
	a, err := d.inner.Attributes(ctx, key)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		delete(d.times, key)
		return
	}
	d.times[key] = stamp{at: now, inner: a.ModTime, size: a.Size, md5: a.MD5}
}

func (d *clockDriver) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.times, key)
}

func (d *clockDriver) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (d *clockDriver) As(any) bool                            { return false }
func (d *clockDriver) ErrorAs(err error, i any) bool          { return d.inner.ErrorAs(err, i) }
func (d *clockDriver) Close() error                           { return d.inner.Close() }

func (d *clockDriver) SignedURL(ctx context.Context, key string, opts *driver.SignedURLOptions) (string, error) {
	return d.inner.SignedURL(ctx, key, &blob.SignedURLOptions{Expiry: opts.Expiry, Method: opts.Method,
		ContentType: opts.ContentType, EnforceAbsentContentType: opts.EnforceAbsentContentType})
}

func (d *clockDriver) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := d.inner.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	t := d.modTime(ctx, key, a)
	return &driver.Attributes{CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, ContentType: a.ContentType,
		Metadata: a.Metadata, CreateTime: t, ModTime: t, Size: a.Size, MD5: a.MD5, ETag: a.ETag}, nil
}

func (d *clockDriver) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	size := opts.PageSize
	if size <= 0 {
		size = 1000
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := d.inner.ListPage(ctx, token, size,
		&blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, BeforeList: opts.BeforeList})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		lo := &driver.ListObject{Key: o.Key, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir}
		if !o.IsDir {
			lo.ModTime = d.modTime(ctx, o.Key, nil)
		}
		page.Objects = append(page.Objects, lo)
	}
	return page, nil
}

func (d *clockDriver) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	r, err := d.inner.NewRangeReader(ctx, key, offset, length, &blob.ReaderOptions{BeforeRead: opts.BeforeRead})
	if err != nil {
		return nil, err
	}
	return &reader{Reader: r, attrs: driver.ReaderAttributes{ContentType: r.ContentType(),
		ModTime: d.modTime(ctx, key, nil), Size: r.Size()}}, nil
}

type reader struct {
	*blob.Reader
	attrs driver.ReaderAttributes
}

func (r *reader) Attributes() *driver.ReaderAttributes { return &r.attrs }

func (d *clockDriver) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	w, err := d.inner.NewWriter(ctx, key, &blob.WriterOptions{BufferSize: opts.BufferSize,
		MaxConcurrency: opts.MaxConcurrency, CacheControl: opts.CacheControl,
		ContentDisposition: opts.ContentDisposition, ContentEncoding: opts.ContentEncoding,
		ContentLanguage: opts.ContentLanguage, ContentType: contentType, ContentMD5: opts.ContentMD5,
		Metadata: opts.Metadata, IfNotExist: opts.IfNotExist, DisableContentTypeDetection: true,
		BeforeWrite: opts.BeforeWrite})
	if err != nil {
		return nil, err
	}
	return &writer{Writer: w, done: func() { d.touch(ctx, key) }}, nil
}

// writer records the object's time when its write completes.
type writer struct {
	*blob.Writer
	done func()
}

func (w *writer) Close() error {
	if err := w.Writer.Close(); err != nil {
		return err
	}
	w.done()
	return nil
}

func (d *clockDriver) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	if err := d.inner.Copy(ctx, dstKey, srcKey, &blob.CopyOptions{BeforeCopy: opts.BeforeCopy}); err != nil {
		return err
	}
	d.touch(ctx, dstKey)
	return nil
}

func (d *clockDriver) Delete(ctx context.Context, key string) error {
	err := d.inner.Delete(ctx, key)
	if err == nil || gcerrors.Code(err) == gcerrors.NotFound {
		d.forget(key)
	}
	return err
}
