// Package faultblob wraps a gocloud.dev/blob bucket in one that fails on
// purpose, for tests of code that must survive a store that misbehaves.
//
// On a chosen share of the calls of each operation, the wrapper injects a
// fault instead of (or on top of) the inner bucket's answer: a retryable
// error (gcerrors.ResourceExhausted, what a throttled store answers), a
// permanent one (gcerrors.PermissionDenied), a stall (a sleep of at most the
// maximum stall, cut short by the call's context, after which the call goes
// through), a read that ends with io.ErrUnexpectedEOF after part of the
// object, or a listing that ends with an error after some of its pages
// (gcerrors.Unknown, like a dropped connection).
//
// Every choice is a hash of the seed, the operation and how many times the
// operation was called before: a caller that makes its calls in a fixed
// order gets the same faults from the same seed, whatever its keys (which
// often hold random run IDs). Concurrent calls share the same sequence of
// choices in the order they arrive.
package faultblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// Op is an operation of a bucket that faults can be injected into.
type Op int

// The operations.
const (
	Attributes Op = iota // Attributes and Exists
	List                 // each listing page
	Read                 // opening and reading an object
	// Write is writing an object. Its fault shows where the blob package
	// opens the driver's writer: in NewWriter when the options name a
	// content type, else at the first 512 bytes written or at Close.
	Write
	Copy
	Delete
	numOps
)

var opNames = [numOps]string{"attributes", "list", "read", "write", "copy", "delete"}

// String returns the operation's name.
func (o Op) String() string {
	if o < 0 || o >= numOps {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// Kind is a kind of fault.
type Kind int

// The kinds of fault.
const (
	Retryable Kind = iota // an error with code gcerrors.ResourceExhausted
	Permanent             // an error with code gcerrors.PermissionDenied
	Stall                 // a sleep, then the call goes through
	Truncate              // a read that ends early with io.ErrUnexpectedEOF
	CutList               // a listing that ends with an error after some pages
	numKinds
)

var kindNames = [numKinds]string{"retryable", "permanent", "stall", "truncate", "cut-list"}

// String returns the kind's name.
func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// ErrInjected is wrapped by every error the wrapper makes up.
var ErrInjected = errors.New("faultblob: injected fault")

// Fault is an injected error, with the gcerrors code the bucket reports
// for it.
type Fault struct {
	Op   Op
	Kind Kind
	Key  string
	Code gcerrors.ErrorCode
}

func (f *Fault) Error() string {
	return fmt.Sprintf("faultblob: %s %q: injected %s fault (%v)", f.Op, f.Key, f.Kind, f.Code)
}

// Unwrap returns ErrInjected.
func (f *Fault) Unwrap() error { return ErrInjected }

// Option configures New.
type Option func(*config) error

type config struct {
	seed     uint64
	rates    [numOps]float64
	maxStall time.Duration
	maxPage  int
	spare    [numOps]uint64
}

// WithSeed sets the seed of every choice (default 0).
func WithSeed(seed uint64) Option {
	return func(c *config) error { c.seed = seed; return nil }
}

// WithRate sets the share of op's calls that get a fault, in [0, 1]
// (default 0: none).
func WithRate(op Op, rate float64) Option {
	return func(c *config) error {
		if op < 0 || op >= numOps {
			return fmt.Errorf("faultblob: WithRate: unknown operation %d", int(op))
		}
		if !(rate >= 0 && rate <= 1) {
			return fmt.Errorf("faultblob: WithRate: %s rate %v is outside [0, 1]", op, rate)
		}
		c.rates[op] = rate
		return nil
	}
}

// WithSpare spares the first n calls of op (default 0): faults start after
// them, to reach the later phases of a run whose first calls would
// otherwise fail it.
func WithSpare(op Op, n int) Option {
	return func(c *config) error {
		if op < 0 || op >= numOps {
			return fmt.Errorf("faultblob: WithSpare: unknown operation %d", int(op))
		}
		if n < 0 {
			return fmt.Errorf("faultblob: WithSpare: negative count %d", n)
		}
		c.spare[op] = uint64(n)
		return nil
	}
}

// WithRates sets the share of the calls of every operation that get a fault.
func WithRates(rate float64) Option {
	return func(c *config) error {
		for op := range numOps {
			if err := WithRate(op, rate)(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithMaxStall sets the longest stall (default 10ms). A stall lasts a
// seeded share of it.
func WithMaxStall(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("faultblob: WithMaxStall: negative duration %v", d)
		}
		c.maxStall = d
		return nil
	}
}

// WithMaxPageSize caps the size of listing pages (default 0: the caller's),
// so that listings span pages and a cut listing ends after some of them.
func WithMaxPageSize(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("faultblob: WithMaxPageSize: negative size %d", n)
		}
		c.maxPage = n
		return nil
	}
}

// Bucket injects faults into the calls made through its Bucket method.
type Bucket struct {
	inner *blob.Bucket
	cfg   config
	outer *blob.Bucket

	calls [numOps]atomic.Uint64

	counts [numOps][numKinds]atomic.Int64
}

// New wraps inner, which the caller still owns: closing the wrapper's
// bucket does not close inner.
func New(inner *blob.Bucket, opts ...Option) (*Bucket, error) {
	b := &Bucket{inner: inner}
	b.cfg.maxStall = 10 * time.Millisecond
	for _, o := range opts {
		if err := o(&b.cfg); err != nil {
			return nil, err
		}
	}
	b.outer = blob.NewBucket(&drv{b: b})
	return b, nil
}

// Bucket returns the faulty bucket.
func (b *Bucket) Bucket() *blob.Bucket { return b.outer }

// Count returns how many faults of the kind were injected into op.
func (b *Bucket) Count(op Op, k Kind) int64 { return b.counts[op][k].Load() }

// Total returns how many faults were injected in all.
func (b *Bucket) Total() int64 {
	var n int64
	for op := range numOps {
		for k := range numKinds {
			n += b.counts[op][k].Load()
		}
	}
	return n
}

// Counts returns the nonzero counts by "op/kind".
func (b *Bucket) Counts() map[string]int64 {
	m := map[string]int64{}
	for op := range numOps {
		for k := range numKinds {
			if n := b.counts[op][k].Load(); n > 0 {
				m[op.String()+"/"+k.String()] = n
			}
		}
	}
	return m
}

// kinds lists the faults each operation can get.
var kinds = [numOps][]Kind{
	Attributes: {Retryable, Permanent, Stall},
	List:       {Retryable, Permanent, Stall, CutList},
	Read:       {Retryable, Permanent, Stall, Truncate},
	Write:      {Retryable, Permanent, Stall},
	Copy:       {Retryable, Permanent, Stall},
	Delete:     {Retryable, Permanent, Stall},
}

// draw decides the fault of a call: ok is false for none; x is a further
// seeded number in [0, 1) for the fault's size.
func (b *Bucket) draw(op Op) (k Kind, x float64, ok bool) {
	return b.drawOf(op, kinds[op])
}

// drawOf is draw among the given kinds.
func (b *Bucket) drawOf(op Op, avail []Kind) (k Kind, x float64, ok bool) {
	rate := b.cfg.rates[op]
	if rate == 0 {
		return 0, 0, false
	}
	n := b.calls[op].Add(1)
	if n <= b.cfg.spare[op] {
		return 0, 0, false
	}
	s := splitmix(splitmix(b.cfg.seed^uint64(op)<<56) ^ n)
	u := func() float64 { s = splitmix(s); return float64(s>>11) / (1 << 53) }
	if u() >= rate {
		return 0, 0, false
	}
	k = avail[int(u()*float64(len(avail)))]
	b.counts[op][k].Add(1)
	return k, u(), true
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// inject applies a fault that is not specific to the operation: it returns
// the error to answer, or nil for the call to go through.
func (b *Bucket) inject(ctx context.Context, op Op, key string, k Kind, x float64) error {
	switch k {
	case Retryable:
		return &Fault{Op: op, Kind: k, Key: key, Code: gcerrors.ResourceExhausted}
	case Permanent:
		return &Fault{Op: op, Kind: k, Key: key, Code: gcerrors.PermissionDenied}
	case Stall:
		t := time.NewTimer(time.Duration(x * float64(b.cfg.maxStall)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// drv is the driver of the faulty bucket: it calls the inner bucket's
// public API, faults aside.
type drv struct{ b *Bucket }

var _ driver.Bucket = (*drv)(nil)

func (d *drv) ErrorCode(err error) gcerrors.ErrorCode {
	var f *Fault
	if errors.As(err, &f) {
		return f.Code
	}
	return gcerrors.Code(err)
}

func (d *drv) As(i any) bool                 { return d.b.inner.As(i) }
func (d *drv) ErrorAs(err error, i any) bool { return d.b.inner.ErrorAs(err, i) }
func (d *drv) Close() error                  { return nil }

func (d *drv) SignedURL(ctx context.Context, key string, opts *driver.SignedURLOptions) (string, error) {
	return d.b.inner.SignedURL(ctx, key, &blob.SignedURLOptions{Expiry: opts.Expiry, Method: opts.Method,
		ContentType: opts.ContentType, EnforceAbsentContentType: opts.EnforceAbsentContentType})
}

func (d *drv) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if k, x, ok := d.b.draw(Attributes); ok {
		if err := d.b.inject(ctx, Attributes, key, k, x); err != nil {
			return nil, err
		}
	}
	a, err := d.b.inner.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, ContentType: a.ContentType,
		Metadata: a.Metadata, CreateTime: a.CreateTime, ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag}, nil
}

func (d *drv) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	avail := kinds[List]
	if len(opts.PageToken) == 0 {
		avail = avail[:len(avail)-1] // no CutList on a first page
	}
	k, x, faulty := d.b.drawOf(List, avail)
	if faulty {
		if err := d.b.inject(ctx, List, opts.Prefix, k, x); err != nil {
			return nil, err
		}
	}
	if faulty && k == CutList {
		// The listing so far, then an error like a dropped connection's.
		return nil, &Fault{Op: List, Kind: CutList, Key: opts.Prefix, Code: gcerrors.Unknown}
	}
	size := opts.PageSize
	if p := d.b.cfg.maxPage; p > 0 && (size <= 0 || size > p) {
		size = p
	}
	if size <= 0 {
		size = 1000 // the driver's default; blob's ListPage wants a size
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := d.b.inner.ListPage(ctx, token, size,
		&blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, BeforeList: opts.BeforeList})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime,
			Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

func (d *drv) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	k, x, faulty := d.b.draw(Read)
	if faulty {
		if err := d.b.inject(ctx, Read, key, k, x); err != nil {
			return nil, err
		}
	}
	r, err := d.b.inner.NewRangeReader(ctx, key, offset, length, &blob.ReaderOptions{BeforeRead: opts.BeforeRead})
	if err != nil {
		return nil, err
	}
	fr := &reader{r: r, left: -1, attrs: driver.ReaderAttributes{ContentType: r.ContentType(),
		ModTime: r.ModTime(), Size: r.Size()}}
	if faulty && k == Truncate {
		n := r.Size() - offset
		if length >= 0 && length < n {
			n = length
		}
		fr.left = int64(x * float64(n))
	}
	return fr, nil
}

// reader passes on the inner reader's bytes; with left ≥ 0, only that many,
// then io.ErrUnexpectedEOF.
type reader struct {
	r     *blob.Reader
	left  int64
	attrs driver.ReaderAttributes
}

func (r *reader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if r.left > 0 && int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	if r.left > 0 {
		r.left -= int64(n)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	return n, err
}

func (r *reader) Close() error                         { return r.r.Close() }
func (r *reader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *reader) As(i any) bool                        { return r.r.As(i) }

func (d *drv) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	k, x, faulty := d.b.draw(Write)
	if faulty {
		if err := d.b.inject(ctx, Write, key, k, x); err != nil {
			return nil, err
		}
	}
	// The inner *blob.Writer is the driver's writer: the blob package
	// cancels ctx if the write is abandoned, which ends the inner one too.
	return d.b.inner.NewWriter(ctx, key, &blob.WriterOptions{BufferSize: opts.BufferSize,
		MaxConcurrency: opts.MaxConcurrency, CacheControl: opts.CacheControl,
		ContentDisposition: opts.ContentDisposition, ContentEncoding: opts.ContentEncoding,
		ContentLanguage: opts.ContentLanguage, ContentType: contentType, ContentMD5: opts.ContentMD5,
		Metadata: opts.Metadata, IfNotExist: opts.IfNotExist, DisableContentTypeDetection: true,
		BeforeWrite: opts.BeforeWrite})
}

func (d *drv) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	if k, x, ok := d.b.draw(Copy); ok {
		if err := d.b.inject(ctx, Copy, dstKey, k, x); err != nil {
			return err
		}
	}
	return d.b.inner.Copy(ctx, dstKey, srcKey, &blob.CopyOptions{BeforeCopy: opts.BeforeCopy})
}

func (d *drv) Delete(ctx context.Context, key string) error {
	if k, x, ok := d.b.draw(Delete); ok {
		if err := d.b.inject(ctx, Delete, key, k, x); err != nil {
			return err
		}
	}
	return d.b.inner.Delete(ctx, key)
}
