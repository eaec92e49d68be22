package metarange

import (
	"fmt"
	"strings"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
)

// Defaults of the options.
const (
	DefaultStoragePrefix = lakefslayout.StoragePrefix // "_lakefs"
	DefaultConcurrency   = 8
	DefaultMaxFileSize   = 64 << 20
	DefaultMaxRanges     = 1 << 21
	// DefaultCacheMaxBytes bounds a range's cache, and the memory its
	// keys and checksums take while a missed range is sorted (its
	// encoding, smaller, beside them): as much as its table may take
	// (DefaultMaxFileSize).
	DefaultCacheMaxBytes = 64 << 20
)

// An Option configures Addresses; of the options, only WithMaxFileSize
// applies to Ranges and Entries.
type Option func(*config)

type config struct {
	storagePrefix string
	concurrency   int
	maxFileSize   int64
	maxRanges     int
	stats         func(Stats)
	entryStats    func(size int64, checksum []byte)
	rangeCache    bool
	rangeIDs      func(rangeID string)
	cacheMaxBytes int64

	err error // the first invalid option
}

func newConfig(opts []Option) *config {
	c := &config{
		storagePrefix: DefaultStoragePrefix,
		concurrency:   DefaultConcurrency,
		maxFileSize:   DefaultMaxFileSize,
		maxRanges:     DefaultMaxRanges,
		cacheMaxBytes: DefaultCacheMaxBytes,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

func (c *config) invalid(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
}

// WithStoragePrefix sets the folder of lakeFS's metadata in the namespace
// (default "_lakefs", lakeFS's committed.block_storage_prefix): a table
// with ID id is read at <prefix>/<id>.
func WithStoragePrefix(p string) Option {
	return func(c *config) {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			c.invalid("storage prefix %q must be a non-empty folder without leading or trailing '/'", p)
		}
		c.storagePrefix = p
	}
}

// WithConcurrency sets how many tables are read at once (default 8), which
// is also how many are held in memory at once. Zero means the default.
func WithConcurrency(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid("negative concurrency %d", n)
		case n > 0:
			c.concurrency = n
		}
	}
}

// WithMaxFileSize sets the size of the largest table read (default 64 MiB;
// lakeFS cuts ranges at about 20 MiB): a table is read whole into memory,
// so a larger one fails the iteration with ErrLimit. Zero means the
// default.
func WithMaxFileSize(n int64) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid("negative max file size %d", n)
		case n > 0:
			c.maxFileSize = n
		}
	}
}

// WithMaxRanges sets how many distinct ranges an iteration reads at most
// (default 2,097,152): each range is read once, however many metaranges
// list it, and remembering those read takes about 50 bytes a range, so
// 100 MiB at the default. More distinct ranges fail the iteration with
// ErrLimit. Zero means the default.
func WithMaxRanges(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid("negative max ranges %d", n)
		case n > 0:
			c.maxRanges = n
		}
	}
}

// WithStats sets a function called with the running totals after each
// range is read, and once more, with Done set, when the iteration ends,
// whether it succeeded or not: before the error, if there is one. It is
// called on the goroutine that iterates, between two addresses, so it
// should be quick.
func WithStats(fn func(Stats)) Option {
	return func(c *config) { c.stats = fn }
}

// WithEntryStats sets a function called with the size and the checksum
// (lakeFS's Entry.size and Entry.e_tag: the blockstore's ETag, an MD5 in
// hex on most) of every entry of every range read, each range once, those
// whose address is outside the namespace included. A host uses it to know
// the identities of the committed objects without reading the tables
// again. It is called on the goroutines that read the ranges, up to
// WithConcurrency at once, so it must be safe for concurrent use, and
// quick; checksum aliases the table and is valid only during the call.
// An entry whose size or checksum cannot be decoded fails the iteration
// with ErrCorrupt.
func WithEntryStats(fn func(size int64, checksum []byte)) Option {
	return func(c *config) { c.entryStats = fn }
}

// WithRangeCache makes Addresses read each range through the range cache
// (the package documentation, "The range cache"): from its cache object
// when one of these settings checks out, else from its table, whose keys
// are then sorted and cached. With it, Addresses yields each range's keys
// and their unsigned forms (a linked object's key without its
// ",<signature>"), sorted and deduplicated per range (but for a range
// whose keys take more than WithCacheMaxBytes, not cached, whose keys come
// as its table lists them). Without it (the default), nothing is read from
// or written to the cache.
func WithRangeCache() Option {
	return func(c *config) { c.rangeCache = true }
}

// WithCacheMaxBytes bounds a range's cache object (default 64 MiB) and
// the memory its keys and checksums take, as allocated with the slices
// that sort them, while a range read from its table is sorted for its
// cache (its encoding, smaller, is beside them: twice the bound at most):
// a range over it is not cached (Addresses reads
// it from its table every time; Cache.Open fails with ErrLimit). Zero
// means the default.
func WithCacheMaxBytes(n int64) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid("negative cache max bytes %d", n)
		case n > 0:
			c.cacheMaxBytes = n
		}
	}
}

// WithRangeIDs sets a function Addresses calls with the ID of every
// distinct range the metaranges list, once each, before the range is
// read: a host records the ranges a run used (the range cache's pruning).
// It is called on the goroutines that read the metaranges, up to
// WithConcurrency at once, so it must be safe for concurrent use.
func WithRangeIDs(fn func(rangeID string)) Option {
	return func(c *config) { c.rangeIDs = fn }
}
