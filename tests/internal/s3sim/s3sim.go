package s3sim

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// Defaults of the options, S3's published figures.
const (
	DefaultLatency     = 50 * time.Millisecond
	DefaultReadRate    = 5500 // GET and HEAD (and LIST) requests a second per prefix
	DefaultWriteRate   = 3500 // PUT, COPY and DELETE requests a second per prefix
	DefaultPrefixDepth = 2    // "data/<slice>/" is one partition
	// MaxKeys is the most keys a listing page or a batched delete holds.
	MaxKeys = 1000
)

// Errors of the store. Each carries its gocloud code (an ErrorCode method),
// which package sweep reads from a BatchDeleter's errors, and which the
// driver gives the blob package.
var (
	ErrNotFound      = &codeError{gcerrors.NotFound, "s3sim: not found"}
	ErrSlowDown      = &codeError{gcerrors.ResourceExhausted, "s3sim: SlowDown: reduce your request rate"}
	ErrExists        = &codeError{gcerrors.FailedPrecondition, "s3sim: object exists"}
	ErrInvalid       = &codeError{gcerrors.InvalidArgument, "s3sim: invalid argument"}
	ErrUnimplemented = &codeError{gcerrors.Unimplemented, "s3sim: not implemented"}
)

type codeError struct {
	code gcerrors.ErrorCode
	msg  string
}

func (e *codeError) Error() string                 { return e.msg }
func (e *codeError) ErrorCode() gcerrors.ErrorCode { return e.code }

// Slice describes Count synthesised objects whose keys are Prefix+Name(i)
// for i from 0 to Count-1. Name must be strictly ascending in i (byte
// order), so that a listing generates the keys in order and seeks to a page
// token by binary search.
type Slice struct {
	Prefix string
	Count  int
	// Name names object i (nil: XIDNames(Prefix, ModTime)).
	Name func(i int) string
	// ModTime is every object's modification time.
	ModTime time.Time
	// Size is every object's size; reading one yields Size zero bytes.
	Size int64
}

// XIDNames returns names that look like lakeFS's object names (20
// characters of xid encoding) and ascend with i: the bytes of an xid whose
// time is t, whose machine bytes are a hash of prefix and whose last five
// bytes are i.
func XIDNames(prefix string, t time.Time) func(i int) string {
	base := xidBase(prefix, t)
	return func(i int) string { return xidOf(base, i).String() }
}

// xidLen is the length of an xid's text.
const xidLen = 20

// xidBase is the xid of XIDNames(prefix, t)'s names without their index.
func xidBase(prefix string, t time.Time) xid.ID {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	sum := h.Sum32()
	var base xid.ID
	binary.BigEndian.PutUint32(base[0:4], uint32(t.Unix()))
	base[4], base[5], base[6] = byte(sum>>16), byte(sum>>8), byte(sum)
	return base
}

// xidOf is the xid of name i of base.
func xidOf(base xid.ID, i int) xid.ID {
	v := uint64(i)
	for j := 11; j >= 7; j-- {
		base[j] = byte(v)
		v >>= 8
	}
	return base
}

// Stats counts the requests a Store answered, by kind. A throttled request
// counts in its kind and in Throttled.
type Stats struct {
	ListPages     int64
	Heads         int64
	Gets          int64
	Puts          int64 // writes and copies
	Deletes       int64 // single deletes
	DeleteBatches int64
	BatchKeys     int64 // keys in the delete batches
	Throttled     int64
}

// Requests is the number of requests of every kind.
func (s Stats) Requests() int64 {
	return s.ListPages + s.Heads + s.Gets + s.Puts + s.Deletes + s.DeleteBatches
}

// Sub returns the requests counted in s and not in t (an earlier snapshot).
func (s Stats) Sub(t Stats) Stats {
	return Stats{s.ListPages - t.ListPages, s.Heads - t.Heads, s.Gets - t.Gets, s.Puts - t.Puts,
		s.Deletes - t.Deletes, s.DeleteBatches - t.DeleteBatches, s.BatchKeys - t.BatchKeys, s.Throttled - t.Throttled}
}

// An Option configures a Store.
type Option func(*config)

type config struct {
	latency     time.Duration
	readRate    float64
	writeRate   float64
	prefixDepth int
	now         func() time.Time
	observe     func(Request)
	invCache    int64
	diskDir     string
	err         error
}

// Request is one request to a Store, as WithObserver sees it.
type Request struct {
	// Kind is "list", "head", "get", "put", "delete" or "delete-batch".
	Kind string
	// Key is the request's key, the listing's prefix, or a delete batch's
	// first key.
	Key string
	// Keys is the number of keys of a delete batch, else 1.
	Keys int
	// Throttled is set when the store answered ErrSlowDown.
	Throttled bool
}

var kindNames = [...]string{kList: "list", kHead: "head", kGet: "get", kPut: "put", kDelete: "delete", kBatch: "delete-batch"}

// WithObserver calls f with every request after the store answered its
// throttle, before its latency. f is called from concurrent requests and
// must be safe for that.
func WithObserver(f func(Request)) Option {
	return func(c *config) { c.observe = f }
}

func (c *config) invalid(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
}

// WithLatency sets how long each request takes (0: DefaultLatency; use
// NoLatency for none). A request's sleep ends early when its context ends.
func WithLatency(d time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0 && d != NoLatency:
			c.invalid("negative latency %v", d)
		case d == NoLatency:
			c.latency = 0
		case d > 0:
			c.latency = d
		}
	}
}

// NoLatency, given to WithLatency, makes requests answer at once.
const NoLatency time.Duration = -1

// WithRates sets the requests a second per prefix past which the store
// answers ErrSlowDown: reads (heads, gets, list pages) and writes (puts,
// copies, deletes, and each key of a delete batch). 0 means the default;
// math.Inf(1) means no limit.
func WithRates(reads, writes float64) Option {
	return func(c *config) {
		for _, r := range []*float64{&reads, &writes} {
			if *r < 0 || math.IsNaN(*r) {
				c.invalid("request rate %v", *r)
				return
			}
		}
		if reads > 0 {
			c.readRate = reads
		}
		if writes > 0 {
			c.writeRate = writes
		}
	}
}

// WithPrefixDepth sets how many leading path segments of a key (or of a
// listing's prefix) name its partition, the unit of the request rates (0:
// DefaultPrefixDepth).
func WithPrefixDepth(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.invalid("negative prefix depth %d", n)
			return
		}
		if n > 0 {
			c.prefixDepth = n
		}
	}
}

// WithDiskOverlay keeps the objects written to the store in files of dir,
// an existing directory, instead of in memory, so that a benchmark whose
// cycle writes files in proportion to the namespace (an export, a mark's
// records) holds none of them in memory: a write streams into a new file
// (with its MD5), a read opens it. The store never removes these files,
// not even those of deleted or replaced objects (a clone may share them):
// remove dir when done with the store and its clones. OverlayBytes counts
// only the objects held in memory.
func WithDiskOverlay(dir string) Option {
	return func(c *config) {
		if dir == "" {
			c.invalid("empty overlay directory")
			return
		}
		c.diskDir = dir
	}
}

// WithClock sets the clock of the throttle and of the written objects'
// modification times (nil: time.Now). Latency sleeps are real.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// Store is a simulated S3 bucket: its synthesised objects, the objects
// written to it, its deletions and its request counters. It is safe for
// concurrent use.
type Store struct {
	cfg    config
	slices []*slice
	thr    *throttle
	cache  *genCache // inventory data files generated

	mu      sync.RWMutex
	overlay map[string]*object
	okeys   []string // the overlay's keys, sorted
	oBytes  int64
	gone    int64 // synthesised objects deleted or overwritten

	numSlices int // given to New and Add, empty ones included

	stats [numKinds]atomic.Int64
}

type slice struct {
	Slice
	index       int      // its position in New's argument
	first, last string   // its first and last keys
	md5         []byte   // of Size zero bytes
	gone        []uint64 // bit i: object i deleted (or shadowed by the overlay)
	// appendName appends Name(i) to a buffer, when the names are XIDNames'
	// (Name nil): they need no escaping and no string.
	appendName func(b []byte, i int) []byte
}

type object struct {
	// data is a written object's bytes, in the chunks its writer filled
	// (never joined: a real store's client does not copy an upload whole
	// once more at its end, and a simulation that did would charge the
	// GC's writes a copy of each large object); nil: not written here.
	data  [][]byte
	gen   *invFile // an inventory report's data file, generated when read
	file  string   // else the file holding its bytes (WithDiskOverlay)
	attrs driver.Attributes
}

// New returns a store holding the objects of slices, which must come in
// ascending order of keys, none overlapping the next. A slice of no objects
// is left out.
func New(slices []Slice, opts ...Option) (*Store, error) {
	cfg := config{latency: DefaultLatency, readRate: DefaultReadRate, writeRate: DefaultWriteRate,
		prefixDepth: DefaultPrefixDepth, now: time.Now, invCache: DefaultInventoryCache}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	s := &Store{cfg: cfg, overlay: map[string]*object{}, cache: newGenCache(cfg.invCache)}
	s.thr = newThrottle(cfg.now, cfg.readRate, cfg.writeRate)
	for i, d := range slices {
		sl, err := newSlice(d, i)
		if err != nil {
			return nil, fmt.Errorf("%w: slice %d: %v", ErrInvalid, i, err)
		}
		if sl == nil {
			continue
		}
		if n := len(s.slices); n > 0 && sl.first <= s.slices[n-1].last {
			return nil, fmt.Errorf("%w: slice %d (%q) does not start after slice %d ends (%q)", ErrInvalid, i, sl.first, i-1, s.slices[n-1].last)
		}
		s.slices = append(s.slices, sl)
	}
	s.numSlices = len(slices)
	return s, nil
}

// newSlice makes the slice of d, at position index (for Gone); nil for a
// slice of no objects.
func newSlice(d Slice, index int) (*slice, error) {
	if d.Count < 0 {
		return nil, fmt.Errorf("%d objects", d.Count)
	}
	if d.Count == 0 {
		return nil, nil
	}
	var appendName func([]byte, int) []byte
	if d.Name == nil {
		d.Name = XIDNames(d.Prefix, d.ModTime)
		base := xidBase(d.Prefix, d.ModTime)
		appendName = func(b []byte, i int) []byte {
			n := len(b)
			b = slices.Grow(b, xidLen)[:n+xidLen]
			xidOf(base, i).Encode(b[n:])
			return b
		}
	}
	sl := &slice{Slice: d, index: index, first: d.Prefix + d.Name(0), last: d.Prefix + d.Name(d.Count-1), md5: zeroMD5(d.Size), appendName: appendName}
	if err := sl.check(); err != nil {
		return nil, err
	}
	return sl, nil
}

// check samples the slice's names for order: a Name that is not ascending
// would make listings skip or repeat keys.
func (sl *slice) check() error {
	if sl.first == "" {
		return errors.New("empty key")
	}
	step := max(1, sl.Count/64)
	prev := sl.first
	for i := step; ; i += step {
		i = min(i, sl.Count-1)
		if i == 0 {
			return nil
		}
		k := sl.key(i)
		if k <= prev {
			return fmt.Errorf("names not ascending: %q then %q", prev, k)
		}
		if i == sl.Count-1 {
			return nil
		}
		prev = k
	}
}

func (sl *slice) key(i int) string { return sl.Prefix + sl.Name(i) }

func (sl *slice) isGone(i int) bool {
	return sl.gone != nil && sl.gone[i>>6]&(1<<(i&63)) != 0
}

// setGone marks object i gone; false if it already was.
func (sl *slice) setGone(i int) bool {
	if sl.gone == nil {
		sl.gone = make([]uint64, (sl.Count+63)/64)
	}
	w, b := i>>6, uint64(1)<<(i&63)
	if sl.gone[w]&b != 0 {
		return false
	}
	sl.gone[w] |= b
	return true
}

// nextLive returns the first object at or after i not gone, or Count.
func (sl *slice) nextLive(i int) int {
	if sl.gone == nil || i >= sl.Count {
		return min(i, sl.Count)
	}
	w := i >> 6
	word := ^sl.gone[w] &^ (1<<(i&63) - 1)
	for word == 0 {
		if w++; w >= len(sl.gone) {
			return sl.Count
		}
		word = ^sl.gone[w]
	}
	return min(w<<6+bits.TrailingZeros64(word), sl.Count)
}

// search returns the first object whose key is >= k (> k when after).
func (sl *slice) search(k string, after bool) int {
	return sort.Search(sl.Count, func(i int) bool {
		c := strings.Compare(sl.key(i), k)
		return c > 0 || c == 0 && !after
	})
}

// find returns the slice and object holding key, if synthesised.
func (s *Store) find(key string) (*slice, int, bool) {
	j := sort.Search(len(s.slices), func(j int) bool { return s.slices[j].first > key }) - 1
	if j < 0 {
		return nil, 0, false
	}
	sl := s.slices[j]
	if key > sl.last || !strings.HasPrefix(key, sl.Prefix) {
		return nil, 0, false
	}
	i := sl.search(key, false)
	if i < sl.Count && sl.key(i) == key {
		return sl, i, true
	}
	return nil, 0, false
}

// Bucket opens the store as a gocloud bucket.
func (s *Store) Bucket() *blob.Bucket { return blob.NewBucket(&bucket{s}) }

// Stats returns the request counters.
func (s *Store) Stats() Stats {
	var st Stats
	for k, p := range []*int64{&st.ListPages, &st.Heads, &st.Gets, &st.Puts, &st.Deletes, &st.DeleteBatches, &st.BatchKeys, &st.Throttled} {
		*p = s.stats[k].Load()
	}
	return st
}

// Exists reports, without a request, whether key holds an object.
func (s *Store) Exists(key string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.overlay[key]; ok {
		return true
	}
	sl, i, ok := s.find(key)
	return ok && !sl.isGone(i)
}

// Gone calls f with the index of every synthesised object of slice j (in
// the order given to New, empty slices included) that was deleted or
// overwritten, in ascending order.
func (s *Store) Gone(j int, f func(i int)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sl := s.sliceAt(j)
	if sl == nil || sl.gone == nil {
		return
	}
	for w, word := range sl.gone {
		for word != 0 {
			f(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}

// NumGone is how many synthesised objects were deleted or overwritten.
func (s *Store) NumGone() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gone
}

// OverlayBytes is the size of the objects written to the store, which it
// holds in memory.
func (s *Store) OverlayBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.oBytes
}

func (s *Store) sliceAt(j int) *slice {
	// Empty slices were left out; those Add added may come before those
	// New made.
	for _, sl := range s.slices {
		if sl.index == j {
			return sl
		}
	}
	return nil
}

// Add adds synthesised slices to the store, without a request, as if
// writers had filled them since New: the next listing shows them. Their
// positions, for Gone, follow New's and the earlier Adds' in the order
// given (empty slices counted). A slice must not share a key with the
// store's slices, the other slices given, or the objects written to it.
func (s *Store) Add(add ...Slice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.numSlices
	all := append([]*slice(nil), s.slices...)
	for n, d := range add {
		sl, err := newSlice(d, next+n)
		if err != nil {
			return fmt.Errorf("%w: added slice %d: %v", ErrInvalid, n, err)
		}
		if sl == nil {
			continue
		}
		j := sort.Search(len(all), func(j int) bool { return all[j].first > sl.first })
		if j > 0 && all[j-1].last >= sl.first || j < len(all) && all[j].first <= sl.last {
			return fmt.Errorf("%w: added slice %d (%q to %q) overlaps another", ErrInvalid, n, sl.first, sl.last)
		}
		o := sort.SearchStrings(s.okeys, sl.first)
		for ; o < len(s.okeys) && s.okeys[o] <= sl.last; o++ {
			if i := sl.search(s.okeys[o], false); i < sl.Count && sl.key(i) == s.okeys[o] {
				return fmt.Errorf("%w: added slice %d holds %q, an object written to the store", ErrInvalid, n, s.okeys[o])
			}
		}
		all = slices.Insert(all, j, sl)
	}
	s.slices, s.numSlices = all, next+len(add)
	return nil
}

// Clone returns a copy of the store as it stands: its slices, deletions and
// written objects, its options, a throttle of its own and counters at zero.
// The two change apart from then on.
func (s *Store) Clone() *Store {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := &Store{cfg: s.cfg, thr: newThrottle(s.cfg.now, s.cfg.readRate, s.cfg.writeRate), cache: newGenCache(s.cfg.invCache),
		overlay: make(map[string]*object, len(s.overlay)), okeys: slices.Clone(s.okeys),
		oBytes: s.oBytes, gone: s.gone, numSlices: s.numSlices}
	for k, o := range s.overlay {
		c.overlay[k] = o // written objects are replaced, never changed
	}
	for _, sl := range s.slices {
		cp := *sl
		cp.gone = slices.Clone(sl.gone)
		c.slices = append(c.slices, &cp)
	}
	return c
}

// Request kinds, the indexes of Store.stats.
const (
	kList = iota
	kHead
	kGet
	kPut
	kDelete
	kBatch
	kBatchKeys
	kThrottled
	numKinds
)

// request accounts for one request to the partitions of keys: it counts
// it, answers ErrSlowDown past the rate, and sleeps the latency.
func (s *Store) request(ctx context.Context, kind int, keys ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.stats[kind].Add(1)
	if kind == kBatch {
		s.stats[kBatchKeys].Add(int64(len(keys)))
	}
	write := kind == kPut || kind == kDelete || kind == kBatch
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = partition(k, s.cfg.prefixDepth)
	}
	throttled := !s.thr.take(write, parts)
	if s.cfg.observe != nil {
		s.cfg.observe(Request{Kind: kindNames[kind], Key: keys[0], Keys: len(keys), Throttled: throttled})
	}
	if err := sleep(ctx, s.cfg.latency); err != nil {
		return err
	}
	if throttled {
		s.stats[kThrottled].Add(1)
		return fmt.Errorf("%w (%s)", ErrSlowDown, parts[0])
	}
	return nil
}

// partition returns the first depth segments of key, each with its '/'.
func partition(key string, depth int) string {
	end := 0
	for range depth {
		i := strings.IndexByte(key[end:], '/')
		if i < 0 {
			return key[:end]
		}
		end += i + 1
	}
	return key[:end]
}

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

// DeleteBatch deletes up to MaxKeys keys in one request, as S3's
// DeleteObjects: it implements sweep.BatchDeleter. A key that holds no
// object fails with ErrNotFound (S3 reports it deleted; the sweep counts it
// as already gone). A batch over the write rate of any partition it touches
// fails as a whole with ErrSlowDown.
func (s *Store) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: %d keys in one batch, more than %d", ErrInvalid, len(keys), MaxKeys)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if err := s.request(ctx, kBatch, keys...); err != nil {
		return nil, err
	}
	var failed map[string]error
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if err := s.remove(k); err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			failed[k] = err
		}
	}
	return failed, nil
}

// remove deletes key; s.mu must be held.
func (s *Store) remove(key string) error {
	if o, ok := s.overlay[key]; ok {
		delete(s.overlay, key)
		i, _ := slices.BinarySearch(s.okeys, key)
		s.okeys = slices.Delete(s.okeys, i, i+1)
		s.oBytes -= o.held()
		return nil
	}
	if sl, i, ok := s.find(key); ok && sl.setGone(i) {
		s.gone++
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNotFound, key)
}

// put stores an object in the overlay; s.mu must be held. A synthesised
// object under the same key is gone from then on, even if the written one
// is deleted later.
func (s *Store) put(key string, o *object) {
	if prev, ok := s.overlay[key]; ok {
		s.oBytes -= prev.held()
		o.attrs.CreateTime = prev.attrs.CreateTime
	} else {
		i, _ := slices.BinarySearch(s.okeys, key)
		s.okeys = slices.Insert(s.okeys, i, key)
		if sl, j, ok := s.find(key); ok && sl.setGone(j) {
			s.gone++
			o.attrs.CreateTime = sl.ModTime
		}
	}
	s.overlay[key] = o
	s.oBytes += o.held()
}

// lookup returns key's attributes, and its data if written; s.mu must be
// held.
func (s *Store) lookup(key string) (*object, bool) {
	if o, ok := s.overlay[key]; ok {
		return o, true
	}
	sl, i, ok := s.find(key)
	if !ok || sl.isGone(i) {
		return nil, false
	}
	return &object{attrs: driver.Attributes{
		ContentType: "application/octet-stream",
		Size:        sl.Size, ModTime: sl.ModTime, CreateTime: sl.ModTime,
		MD5: sl.md5, Metadata: map[string]string{},
	}}, true
}

func zeroMD5(n int64) []byte {
	h := md5.New()
	io.CopyN(h, zeros{}, n)
	return h.Sum(nil)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bucket is the driver of a Store.
type bucket struct{ s *Store }

var _ driver.Bucket = (*bucket)(nil)

func (b *bucket) ErrorCode(err error) gcerrors.ErrorCode {
	var c *codeError
	switch {
	case errors.As(err, &c):
		return c.code
	case errors.Is(err, context.Canceled):
		return gcerrors.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return gcerrors.DeadlineExceeded
	}
	return gcerrors.Unknown
}

func (b *bucket) As(any) bool             { return false }
func (b *bucket) ErrorAs(error, any) bool { return false }
func (b *bucket) Close() error            { return nil }

func (b *bucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", ErrUnimplemented
}

func (b *bucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if err := b.s.request(ctx, kHead, key); err != nil {
		return nil, err
	}
	b.s.mu.RLock()
	defer b.s.mu.RUnlock()
	o, ok := b.s.lookup(key)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	a := o.attrs
	a.Metadata = maps.Clone(a.Metadata)
	return &a, nil
}

func (b *bucket) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	if err := b.s.request(ctx, kGet, key); err != nil {
		return nil, err
	}
	b.s.mu.RLock()
	o, ok := b.s.lookup(key)
	b.s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	if opts != nil && opts.BeforeRead != nil {
		if err := opts.BeforeRead(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	size := o.attrs.Size
	offset = min(offset, size)
	n := size - offset
	if length >= 0 {
		n = min(n, length)
	}
	var r io.Reader = io.LimitReader(zeros{}, n)
	switch {
	case o.gen != nil:
		var err error
		if r, err = o.gen.open(b.s.cache, offset, n); err != nil {
			return nil, err
		}
	case o.file != "":
		f, err := os.Open(o.file)
		if err != nil {
			return nil, fmt.Errorf("s3sim: %q: %w", key, err)
		}
		return &reader{r: io.NewSectionReader(f, offset, n), f: f, attrs: driver.ReaderAttributes{ContentType: o.attrs.ContentType, ModTime: o.attrs.ModTime, Size: size}}, nil
	case o.data != nil:
		r = chunksReader(o.data, offset, n)
	}
	return &reader{r: r, attrs: driver.ReaderAttributes{ContentType: o.attrs.ContentType, ModTime: o.attrs.ModTime, Size: size}}, nil
}

// held is how many bytes o holds in memory.
func (o *object) held() int64 {
	var n int64
	for _, c := range o.data {
		n += int64(len(c))
	}
	return n
}

// chunksReader reads n bytes from offset of the bytes chunks hold one
// after the other.
func chunksReader(chunks [][]byte, offset, n int64) io.Reader {
	var rs []io.Reader
	for _, c := range chunks {
		if n <= 0 {
			break
		}
		if offset >= int64(len(c)) {
			offset -= int64(len(c))
			continue
		}
		part := c[offset:min(int64(len(c)), offset+n)]
		rs = append(rs, bytes.NewReader(part))
		n -= int64(len(part))
		offset = 0
	}
	return io.MultiReader(rs...)
}

type reader struct {
	r     io.Reader
	f     *os.File // the object's file, if on disk
	attrs driver.ReaderAttributes
}

func (r *reader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r *reader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}
func (r *reader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *reader) As(any) bool                          { return false }

func (b *bucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if opts.BeforeWrite != nil {
		if err := opts.BeforeWrite(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	w := &writer{ctx: ctx, s: b.s, key: key, contentType: contentType, opts: opts}
	if dir := b.s.cfg.diskDir; dir != "" {
		f, err := os.CreateTemp(dir, "object-")
		if err != nil {
			return nil, fmt.Errorf("s3sim: %q: %w", key, err)
		}
		w.file, w.hash = f, md5.New()
	}
	return w, nil
}

type writer struct {
	ctx         context.Context
	s           *Store
	key         string
	contentType string
	opts        *driver.WriterOptions
	// chunks hold what is written (size bytes), in blocks of up to
	// writeChunk bytes: a buffer that doubles as it grows would copy a
	// large object about twice over and clear as much again, a cost of
	// the simulation that the writer of a real store (which uploads
	// parts) does not pay.
	chunks [][]byte
	// file and hash, with WithDiskOverlay, instead of chunks.
	file *os.File
	hash hash.Hash
	size int64
	// closed: Close was called. blob.Writer calls its driver's Close
	// again when its own is; a second Close must leave the object the
	// first wrote alone (it would remove its file, or put an empty one).
	closed bool
}

// writeChunk is the block of a writer's chunks.
const writeChunk = 1 << 20

func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("%w: %q: write after Close", ErrInvalid, w.key)
	}
	if w.file == nil {
		n := len(p)
		for len(p) > 0 {
			if len(w.chunks) == 0 || len(w.chunks[len(w.chunks)-1]) == cap(w.chunks[len(w.chunks)-1]) {
				// Each chunk as large as what came before it, from 4 KiB
				// to writeChunk: a small object takes little.
				w.chunks = append(w.chunks, make([]byte, 0, min(max(w.size, 4<<10), writeChunk)))
			}
			last := &w.chunks[len(w.chunks)-1]
			c := min(len(p), cap(*last)-len(*last))
			*last = append(*last, p[:c]...)
			p = p[c:]
			w.size += int64(c)
		}
		return n, nil
	}
	n, err := w.file.Write(p)
	w.hash.Write(p[:n])
	w.size += int64(n)
	return n, err
}

// Close is the PUT: nothing is visible before it, and nothing after a
// cancelled context.
func (w *writer) Close() error {
	var (
		data [][]byte
		sum  [md5.Size]byte
		size int64
		file string
	)
	if w.closed {
		return fmt.Errorf("%w: %q: writer closed twice", ErrInvalid, w.key)
	}
	w.closed = true
	if w.file != nil {
		file = w.file.Name()
		err := w.file.Close()
		if err == nil {
			err = w.s.request(w.ctx, kPut, w.key)
		}
		if err != nil {
			os.Remove(file)
			return err
		}
		w.hash.Sum(sum[:0])
		size = w.size
	} else {
		if err := w.s.request(w.ctx, kPut, w.key); err != nil {
			return err
		}
		h := md5.New()
		data = make([][]byte, 0, len(w.chunks))
		for i, c := range w.chunks {
			if i == len(w.chunks)-1 && cap(c)-len(c) > len(c)/8 {
				// More than an eighth of the last chunk is unused:
				// held as it is, a store of many small objects would
				// hold 4 KiB each (a copy of at most writeChunk bytes).
				c = bytes.Clone(c)
			}
			h.Write(c)
			data = append(data, c)
		}
		// Let the chunks go, even if the caller keeps the writer.
		w.chunks = nil
		h.Sum(sum[:0])
		size = w.size
	}
	now := w.s.cfg.now()
	o := &object{data: data, file: file, attrs: driver.Attributes{
		CacheControl:       w.opts.CacheControl,
		ContentDisposition: w.opts.ContentDisposition,
		ContentEncoding:    w.opts.ContentEncoding,
		ContentLanguage:    w.opts.ContentLanguage,
		ContentType:        w.contentType,
		Metadata:           maps.Clone(w.opts.Metadata),
		Size:               size,
		CreateTime:         now,
		ModTime:            now,
		MD5:                sum[:],
		ETag:               fmt.Sprintf("\"%x\"", sum),
	}}
	if o.attrs.Metadata == nil {
		o.attrs.Metadata = map[string]string{}
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if _, exists := w.s.lookup(w.key); exists && w.opts.IfNotExist {
		return fmt.Errorf("%w: %q", ErrExists, w.key)
	}
	w.s.put(w.key, o)
	return nil
}

func (b *bucket) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	if err := b.s.request(ctx, kPut, dstKey); err != nil {
		return err
	}
	if opts != nil && opts.BeforeCopy != nil {
		if err := opts.BeforeCopy(func(any) bool { return false }); err != nil {
			return err
		}
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	src, ok := b.s.lookup(srcKey)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, srcKey)
	}
	c := *src
	switch {
	case c.file != "": // shared: files are never changed
	case c.gen != nil:
		var buf bytes.Buffer
		if _, err := c.gen.generate(&buf); err != nil {
			return err
		}
		c.data, c.gen = [][]byte{buf.Bytes()}, nil
	case c.data == nil:
		c.data = [][]byte{make([]byte, c.attrs.Size)}
	}
	c.attrs.Metadata = maps.Clone(c.attrs.Metadata)
	c.attrs.ModTime = b.s.cfg.now()
	c.attrs.CreateTime = c.attrs.ModTime
	b.s.put(dstKey, &c)
	return nil
}

func (b *bucket) Delete(ctx context.Context, key string) error {
	if err := b.s.request(ctx, kDelete, key); err != nil {
		return err
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.remove(key)
}
