package gcrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// simBucket is an in-memory gocloud.dev/blob driver whose modification
// times come from the simulated clock, so that the ages the GC computes
// (cutoff, link TTL, slices) are ages in simulated time. memblob stamps the
// wall clock, which a simulation that moves days ahead in milliseconds cannot
// use.
//
// Two hooks let the race test interleave writers with the GC inside storage
// calls: onList runs before every listing page, beforeDelete before every
// delete (it may veto the delete by returning an error). Neither runs with
// the bucket's lock held.
type simBucket struct {
	now func() time.Time

	mu   sync.Mutex
	objs map[string]*simObject

	hookMu       sync.Mutex
	onList       func(prefix string)
	beforeDelete func(key string) error
}

type simObject struct {
	data        []byte
	modTime     time.Time
	contentType string
	metadata    map[string]string
}

var (
	errSimNotFound = errors.New("simbucket: object not found")
	errSimExists   = errors.New("simbucket: object exists")
	errSimUnimpl   = errors.New("simbucket: not implemented")
)

func newSimBucket(now func() time.Time) (*simBucket, *blob.Bucket) {
	d := &simBucket{now: now, objs: make(map[string]*simObject)}
	return d, blob.NewBucket(d)
}

func (d *simBucket) setHooks(onList func(string), beforeDelete func(string) error) {
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	d.onList, d.beforeDelete = onList, beforeDelete
}

func (d *simBucket) hooks() (func(string), func(string) error) {
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	return d.onList, d.beforeDelete
}

// put stores a small object with the given modification time (for
// objects that predate the simulation).
func (d *simBucket) put(key string, mod time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.objs[key] = &simObject{data: []byte(key), modTime: mod}
}

// exists reports whether key is stored, for the test's checks.
func (d *simBucket) exists(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.objs[key]
	return ok
}

// keys returns every stored key with the prefix, sorted.
func (d *simBucket) keys(prefix string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for k := range d.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (d *simBucket) ErrorCode(err error) gcerrors.ErrorCode {
	switch {
	case errors.Is(err, errSimNotFound):
		return gcerrors.NotFound
	case errors.Is(err, errSimExists):
		return gcerrors.FailedPrecondition
	case errors.Is(err, errSimUnimpl):
		return gcerrors.Unimplemented
	case errors.Is(err, context.Canceled):
		return gcerrors.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return gcerrors.DeadlineExceeded
	}
	return gcerrors.Unknown
}

func (d *simBucket) As(any) bool             { return false }
func (d *simBucket) ErrorAs(error, any) bool { return false }
func (d *simBucket) Close() error            { return nil }

func (d *simBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errSimUnimpl
}

func (d *simBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errSimNotFound, key)
	}
	md := make(map[string]string, len(o.metadata))
	for k, v := range o.metadata {
		md[k] = v
	}
	return &driver.Attributes{
		ContentType: o.contentType,
		Metadata:    md,
		CreateTime:  o.modTime,
		ModTime:     o.modTime,
		Size:        int64(len(o.data)),
	}, nil
}

func (d *simBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if onList, _ := d.hooks(); onList != nil {
		onList(opts.Prefix)
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = 1000
	}
	after := string(opts.PageToken)

	d.mu.Lock()
	type item struct {
		key string
		obj *simObject // nil for a directory
	}
	seen := make(map[string]bool)
	var items []item
	for k, o := range d.objs {
		if !strings.HasPrefix(k, opts.Prefix) {
			continue
		}
		if opts.Delimiter != "" {
			rest := k[len(opts.Prefix):]
			if i := strings.Index(rest, opts.Delimiter); i >= 0 {
				dir := opts.Prefix + rest[:i+len(opts.Delimiter)]
				if !seen[dir] {
					seen[dir] = true
					items = append(items, item{key: dir})
				}
				continue
			}
		}
		items = append(items, item{key: k, obj: o})
	}
	d.mu.Unlock()

	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	start := sort.Search(len(items), func(i int) bool { return items[i].key > after })
	if after == "" {
		start = 0
	}
	page := &driver.ListPage{}
	for _, it := range items[start:] {
		if len(page.Objects) == pageSize {
			page.NextPageToken = []byte(page.Objects[len(page.Objects)-1].Key)
			break
		}
		lo := &driver.ListObject{Key: it.key, IsDir: it.obj == nil}
		if it.obj != nil {
			lo.ModTime = it.obj.modTime
			lo.Size = int64(len(it.obj.data))
		}
		page.Objects = append(page.Objects, lo)
	}
	return page, nil
}

func (d *simBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	o, ok := d.objs[key]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", errSimNotFound, key)
	}
	data := o.data
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	data = data[offset:]
	if length >= 0 && length < int64(len(data)) {
		data = data[:length]
	}
	return &simReader{
		r: bytes.NewReader(data),
		attrs: driver.ReaderAttributes{
			ContentType: o.contentType,
			ModTime:     o.modTime,
			Size:        int64(len(o.data)),
		},
	}, nil
}

type simReader struct {
	r     *bytes.Reader
	attrs driver.ReaderAttributes
}

func (r *simReader) Read(p []byte) (int, error)           { return r.r.Read(p) }
func (r *simReader) Close() error                         { return nil }
func (r *simReader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *simReader) As(any) bool                          { return false }

func (d *simBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &simWriter{ctx: ctx, d: d, key: key, contentType: contentType}
	if opts != nil {
		w.ifNotExist = opts.IfNotExist
		if len(opts.Metadata) > 0 {
			w.metadata = make(map[string]string, len(opts.Metadata))
			for k, v := range opts.Metadata {
				w.metadata[k] = v
			}
		}
	}
	return w, nil
}

type simWriter struct {
	ctx         context.Context
	d           *simBucket
	key         string
	contentType string
	metadata    map[string]string
	ifNotExist  bool
	buf         bytes.Buffer
}

func (w *simWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

// Close stores the object, stamped with the simulated clock, unless the
// writer's context was cancelled (then nothing becomes visible).
func (w *simWriter) Close() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	if _, ok := w.d.objs[w.key]; ok && w.ifNotExist {
		return fmt.Errorf("%w: %q", errSimExists, w.key)
	}
	w.d.objs[w.key] = &simObject{
		data:        bytes.Clone(w.buf.Bytes()),
		modTime:     w.d.now(),
		contentType: w.contentType,
		metadata:    w.metadata,
	}
	return nil
}

func (d *simBucket) Copy(ctx context.Context, dstKey, srcKey string, _ *driver.CopyOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[srcKey]
	if !ok {
		return fmt.Errorf("%w: %q", errSimNotFound, srcKey)
	}
	c := *o
	c.modTime = d.now()
	d.objs[dstKey] = &c
	return nil
}

func (d *simBucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, before := d.hooks(); before != nil {
		if err := before(key); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.objs[key]; !ok {
		return fmt.Errorf("%w: %q", errSimNotFound, key)
	}
	delete(d.objs, key)
	return nil
}

var _ io.Closer = (*simReader)(nil)
