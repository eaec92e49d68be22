//go:build unix

package crash

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// The operations the killing bucket counts. A kill at an operation happens
// at the point its name says.
const (
	opList   = "list"   // before a listing page is asked for
	opRead   = "read"   // before an object is opened for reading
	opAttrs  = "attrs"  // before Attributes or Exists
	opWrite  = "write"  // after a Write passed its bytes to the open object: a partial object
	opClose  = "close"  // before Close: the object is whole but not committed
	opCommit = "commit" // after Close committed the object, before the caller hears of it
	opDelete = "delete" // before a delete
	opCopy   = "copy"   // before a copy
)

// killRecord is what a child writes just before it kills itself: which
// operation, on which key, and whether the key existed when the write
// began (for a write or close, the parent checks no partial object
// appeared under it).
type killRecord struct {
	N       int    `json:"n"`
	Op      string `json:"op"`
	Key     string `json:"key"`
	Existed bool   `json:"existed"`
	Label   string `json:"label"`
}

// sweepBatch is the size of sweep's batches with its default deleter.
const sweepBatch = 100

// batchStart labels the first delete of a batch after the first.
const batchStart = "delete data, first of a batch"

// killBucket counts the operations on a bucket and, at operation killAt
// (1-based; 0 never), records it in recordFile and kills its own process
// with SIGKILL: no deferred function, no cleanup runs, as when a machine
// or a container dies. With trace set it keeps the label of every
// operation instead (see label).
type killBucket struct {
	inner      *blob.Bucket
	killAt     int
	recordFile string

	mu      sync.Mutex
	n       int
	deletes int      // deletes of data objects
	trace   []string // labels of the operations, when tracing
	tr      bool
}

func newKillBucket(inner *blob.Bucket, killAt int, recordFile string, trace bool) (*killBucket, *blob.Bucket) {
	k := &killBucket{inner: inner, killAt: killAt, recordFile: recordFile, tr: trace}
	return k, blob.NewBucket(&killDriver{k: k})
}

// count counts one operation and kills the process if it is the chosen one.
func (k *killBucket) count(op, key string, existed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n++
	l := label(op, key)
	if op == opDelete && kind(key) == "data" {
		if k.deletes++; k.deletes > 1 && (k.deletes-1)%sweepBatch == 0 {
			l = batchStart // all the batches before are done, at one batch at a time
		}
	}
	if k.tr {
		k.trace = append(k.trace, l)
	}
	if k.n != k.killAt {
		return
	}
	b, _ := json.Marshal(killRecord{N: k.n, Op: op, Key: key, Existed: existed, Label: l})
	if err := os.WriteFile(k.recordFile, b, 0o644); err != nil {
		panic(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way; nothing else may run
}

func (k *killBucket) ops() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// label names an operation by what it touches: op and the kind of file.
func label(op, key string) string {
	return op + " " + kind(key)
}

// kind classifies a key (or a listing's prefix) by the file of the GC it is.
func kind(key string) string {
	switch {
	case strings.Contains(key, "/retention/gc/uncommitted/"):
		switch {
		case strings.HasSuffix(key, "/_lakegc_export.json"):
			return "export-state"
		case strings.HasSuffix(key, "/_lakegc_manifest.json"):
			return "export-manifest"
		case strings.HasSuffix(key, "/uncommitted/"):
			return "export-folder"
		}
		return "export-file"
	case strings.Contains(key, "/retention/gc/unified/"):
		switch {
		case strings.HasSuffix(key, "/summary.json"):
			return "mark-summary"
		case strings.HasSuffix(key, "/sweep.json"):
			return "sweep-json"
		case strings.Contains(key, "/deleted/"):
			return "mark-deleted"
		case strings.Contains(key, "/failed/"):
			return "sweep-failed"
		case strings.Contains(key, "/unrecognized/"):
			return "mark-unrecognized"
		case strings.HasSuffix(key, "/_lakegc/live"):
			return "mark-live"
		}
		return "report-other"
	case strings.Contains(key, "/retention/gc/commits/"):
		return "commits-report"
	case strings.Contains(key, "/retention/gc/rules/"):
		return "rules"
	case strings.HasPrefix(key, "data/"):
		return "data"
	case key == "":
		return "namespace"
	case !strings.Contains(key, "/"):
		return "flat" // an object of the old flat layout
	}
	return "other"
}

// killDriver passes every call to the inner bucket's public API, counting.
type killDriver struct{ k *killBucket }

var _ driver.Bucket = (*killDriver)(nil)

func (d *killDriver) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (d *killDriver) As(i any) bool                          { return d.k.inner.As(i) }
func (d *killDriver) ErrorAs(err error, i any) bool          { return d.k.inner.ErrorAs(err, i) }
func (d *killDriver) Close() error                           { return nil }
func (d *killDriver) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("crash: no signed URLs")
}

func (d *killDriver) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	d.k.count(opAttrs, key, false)
	a, err := d.k.inner.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ContentType: a.ContentType, Metadata: a.Metadata, CreateTime: a.CreateTime,
		ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag}, nil
}

func (d *killDriver) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	d.k.count(opList, opts.Prefix, false)
	size := opts.PageSize
	if size <= 0 {
		size = 1000
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := d.k.inner.ListPage(ctx, token, size, &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

func (d *killDriver) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	d.k.count(opRead, key, false)
	r, err := d.k.inner.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return &killReader{r: r, attrs: driver.ReaderAttributes{ContentType: r.ContentType(), ModTime: r.ModTime(), Size: r.Size()}}, nil
}

type killReader struct {
	r     *blob.Reader
	attrs driver.ReaderAttributes
}

func (r *killReader) Read(p []byte) (int, error)           { return r.r.Read(p) }
func (r *killReader) Close() error                         { return r.r.Close() }
func (r *killReader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *killReader) As(i any) bool                        { return r.r.As(i) }

func (d *killDriver) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	existed, err := d.k.inner.Exists(ctx, key) // not counted: the harness's own look
	if err != nil {
		return nil, err
	}
	w, err := d.k.inner.NewWriter(ctx, key, &blob.WriterOptions{BufferSize: opts.BufferSize,
		ContentType: contentType, ContentMD5: opts.ContentMD5, Metadata: opts.Metadata,
		IfNotExist: opts.IfNotExist, DisableContentTypeDetection: true})
	if err != nil {
		return nil, err
	}
	return &killWriter{k: d.k, w: w, key: key, existed: existed}, nil
}

type killWriter struct {
	k       *killBucket
	w       *blob.Writer
	key     string
	existed bool
}

func (w *killWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.k.count(opWrite, w.key, w.existed)
	return n, err
}

func (w *killWriter) Close() error {
	w.k.count(opClose, w.key, w.existed)
	err := w.w.Close()
	if err == nil {
		w.k.count(opCommit, w.key, w.existed)
	}
	return err
}

func (d *killDriver) Copy(ctx context.Context, dstKey, srcKey string, _ *driver.CopyOptions) error {
	d.k.count(opCopy, dstKey, false)
	return d.k.inner.Copy(ctx, dstKey, srcKey, nil)
}

func (d *killDriver) Delete(ctx context.Context, key string) error {
	d.k.count(opDelete, key, false)
	return d.k.inner.Delete(ctx, key)
}
