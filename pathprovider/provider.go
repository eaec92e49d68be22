package pathprovider

import (
	"cmp"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/xid"

	"github.com/lakegc/lakegc/internal/layout"
)

// Defaults of New; they are lakeFS's.
const (
	// DefaultPartitionSize is how many paths a slice holds by default.
	DefaultPartitionSize = 50000
	// DefaultInterval is how long a slice is used by default.
	DefaultInterval = time.Hour
	// DefaultPrefix is the first element of every address by default:
	// "data".
	DefaultPrefix = layout.DataPrefix
)

// maxPartitionSize bounds WithPartitionSize. An xid carries a 24-bit counter,
// so a slice of at most 2^24 names gets distinct names even when every one of
// them is made in the same second (a stopped clock).
const maxPartitionSize = 1 << 24

// Provider hands out physical addresses for new objects and tells when an
// address was made. *Partitioned implements it.
type Provider interface {
	// NewPath returns a new, unique address "<prefix>/<slice>/<xid>".
	NewPath() string
	// ResolvePathTime returns the creation time of an address's object,
	// read from its last path element.
	ResolvePathTime(address string) (time.Time, error)
	// CommonPrefix returns the prefix every address of NewPath starts with.
	CommonPrefix() string
}

// Option configures New. An option given an invalid value makes New fail
// with an error wrapping ErrInvalidInput.
type Option func(*config) error

type config struct {
	size     int
	interval time.Duration
	prefix   string
	now      func() time.Time
}

// WithPartitionSize sets how many paths a slice holds before the next one
// starts: n <= 2^24 (the xid counter's range); 0 is the default
// DefaultPartitionSize, a negative n invalid.
func WithPartitionSize(n int) Option {
	return func(c *config) error {
		if n < 0 || n > maxPartitionSize {
			return fmt.Errorf("partition size %d out of range (0..%d, 0 for the default)", n, maxPartitionSize)
		}
		c.size = cmp.Or(n, DefaultPartitionSize)
		return nil
	}
}

// WithInterval sets how long a slice is used before the next one starts,
// measured with the clock of WithClock (0: the default DefaultInterval;
// negative: invalid).
func WithInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("negative interval %v", d)
		}
		c.interval = cmp.Or(d, DefaultInterval)
		return nil
	}
}

// WithPrefix sets the first part of every address: no leading or trailing
// '/', and it may hold inner '/'. "" is the default DefaultPrefix.
func WithPrefix(p string) Option {
	return func(c *config) error {
		if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			return fmt.Errorf("prefix %q has a leading or trailing '/'", p)
		}
		c.prefix = cmp.Or(p, DefaultPrefix)
		return nil
	}
}

// WithClock sets the clock used for every time decision: slice names, object
// names and the interval rollover (nil: the default time.Now). It is called
// concurrently by concurrent NewPath calls.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			now = time.Now
		}
		c.now = now
		return nil
	}
}

// Partitioned is the Provider of lakeFS: addresses "<prefix>/<slice>/<name>",
// where a slice (a "partition" in lakeFS) is DescendingID of its start time
// and a name is an xid of the time NewPath was called. A new slice starts when
// the current one has handed out its size, or when its interval has passed.
//
// A Partitioned is safe for concurrent use and never returns the same path
// twice: slices differ, and names within a slice differ by xid's counter,
// which allows 2^24 IDs per second in a process (a slice holds at most 2^24
// paths, so a stopped clock does not break this). The zero value is not
// usable: call New.
type Partitioned struct {
	cfg config

	current atomic.Pointer[slice]
	rolling sync.Mutex // serialises the start of a new slice
}

// slice is one slice in use. Paths are claimed by incrementing used, so
// NewPath takes no lock until the slice is full or too old.
type slice struct {
	head  string // "<prefix>/<slice>/"
	start time.Time
	used  atomic.Int64
}

var _ Provider = (*Partitioned)(nil)

// New returns a Partitioned configured by opts. The first slice starts with
// the first NewPath.
func New(opts ...Option) (*Partitioned, error) {
	p := &Partitioned{cfg: config{
		size:     DefaultPartitionSize,
		interval: DefaultInterval,
		prefix:   DefaultPrefix,
		now:      time.Now,
	}}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidInput)
		}
		if err := opt(&p.cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
	}
	return p, nil
}

// NewPath returns a new address "<prefix>/<slice>/<xid>". The xid's time is
// the clock's time at the call, which makes it the object's creation time for
// ResolvePathTime.
func (p *Partitioned) NewPath() string {
	now := p.cfg.now()
	s := p.current.Load()
	if s == nil || !p.claim(s, now) {
		s = p.rollover(s, now)
	}
	return s.path(xid.NewWithTime(now))
}

// claim takes one path of s, unless s is too old at now or already full.
func (p *Partitioned) claim(s *slice, now time.Time) bool {
	return now.Sub(s.start) < p.cfg.interval && s.used.Add(1) <= int64(p.cfg.size)
}

// rollover returns a slice with one path claimed for the caller, starting a
// new slice unless another caller already replaced stale with a usable one.
func (p *Partitioned) rollover(stale *slice, now time.Time) *slice {
	p.rolling.Lock()
	defer p.rolling.Unlock()
	cur := p.current.Load()
	if cur != stale && p.claim(cur, now) {
		return cur
	}
	start := now
	if cur != nil && cur.start.After(start) {
		// A caller that read the clock before the current slice started
		// must not start an older one, or slices would stop sorting newest
		// first. That start was read before now, so it is not in the future.
		start = cur.start
	}
	s := &slice{start: start}
	s.used.Store(1)
	s.head = p.cfg.prefix + "/" + DescendingID(start).String() + "/"
	p.current.Store(s)
	return s
}

func (s *slice) path(id xid.ID) string {
	var name [encodedLen]byte
	var b strings.Builder
	b.Grow(len(s.head) + encodedLen)
	b.WriteString(s.head)
	b.Write(id.Encode(name[:]))
	return b.String()
}

// ResolvePathTime returns the time encoded in the last path element of
// address, which must be an xid: the creation time of an address made by
// NewPath, or by lakeFS. As in Parse, the xid may be followed by "," and a
// signature: the stored address of a linked object. Any prefix is accepted,
// full URIs included. Errors wrap ErrInvalidAddress.
func (p *Partitioned) ResolvePathTime(address string) (time.Time, error) {
	id, _, _, err := parseName(address[strings.LastIndexByte(address, '/')+1:])
	if err != nil {
		return time.Time{}, err
	}
	return id.Time().UTC(), nil
}

// CommonPrefix returns the prefix of every address of NewPath, without the
// trailing '/'.
func (p *Partitioned) CommonPrefix() string {
	return p.cfg.prefix
}
