package inventory

import (
	"cmp"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
)

// Errors of the package. Every error of OpenS3 and of a Report's Objects
// wraps ErrInvalidInput, the more specific ones through one of the others
// (errors.Is works for both), or is the bucket's or the context's error,
// wrapped.
var (
	// ErrInvalidInput: a bad argument or option, or a report that breaks
	// its format.
	ErrInvalidInput = errors.New("inventory: invalid input")
	// ErrChecksum: a file's MD5 or size is not what the manifest says, or
	// the manifest's own checksum does not match it.
	ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrInvalidInput)
	// ErrMissingFile: a file the manifest names is not in the bucket.
	ErrMissingFile = fmt.Errorf("%w: missing file", ErrInvalidInput)
	// ErrNotCovered: the report is of another bucket, or its prefix
	// filter does not hold the namespace.
	ErrNotCovered = fmt.Errorf("%w: report does not cover the namespace", ErrInvalidInput)
	// ErrTooOld: the report is older than WithMaxAge allows, or dated in
	// the future.
	ErrTooOld = fmt.Errorf("%w: report too old", ErrInvalidInput)
	// ErrEmpty: the report holds no object under the namespace, and
	// WithAllowEmpty was not given.
	ErrEmpty = fmt.Errorf("%w: no object under the namespace", ErrInvalidInput)
	// ErrUnsupported: a format this package does not read (ORC).
	ErrUnsupported = fmt.Errorf("%w: unsupported format", ErrInvalidInput)
)

// Object is an object of a report: its key relative to the namespace, its
// size and its last modification time. It is sweep's InventoryObject, so
// that a Report is a sweep.Inventory.
type Object = sweep.InventoryObject

// DefaultMaxAge is how old a report may be by default: a weekly report,
// and a day for its delivery.
const DefaultMaxAge = 8 * 24 * time.Hour

// maxFuture is how far in the future a report's time may be, for the
// clocks of the store and of this machine.
const maxFuture = 5 * time.Minute

// An Option configures OpenS3 (and the other openers).
type Option func(*config)

type config struct {
	maxAge     time.Duration
	clock      func() time.Time
	allowEmpty bool
	tempDir    string
	err        error
}

func newConfig(opts []Option) config {
	c := config{maxAge: DefaultMaxAge, clock: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithMaxAge refuses, with ErrTooOld, a report whose time is more than d
// before now (0: DefaultMaxAge). An older report is safe, but it covers
// fewer slices, and names more objects that have gone since.
func WithMaxAge(d time.Duration) Option {
	return func(c *config) {
		if d < 0 && c.err == nil {
			c.err = fmt.Errorf("%w: negative max age %v", ErrInvalidInput, d)
		}
		c.maxAge = cmp.Or(d, DefaultMaxAge)
	}
}

// WithClock sets the clock that WithMaxAge measures against (nil:
// time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.clock = now
	}
}

// WithAllowEmpty lets a report hold no object under the namespace. Without
// it, Objects ends with ErrEmpty instead: an empty report is more likely
// the wrong report than an empty namespace.
func WithAllowEmpty() Option {
	return func(c *config) { c.allowEmpty = true }
}

// WithTempDir sets where a Parquet file of the report is copied while it is
// read ("": os.TempDir()): one file at a time, removed once read.
func WithTempDir(dir string) Option {
	return func(c *config) { c.tempDir = dir }
}

// Report is an inventory report opened by OpenS3: its manifest was read and
// checked; its files are read by Objects. A Report is a sweep.Inventory.
// Its methods are safe for concurrent use, and Objects may be ranged over
// more than once, each time reading the files again.
type Report struct {
	bucket *blob.Bucket // where the files are
	source string       // the manifest's address
	time   time.Time
	files  []reportFile
	// read yields the objects of one file, and adds its rows (all of
	// them, those skipped included) to rows; false when it yielded an
	// error or the consumer stopped.
	read func(ctx context.Context, r *Report, f reportFile, rows *int64, yield func(Object, error) bool) bool
	// wantRows is the number of rows the manifest says the files hold
	// (Azure's objectCount), -1 when it says none.
	wantRows int64
	// The namespace: its bucket, as the rows name it, and its path with a
	// trailing '/' ("" for the bucket's root).
	srcBucket string
	prefix    string
	csv       csvLayout
	cfg       config
}

// reportFile is one file of a report, as its manifest describes it.
type reportFile struct {
	key    string
	size   int64 // -1: not given (GCS's)
	md5    [md5.Size]byte
	hasMD5 bool // Azure's manifest gives sizes only
}

// Time returns the time the report's listing reflects, taken on the safe
// side: the earliest time at which the store may have begun it (see the
// package documentation).
func (r *Report) Time() time.Time { return r.time }

// Source returns the report's manifest address.
func (r *Report) Source() string { return r.source }

// Files returns the number of files the manifest names.
func (r *Report) Files() int { return len(r.files) }

// Objects yields the report's objects under the namespace, keys relative to
// it, in the report's order, reading its files one after the other. Each
// file's size and MD5 (S3's; Azure's manifest gives sizes only) are checked
// against the manifest as it is read, and the files' rows against the
// manifest's count of objects where it gives one (Azure's): a mismatch, a missing file, a row that breaks the format or an error of the
// bucket ends the sequence with an error, possibly after rows of that file
// were yielded; only a sequence that ends without an error is the report.
// Rows of other buckets fail it; rows outside the namespace's path are
// skipped, as are noncurrent versions and delete markers. A report with no
// object under the namespace ends with ErrEmpty unless WithAllowEmpty.
func (r *Report) Objects(ctx context.Context) iter.Seq2[Object, error] {
	return func(yield func(Object, error) bool) {
		n, rows := int64(0), int64(0)
		count := func(o Object, err error) bool {
			if err == nil {
				n++
			}
			return yield(o, err)
		}
		for _, f := range r.files {
			if err := ctx.Err(); err != nil {
				yield(Object{}, err)
				return
			}
			if !r.read(ctx, r, f, &rows, count) {
				return
			}
		}
		if r.wantRows >= 0 && rows != r.wantRows {
			yield(Object{}, fmt.Errorf("%w: %s: the files hold %d objects, the manifest says %d", ErrChecksum, r.source, rows, r.wantRows))
			return
		}
		if n == 0 && !r.cfg.allowEmpty {
			yield(Object{}, fmt.Errorf("%w: %s", ErrEmpty, r.source))
		}
	}
}

// relative returns key relative to the namespace; false when it is outside.
func (r *Report) relative(key string) (string, bool) {
	rel, ok := strings.CutPrefix(key, r.prefix)
	return rel, ok && rel != ""
}

// checkTime refuses a report too old or dated in the future.
func (c *config) checkTime(source string, t time.Time) error {
	now := c.clock()
	switch {
	case t.After(now.Add(maxFuture)):
		return fmt.Errorf("%w: %s is dated %v, in the future", ErrTooOld, source, t)
	case now.Sub(t) > c.maxAge:
		return fmt.Errorf("%w: %s is dated %v, more than %v ago", ErrTooOld, source, t, c.maxAge)
	}
	return nil
}

// openFile opens one of the report's files, checking its size and MD5 as
// it is read to its end; a missing file is ErrMissingFile.
func (r *Report) openFile(ctx context.Context, f reportFile) (*checkedReader, error) {
	rd, err := r.bucket.NewReader(ctx, f.key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("%w: %s", ErrMissingFile, f.key)
		}
		return nil, fmt.Errorf("inventory: read %s: %w", f.key, err)
	}
	return &checkedReader{r: rd, f: f, h: md5.New()}, nil
}

// checkedReader reads a file of the report, hashing what it reads, and
// fails rather than read past the size the manifest gives.
type checkedReader struct {
	r *blob.Reader
	f reportFile
	h hash.Hash
	n int64
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.f.size < 0 { // GCS's manifest gives no size
		k, err := c.r.Read(p)
		if err != nil && err != io.EOF {
			err = fmt.Errorf("inventory: read %s: %w", c.f.key, err)
		}
		return k, err
	}
	if c.n == c.f.size {
		// One byte more would be too many: look for it.
		var one [1]byte
		if k, _ := c.r.Read(one[:]); k > 0 {
			return 0, fmt.Errorf("%w: %s holds more than the manifest's %d bytes", ErrChecksum, c.f.key, c.f.size)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.f.size-c.n {
		p = p[:c.f.size-c.n]
	}
	k, err := c.r.Read(p)
	c.h.Write(p[:k])
	c.n += int64(k)
	if err == io.EOF && c.n < c.f.size {
		return k, fmt.Errorf("%w: %s holds %d bytes, the manifest says %d", ErrChecksum, c.f.key, c.n, c.f.size)
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("inventory: read %s: %w", c.f.key, err)
	}
	return k, err
}

// finish reads what is left of the file and checks its size and MD5.
func (c *checkedReader) finish() error {
	if _, err := io.Copy(io.Discard, c); err != nil {
		return err
	}
	var sum [md5.Size]byte
	c.h.Sum(sum[:0])
	if c.f.hasMD5 && sum != c.f.md5 {
		return fmt.Errorf("%w: %s has MD5 %x, the manifest says %x", ErrChecksum, c.f.key, sum, c.f.md5)
	}
	return nil
}

func (c *checkedReader) Close() error { return c.r.Close() }

// copyToTemp copies a checked file into a temporary file, checked to its
// end, and returns it, positioned anywhere; the caller removes it.
func (r *Report) copyToTemp(ctx context.Context, f reportFile) (*os.File, error) {
	cr, err := r.openFile(ctx, f)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	tmp, err := os.CreateTemp(r.cfg.tempDir, "lakegc-inventory-*")
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	if _, err := io.Copy(tmp, cr); err != nil {
		return fail(err)
	}
	if err := cr.finish(); err != nil {
		return fail(err)
	}
	return tmp, nil
}

// openArgs checks what every Open function is given: its options, a
// bucket, and a namespace of the store kind the report's format is.
func openArgs(bucket *blob.Bucket, ns string, kind namespace.Kind, opts []Option) (config, namespace.Namespace, error) {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return cfg, namespace.Namespace{}, cfg.err
	}
	if bucket == nil {
		return cfg, namespace.Namespace{}, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	n, err := namespace.Parse(ns)
	if err != nil {
		return cfg, n, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if n.Kind != kind {
		return cfg, n, fmt.Errorf("%w: %s is not a namespace of %s", ErrInvalidInput, ns, kind)
	}
	return cfg, n, nil
}
