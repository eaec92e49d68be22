// Package faultblob wraps a gocloud.dev/blob bucket in one that misbehaves
// on purpose, for tests of code that must survive a store that does: the one
// fault-injecting driver the repository's tests share, as pebble's errorfs
// is for its file systems.
//
// A wrapper passes every call to the inner bucket's public API and, on the
// way, applies two sorts of faults.
//
// Seeded faults (WithRate, WithRates, WithSpare, WithMaxStall, and
// WithFaultKeys for the keys they may strike) strike a chosen share of each
// operation's calls: a retryable error
// (gcerrors.ResourceExhausted, what a throttled store answers), a permanent
// one (gcerrors.PermissionDenied), a stall (a sleep of at most the maximum
// stall, cut short by the call's context, after which the call goes
// through), a read that ends with io.ErrUnexpectedEOF after part of the
// object, or a listing that ends with an error after some of its pages
// (gcerrors.Unknown, like a dropped connection). Every choice is a hash of
// the seed, the operation and how many times the operation was called
// before: a caller that makes its calls in a fixed order gets the same
// faults from the same seed, whatever its keys (which often hold random run
// IDs). Concurrent calls share the same sequence of choices in the order
// they arrive.
//
// Rules strike the calls they choose by key: an error (WithError, or any
// behaviour through WithHook, which sees each call and may run code after
// it), a latency (WithLatency), a short read (WithShortRead), a write that
// commits and then reports an error, as an upload whose answer was lost
// (WithHook on Commit), and the anomalies of listings that real stores
// show: pages in any order (WithShuffledListings), keys listed more than
// once (WithDuplicates), a delimiter ignored (WithIgnoredDelimiter), entries
// changed (WithListEdit), small pages (WithMaxPageSize), and modification
// times of the test's choosing (WithModTime, for tests that move time).
// WithErrorCode classifies errors as a particular driver would.
//
// The wrapper counts the calls of each operation (Calls) and the seeded
// faults it injected (Count, Counts, Total). It is safe for concurrent use;
// the functions given to its options may be called concurrently, and guard
// their own state.
package faultblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// Op is an operation of a bucket that faults can be injected into.
type Op int

// The operations. The first six take seeded faults and rules; the phases
// of a write after it opened (WriteData, Close, Commit) take hooks only.
const (
	Attributes Op = iota // Attributes and Exists
	List                 // each listing page
	Read                 // opening and reading an object
	// Write is opening an object for writing. Its fault shows where the
	// blob package opens the driver's writer: in NewWriter when the
	// options name a content type, else at the first 512 bytes written
	// or at Close.
	Write
	Copy   // Copy; the Call's Key is the destination
	Delete // Delete
	// WriteData is each Write of an open writer, after the bytes went to
	// the inner writer: the object is partly written.
	WriteData
	// Close is the Close of a writer, before the inner writer's: the
	// object is whole but not committed. A hook's error aborts the write.
	Close
	// Commit follows a Close that committed the object, before the caller
	// hears of it. A hook's error is what the caller hears: the object is
	// stored, and the caller cannot know (an upload whose answer was lost).
	Commit
	numOps
)

// numSeeded is the number of operations that take seeded faults.
const numSeeded = Delete + 1

var opNames = [numOps]string{"attributes", "list", "read", "write", "copy", "delete",
	"write-data", "close", "commit"}

// String returns the operation's name.
func (o Op) String() string {
	if o < 0 || o >= numOps {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// Kind is a kind of seeded fault.
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

// ErrInjected is wrapped by every error the wrapper makes up itself.
var ErrInjected = errors.New("faultblob: injected fault")

// ErrInvalidInput is wrapped by the error of an invalid option.
var ErrInvalidInput = errors.New("faultblob: invalid input")

// Fault is a seeded fault's error, with the gcerrors code the bucket
// reports for it.
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

// Call is one call of an operation, as a hook sees it.
type Call struct {
	Op Op
	// Key is the object's key; for List the listing's prefix, for Copy
	// the destination.
	Key string
	// SrcKey is the source of a Copy.
	SrcKey string
	// Delimiter, PageToken (empty on a first page) and PageSize (after
	// WithMaxPageSize) are a List's.
	Delimiter string
	PageToken []byte
	PageSize  int
	// N counts the calls of Op, this one included.
	N int64
	// After, if a hook sets it, runs when the call to the inner bucket
	// has returned (for Read, when the reader is open).
	After func()
}

// A Hook sees a call before it reaches the inner bucket (after the seeded
// faults and the latency). An error it returns answers the call instead.
type Hook func(ctx context.Context, c *Call) error

// Option configures New.
type Option func(*config) error

type config struct {
	seed     uint64
	rates    [numSeeded]float64
	maxStall time.Duration
	maxPage  int
	spare    [numSeeded]uint64
	scope    func(Op, string) bool

	hooks     [numOps][]Hook
	latency   [numOps][]func(string) time.Duration
	shortRead []func(string) int64
	modTime   func(string, time.Time) time.Time
	dups      func(string) []time.Time
	shuffle   bool
	noDelim   func(string) bool
	edit      func(string, *driver.ListObject)
	codes     []func(error) (gcerrors.ErrorCode, bool)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
}

func checkOp(name string, op Op, seeded bool) error {
	if op < 0 || op >= numOps || seeded && op >= numSeeded {
		return invalid("%s: operation %v takes no such fault", name, op)
	}
	return nil
}

// WithSeed sets the seed of every choice (default 0).
func WithSeed(seed uint64) Option {
	return func(c *config) error { c.seed = seed; return nil }
}

// WithRate sets the share of op's calls that get a seeded fault, in [0, 1]
// (default 0: none).
func WithRate(op Op, rate float64) Option {
	return func(c *config) error {
		if err := checkOp("WithRate", op, true); err != nil {
			return err
		}
		if !(rate >= 0 && rate <= 1) {
			return invalid("WithRate: %s rate %v is outside [0, 1]", op, rate)
		}
		c.rates[op] = rate
		return nil
	}
}

// WithRates sets the share of the calls of every operation that get a
// seeded fault.
func WithRates(rate float64) Option {
	return func(c *config) error {
		for op := range numSeeded {
			if err := WithRate(op, rate)(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithSpare spares the first n calls of op from seeded faults (default 0):
// faults start after them, to reach the later phases of a run whose first
// calls would otherwise fail it.
func WithSpare(op Op, n int) Option {
	return func(c *config) error {
		if err := checkOp("WithSpare", op, true); err != nil {
			return err
		}
		if n < 0 {
			return invalid("WithSpare: negative count %d", n)
		}
		c.spare[op] = uint64(n)
		return nil
	}
}

// WithFaultKeys confines the seeded faults to the calls for which f
// returns true, given the operation and the call's key (for List, the
// prefix): the others go through, though they still count as calls, so
// that the choices of the calls in scope do not depend on the others'.
func WithFaultKeys(f func(op Op, key string) bool) Option {
	return func(c *config) error {
		if f == nil {
			return invalid("WithFaultKeys: nil function")
		}
		c.scope = f
		return nil
	}
}

// WithMaxStall sets the longest seeded stall (default 10ms). A stall lasts
// a seeded share of it.
func WithMaxStall(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return invalid("WithMaxStall: negative duration %v", d)
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
			return invalid("WithMaxPageSize: negative size %d", n)
		}
		c.maxPage = n
		return nil
	}
}

// WithHook calls h for each call of op, after the hooks given before it.
func WithHook(op Op, h Hook) Option {
	return func(c *config) error {
		if err := checkOp("WithHook", op, false); err != nil {
			return err
		}
		if h == nil {
			return invalid("WithHook: nil hook")
		}
		c.hooks[op] = append(c.hooks[op], h)
		return nil
	}
}

// WithError answers each call of op whose key f gives an error with that
// error (nil: the call goes through). For List the key is the listing's
// prefix; for WriteData, Close and Commit, the written key.
func WithError(op Op, f func(key string) error) Option {
	if f == nil {
		return func(*config) error { return invalid("WithError: nil function") }
	}
	return WithHook(op, func(_ context.Context, c *Call) error { return f(c.Key) })
}

// WithLatency delays each call of op by what f gives for its key, or until
// the call's context ends.
func WithLatency(op Op, f func(key string) time.Duration) Option {
	return func(c *config) error {
		if err := checkOp("WithLatency", op, false); err != nil {
			return err
		}
		if f == nil {
			return invalid("WithLatency: nil function")
		}
		c.latency[op] = append(c.latency[op], f)
		return nil
	}
}

// WithShortRead ends each read of a key for which f gives n ≥ 0 with
// io.ErrUnexpectedEOF after n bytes of the range (fewer if the range is
// shorter: then after all of them, where the read should have ended).
func WithShortRead(f func(key string) int64) Option {
	return func(c *config) error {
		if f == nil {
			return invalid("WithShortRead: nil function")
		}
		c.shortRead = append(c.shortRead, f)
		return nil
	}
}

// WithModTime makes f the modification time of every object, in listings,
// attributes and readers: f is given the key and the stored time.
func WithModTime(f func(key string, stored time.Time) time.Time) Option {
	return func(c *config) error { c.modTime = f; return nil }
}

// WithDuplicates lists further copies of each key, with the modification
// times f gives, as a store that lists versions or replays a page would:
// after the listing's last key, or anywhere in a shuffled listing. Such
// listings, and shuffled ones, are read whole at their first page and
// served from memory.
func WithDuplicates(f func(key string) []time.Time) Option {
	return func(c *config) error { c.dups = f; return nil }
}

// WithShuffledListings returns every listing in a seeded order, across its
// pages, instead of the keys' order.
func WithShuffledListings() Option {
	return func(c *config) error { c.shuffle = true; return nil }
}

// WithIgnoredDelimiter lists the prefixes f chooses as if no delimiter had
// been given, as a backend that ignores it would.
func WithIgnoredDelimiter(f func(prefix string) bool) Option {
	return func(c *config) error { c.noDelim = f; return nil }
}

// WithListEdit lets f change each entry of a listing of prefix before it is
// returned.
func WithListEdit(f func(prefix string, o *driver.ListObject)) Option {
	return func(c *config) error { c.edit = f; return nil }
}

// WithErrorCode classifies the errors of the wrapper's calls as a
// particular driver would (as gcsblob calls GCS's 403 NotFound): the first
// f that says ok gives the code. Otherwise a seeded fault has its own code,
// an error with an ErrorCode() gcerrors.ErrorCode method gives that, and
// any other the code the inner bucket gave it (gcerrors.Unknown if none).
func WithErrorCode(f func(err error) (code gcerrors.ErrorCode, ok bool)) Option {
	return func(c *config) error {
		if f == nil {
			return invalid("WithErrorCode: nil function")
		}
		c.codes = append(c.codes, f)
		return nil
	}
}

// Bucket injects faults into the calls made through its Bucket method.
type Bucket struct {
	inner *blob.Bucket
	cfg   config
	outer *blob.Bucket

	calls  [numOps]atomic.Int64
	counts [numSeeded][numKinds]atomic.Int64

	mu       sync.Mutex
	listings map[string][]*driver.ListObject // buffered listings by ID
	nextList int
	rng      *rand.Rand // the shuffles'
}

// New wraps inner, which the caller still owns: closing the wrapper's
// bucket does not close inner. An invalid option is an error wrapping
// ErrInvalidInput.
func New(inner *blob.Bucket, opts ...Option) (*Bucket, error) {
	if inner == nil {
		return nil, invalid("New: nil bucket")
	}
	b := &Bucket{inner: inner, listings: map[string][]*driver.ListObject{}}
	b.cfg.maxStall = 10 * time.Millisecond
	for _, o := range opts {
		if err := o(&b.cfg); err != nil {
			return nil, err
		}
	}
	b.rng = rand.New(rand.NewPCG(b.cfg.seed, 0x5eed))
	b.outer = blob.NewBucket(&drv{b: b})
	return b, nil
}

// Bucket returns the faulty bucket.
func (b *Bucket) Bucket() *blob.Bucket { return b.outer }

// Calls returns how many calls of op the wrapper saw.
func (b *Bucket) Calls(op Op) int64 {
	if op < 0 || op >= numOps {
		return 0
	}
	return b.calls[op].Load()
}

// Count returns how many seeded faults of the kind were injected into op.
func (b *Bucket) Count(op Op, k Kind) int64 {
	if op < 0 || op >= numSeeded || k < 0 || k >= numKinds {
		return 0
	}
	return b.counts[op][k].Load()
}

// Total returns how many seeded faults were injected in all.
func (b *Bucket) Total() int64 {
	var n int64
	for op := range numSeeded {
		for k := range numKinds {
			n += b.counts[op][k].Load()
		}
	}
	return n
}

// Counts returns the nonzero counts of seeded faults by "op/kind".
func (b *Bucket) Counts() map[string]int64 {
	m := map[string]int64{}
	for op := range numSeeded {
		for k := range numKinds {
			if n := b.counts[op][k].Load(); n > 0 {
				m[op.String()+"/"+k.String()] = n
			}
		}
	}
	return m
}

// kinds lists the seeded faults each operation can get.
var kinds = [numSeeded][]Kind{
	Attributes: {Retryable, Permanent, Stall},
	List:       {Retryable, Permanent, Stall, CutList},
	Read:       {Retryable, Permanent, Stall, Truncate},
	Write:      {Retryable, Permanent, Stall},
	Copy:       {Retryable, Permanent, Stall},
	Delete:     {Retryable, Permanent, Stall},
}

// drawOf decides the seeded fault of call n of op on key among the given
// kinds: ok is false for none; x is a further seeded number in [0, 1) for
// the fault's size.
func (b *Bucket) drawOf(op Op, key string, n int64, avail []Kind) (k Kind, x float64, ok bool) {
	if op >= numSeeded || b.cfg.scope != nil && !b.cfg.scope(op, key) {
		return 0, 0, false
	}
	rate := b.cfg.rates[op]
	if rate == 0 || uint64(n) <= b.cfg.spare[op] {
		return 0, 0, false
	}
	s := splitmix(splitmix(b.cfg.seed^uint64(op)<<56) ^ uint64(n))
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

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// outcome is what before decided for a call.
type outcome struct {
	kind   Kind
	x      float64
	seeded bool // kind and x hold a seeded fault that let the call through
	after  func()
}

// before applies to call c what comes before the inner bucket: the seeded
// fault (among avail), the latency and the hooks. A non-nil error answers
// the call.
func (b *Bucket) before(ctx context.Context, c *Call, avail []Kind) (outcome, error) {
	c.N = b.calls[c.Op].Add(1)
	var out outcome
	if c.Op < numSeeded {
		if avail == nil {
			avail = kinds[c.Op]
		}
		if k, x, ok := b.drawOf(c.Op, c.Key, c.N, avail); ok {
			switch k {
			case Retryable:
				return out, &Fault{Op: c.Op, Kind: k, Key: c.Key, Code: gcerrors.ResourceExhausted}
			case Permanent:
				return out, &Fault{Op: c.Op, Kind: k, Key: c.Key, Code: gcerrors.PermissionDenied}
			case Stall:
				if err := sleep(ctx, time.Duration(x*float64(b.cfg.maxStall))); err != nil {
					return out, err
				}
			case CutList:
				// The listing so far, then an error like a dropped connection's.
				return out, &Fault{Op: c.Op, Kind: k, Key: c.Key, Code: gcerrors.Unknown}
			}
			out.kind, out.x, out.seeded = k, x, true
		}
	}
	for _, f := range b.cfg.latency[c.Op] {
		if err := sleep(ctx, f(c.Key)); err != nil {
			return out, err
		}
	}
	for _, h := range b.cfg.hooks[c.Op] {
		err := h(ctx, c)
		if c.After != nil {
			after := c.After
			c.After = nil
			prev := out.after
			out.after = func() {
				after()
				if prev != nil {
					prev()
				}
			}
		}
		if err != nil {
			if out.after != nil {
				out.after()
			}
			return outcome{}, err
		}
	}
	return out, nil
}

func (o outcome) done() {
	if o.after != nil {
		o.after()
	}
}

func (b *Bucket) mod(key string, t time.Time) time.Time {
	if b.cfg.modTime != nil {
		return b.cfg.modTime(key, t)
	}
	return t
}

// drv is the driver of the faulty bucket: it calls the inner bucket's
// public API, faults aside.
type drv struct{ b *Bucket }

var _ driver.Bucket = (*drv)(nil)

var errorType = reflect.TypeFor[error]()

func (d *drv) ErrorCode(err error) gcerrors.ErrorCode {
	for _, f := range d.b.cfg.codes {
		if code, ok := f(err); ok {
			return code
		}
	}
	var f *Fault
	if errors.As(err, &f) {
		return f.Code
	}
	var coded interface{ ErrorCode() gcerrors.ErrorCode }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	return gcerrors.Code(err)
}

func (d *drv) As(i any) bool { return d.b.inner.As(i) }

// ErrorAs finds i in an error a hook gave, else in the inner bucket's.
func (d *drv) ErrorAs(err error, i any) bool {
	if t := reflect.TypeOf(i); t != nil && t.Kind() == reflect.Pointer && !reflect.ValueOf(i).IsNil() &&
		(t.Elem().Kind() == reflect.Interface || t.Elem().Implements(errorType)) && errors.As(err, i) {
		return true
	}
	return d.b.inner.ErrorAs(err, i)
}

func (d *drv) Close() error { return nil }

func (d *drv) SignedURL(ctx context.Context, key string, opts *driver.SignedURLOptions) (string, error) {
	return d.b.inner.SignedURL(ctx, key, &blob.SignedURLOptions{Expiry: opts.Expiry, Method: opts.Method,
		ContentType: opts.ContentType, EnforceAbsentContentType: opts.EnforceAbsentContentType})
}

func (d *drv) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	o, err := d.b.before(ctx, &Call{Op: Attributes, Key: key}, nil)
	if err != nil {
		return nil, err
	}
	defer o.done()
	a, err := d.b.inner.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, ContentType: a.ContentType,
		Metadata: a.Metadata, CreateTime: a.CreateTime, ModTime: d.b.mod(key, a.ModTime), Size: a.Size,
		MD5: a.MD5, ETag: a.ETag}, nil
}

// bufferedToken marks the page tokens of listings served from memory.
const bufferedToken = "faultblob:"

func (d *drv) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	b := d.b
	size := opts.PageSize
	if p := b.cfg.maxPage; p > 0 && (size <= 0 || size > p) {
		size = p
	}
	if size <= 0 {
		size = 1000 // the driver's default; blob's ListPage wants a size
	}
	avail := kinds[List]
	if len(opts.PageToken) == 0 {
		avail = avail[:len(avail)-1] // no CutList on a first page
	}
	c := &Call{Op: List, Key: opts.Prefix, Delimiter: opts.Delimiter, PageToken: opts.PageToken, PageSize: size}
	o, err := b.before(ctx, c, avail)
	if err != nil {
		return nil, err
	}
	defer o.done()
	lopts := &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, BeforeList: opts.BeforeList}
	if b.cfg.noDelim != nil && b.cfg.noDelim(opts.Prefix) {
		lopts.Delimiter = ""
	}
	if b.cfg.shuffle || b.cfg.dups != nil {
		return d.listBuffered(ctx, opts, lopts, size)
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := b.inner.ListPage(ctx, token, size, lopts)
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, d.entry(opts.Prefix, o))
	}
	return page, nil
}

// entry converts an inner listing's entry, with WithModTime's time and
// WithListEdit's changes.
func (d *drv) entry(prefix string, o *blob.ListObject) *driver.ListObject {
	mod := o.ModTime
	if !o.IsDir {
		mod = d.b.mod(o.Key, o.ModTime)
	}
	out := &driver.ListObject{Key: o.Key, ModTime: mod, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir}
	if d.b.cfg.edit != nil {
		d.b.cfg.edit(prefix, out)
	}
	return out
}

// listBuffered reads a whole listing at its first page, adds the
// duplicates, shuffles, and serves it in pages from memory.
func (d *drv) listBuffered(ctx context.Context, opts *driver.ListOptions, lopts *blob.ListOptions, size int) (*driver.ListPage, error) {
	b := d.b
	var id string
	offset := 0
	if len(opts.PageToken) == 0 {
		var all, again []*driver.ListObject
		it := b.inner.List(lopts)
		for {
			o, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			all = append(all, d.entry(opts.Prefix, o))
			if b.cfg.dups != nil && !o.IsDir {
				for _, mod := range b.cfg.dups(o.Key) {
					again = append(again, &driver.ListObject{Key: o.Key, ModTime: mod, Size: o.Size, MD5: o.MD5})
				}
			}
		}
		all = append(all, again...)
		b.mu.Lock()
		if b.cfg.shuffle {
			b.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		}
		id = strconv.Itoa(b.nextList)
		b.nextList++
		b.listings[id] = all
		b.mu.Unlock()
	} else {
		tok, ok := strings.CutPrefix(string(opts.PageToken), bufferedToken)
		var off string
		if ok {
			id, off, ok = strings.Cut(tok, ":")
		}
		n, err := strconv.Atoi(off)
		if !ok || err != nil || n < 0 {
			return nil, &Fault{Op: List, Kind: Permanent, Key: opts.Prefix, Code: gcerrors.InvalidArgument}
		}
		offset = n
	}
	b.mu.Lock()
	all, ok := b.listings[id]
	b.mu.Unlock()
	if !ok || offset > len(all) {
		return nil, &Fault{Op: List, Kind: Permanent, Key: opts.Prefix, Code: gcerrors.InvalidArgument}
	}
	end := min(offset+size, len(all))
	page := &driver.ListPage{Objects: all[offset:end]}
	if end < len(all) {
		page.NextPageToken = fmt.Appendf(nil, "%s%s:%d", bufferedToken, id, end)
	}
	return page, nil
}

func (d *drv) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	b := d.b
	o, err := b.before(ctx, &Call{Op: Read, Key: key}, nil)
	if err != nil {
		return nil, err
	}
	defer o.done()
	r, err := b.inner.NewRangeReader(ctx, key, offset, length, &blob.ReaderOptions{BeforeRead: opts.BeforeRead})
	if err != nil {
		return nil, err
	}
	fr := &reader{r: r, left: -1, attrs: driver.ReaderAttributes{ContentType: r.ContentType(),
		ModTime: b.mod(key, r.ModTime()), Size: r.Size()}}
	n := max(r.Size()-offset, 0)
	if length >= 0 && length < n {
		n = length
	}
	if o.seeded && o.kind == Truncate {
		fr.left = int64(o.x * float64(n))
	}
	for _, f := range b.cfg.shortRead {
		if m := f(key); m >= 0 && (fr.left < 0 || m < fr.left) {
			fr.left = min(m, n)
		}
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
	b := d.b
	o, err := b.before(ctx, &Call{Op: Write, Key: key}, nil)
	if err != nil {
		return nil, err
	}
	defer o.done()
	// The inner *blob.Writer is the driver's writer: the blob package
	// cancels ctx if the write is abandoned, which ends the inner one too;
	// cancel ends it when a Close hook aborts the write.
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.inner.NewWriter(wctx, key, &blob.WriterOptions{BufferSize: opts.BufferSize,
		MaxConcurrency: opts.MaxConcurrency, CacheControl: opts.CacheControl,
		ContentDisposition: opts.ContentDisposition, ContentEncoding: opts.ContentEncoding,
		ContentLanguage: opts.ContentLanguage, ContentType: contentType, ContentMD5: opts.ContentMD5,
		Metadata: opts.Metadata, IfNotExist: opts.IfNotExist, DisableContentTypeDetection: true,
		BeforeWrite: opts.BeforeWrite})
	if err != nil {
		cancel()
		return nil, err
	}
	return &writer{b: b, ctx: ctx, w: w, key: key, cancel: cancel}, nil
}

// writer passes on to the inner writer, with the hooks of the write's
// phases.
type writer struct {
	b      *Bucket
	ctx    context.Context
	w      *blob.Writer
	key    string
	cancel context.CancelFunc
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, err
	}
	o, err := w.b.before(w.ctx, &Call{Op: WriteData, Key: w.key}, nil)
	o.done()
	return n, err
}

func (w *writer) Close() error {
	defer w.cancel()
	o, err := w.b.before(w.ctx, &Call{Op: Close, Key: w.key}, nil)
	if err != nil {
		w.cancel() // abort: the inner Close does not commit
		w.w.Close()
		return err
	}
	err = w.w.Close()
	o.done()
	if err != nil {
		return err // aborted, or failed for real: nothing committed
	}
	o, err = w.b.before(w.ctx, &Call{Op: Commit, Key: w.key}, nil)
	o.done()
	return err
}

func (d *drv) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	o, err := d.b.before(ctx, &Call{Op: Copy, Key: dstKey, SrcKey: srcKey}, nil)
	if err != nil {
		return err
	}
	defer o.done()
	return d.b.inner.Copy(ctx, dstKey, srcKey, &blob.CopyOptions{BeforeCopy: opts.BeforeCopy})
}

func (d *drv) Delete(ctx context.Context, key string) error {
	o, err := d.b.before(ctx, &Call{Op: Delete, Key: key}, nil)
	if err != nil {
		return err
	}
	defer o.done()
	return d.b.inner.Delete(ctx, key)
}
