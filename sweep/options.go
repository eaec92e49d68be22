package sweep

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults of the options.
const (
	DefaultStoragePrefix     = "_lakefs"
	DefaultDataPrefix        = "data"
	DefaultMinAge            = 24 * time.Hour
	DefaultLinkTTL           = 24 * time.Hour
	DefaultClockSkew         = 5 * time.Minute
	DefaultMemoryBudget      = 256 << 20
	DefaultListConcurrency   = 8
	DefaultDeleteConcurrency = 16
)

// minMemoryBudget is the smallest budget WithMemoryBudget accepts: below it the
// fixed-size I/O buffers would dominate.
const minMemoryBudget = 4 << 10

// An Option configures Mark or Sweep. Options that only one of them uses are
// ignored by the other.
type Option func(*config)

type config struct {
	storagePrefix     string
	dataPrefix        string
	minAge            time.Duration
	linkTTL           time.Duration
	unsafeMinAge      bool
	clockSkew         time.Duration
	clock             func() time.Time
	tempDir           string
	memoryBudget      int64
	listConcurrency   int
	deleteConcurrency int
	deleteRate        float64
	deleter           BatchDeleter
	logger            *slog.Logger
	progress          func(Progress)

	// Retry policy of Sweep; fixed outside tests.
	maxAttempts int
	backoff     time.Duration

	err error // the first invalid option
}

func newConfig(opts []Option) *config {
	c := &config{
		storagePrefix:     DefaultStoragePrefix,
		dataPrefix:        DefaultDataPrefix,
		minAge:            DefaultMinAge,
		linkTTL:           DefaultLinkTTL,
		clockSkew:         DefaultClockSkew,
		clock:             time.Now,
		memoryBudget:      DefaultMemoryBudget,
		listConcurrency:   DefaultListConcurrency,
		deleteConcurrency: DefaultDeleteConcurrency,
		maxAttempts:       5,
		backoff:           100 * time.Millisecond,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.err == nil {
		c.err = validatePrefixes(c.storagePrefix, c.dataPrefix)
	}
	return c
}

func (c *config) invalid(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
}

// WithStoragePrefix sets the folder of lakeFS's own files in the namespace
// (default "_lakefs"); the report lives under <prefix>/retention/gc/unified/.
func WithStoragePrefix(p string) Option {
	return func(c *config) { c.storagePrefix = p }
}

// WithDataPrefix sets the folder of the slices (default "data").
func WithDataPrefix(p string) Option {
	return func(c *config) { c.dataPrefix = p }
}

// WithMinAge sets how much older than the uncommitted export an object must be
// to be marked (default 24h). It must be at least the link TTL.
func WithMinAge(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative min age %v", d)
		}
		c.minAge = d
	}
}

// WithLinkTTL sets the host's link-address TTL (default 24h), the floor of the
// min age: an object uploaded to a signed address is in no input until it is
// linked, so only its age protects it.
func WithLinkTTL(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative link TTL %v", d)
		}
		c.linkTTL = d
	}
}

// WithUnsafeMinAge allows a min age below the link TTL, which can delete an
// object being uploaded. Meant for tests and read-only repositories.
func WithUnsafeMinAge() Option {
	return func(c *config) { c.unsafeMinAge = true }
}

// WithClockSkew sets the margin subtracted from the cutoff for the clocks of
// the writers and the store (default 5m).
func WithClockSkew(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative clock skew %v", d)
		}
		c.clockSkew = d
	}
}

// WithClock sets the clock of Mark's start and of the reports' times
// (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.invalid("nil clock")
			return
		}
		c.clock = now
	}
}

// WithTempDir sets the parent directory of Mark's spill files (default
// os.TempDir()). Mark creates one private directory there and removes it
// before returning.
func WithTempDir(dir string) Option {
	return func(c *config) { c.tempDir = dir }
}

// WithMemoryBudget bounds the bytes Mark holds in key buffers and in its
// list of folders (default 256 MiB, at least 4 KiB); beyond it keys are
// spilled to temporary files, and folders are listed one at a time without
// an entry. The Go heap may reach about twice the budget with the default
// GOGC, plus a few MiB of listing pages and Parquet buffers.
func WithMemoryBudget(bytes int64) Option {
	return func(c *config) {
		if bytes < minMemoryBudget {
			c.invalid("memory budget %d below %d bytes", bytes, minMemoryBudget)
			return
		}
		c.memoryBudget = bytes
	}
}

// WithListConcurrency sets how many slices Mark lists at once (default 8).
func WithListConcurrency(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.invalid("list concurrency %d < 1", n)
			return
		}
		c.listConcurrency = n
	}
}

// WithDeleteConcurrency sets how many DeleteBatch calls Sweep runs at once
// (default 16).
func WithDeleteConcurrency(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.invalid("delete concurrency %d < 1", n)
			return
		}
		c.deleteConcurrency = n
	}
}

// WithDeleteRate limits Sweep to perSecond keys a second (default, <= 0,
// NaN or +Inf: unlimited).
func WithDeleteRate(perSecond float64) Option {
	return func(c *config) { c.deleteRate = perSecond }
}

// WithBatchDeleter sets how Sweep deletes (default: bucket.Delete key by key);
// see package s3delete for S3's DeleteObjects.
func WithBatchDeleter(d BatchDeleter) Option {
	return func(c *config) { c.deleter = d }
}

// WithLogger sets a logger for the phases of Mark and Sweep (default none).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithProgress sets a function called with the counters of Mark or Sweep at
// each phase change and every few thousand keys. Calls never overlap; the
// function should return quickly.
func WithProgress(f func(Progress)) Option {
	return func(c *config) { c.progress = f }
}

// validatePrefixes checks that both prefixes are relative folder names and
// that neither folder holds the other: the data folder is scanned for garbage
// and the storage folder never is.
func validatePrefixes(storage, data string) error {
	for _, p := range []string{storage, data} {
		if err := validPrefix(p); err != nil {
			return err
		}
	}
	if storage == data || strings.HasPrefix(data+"/", storage+"/") || strings.HasPrefix(storage+"/", data+"/") {
		return fmt.Errorf("%w: data prefix %q and storage prefix %q overlap", ErrInvalidInput, data, storage)
	}
	return nil
}

func validPrefix(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") || strings.Contains(p, "://") {
		return fmt.Errorf("%w: prefix %q must be a non-empty folder name without leading or trailing '/'", ErrInvalidInput, p)
	}
	return nil
}
