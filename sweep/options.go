package sweep

import (
	"cmp"
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
// ignored by the other. A zero value means the option's default; an invalid
// value makes Mark or Sweep fail with an error wrapping ErrInvalidInput
// before it reads or writes anything.
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
// ("": the default DefaultStoragePrefix); the report lives under
// <prefix>/retention/gc/unified/.
func WithStoragePrefix(p string) Option {
	return func(c *config) { c.storagePrefix = cmp.Or(p, DefaultStoragePrefix) }
}

// WithDataPrefix sets the folder of the slices ("": the default
// DefaultDataPrefix).
func WithDataPrefix(p string) Option {
	return func(c *config) { c.dataPrefix = cmp.Or(p, DefaultDataPrefix) }
}

// WithMinAge sets how much older than the uncommitted export an object must be
// to be marked (0: the default DefaultMinAge). It must be at least the link
// TTL. An object's age is read from the listing's modification time (the
// store's LastModified), not from its address: an object rewritten in place
// is young again.
func WithMinAge(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative min age %v", d)
		}
		c.minAge = cmp.Or(d, DefaultMinAge)
	}
}

// WithLinkTTL sets the host's link-address TTL (0: the default
// DefaultLinkTTL), the floor of the min age: an object uploaded to a signed
// address is in no input until it is linked, so only its age protects it.
func WithLinkTTL(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative link TTL %v", d)
		}
		c.linkTTL = cmp.Or(d, DefaultLinkTTL)
	}
}

// WithUnsafeMinAge allows a min age below the link TTL, which can delete an
// object being uploaded. Meant for tests and read-only repositories.
func WithUnsafeMinAge() Option {
	return func(c *config) { c.unsafeMinAge = true }
}

// WithClockSkew sets the margin subtracted from the cutoff for the clocks of
// the writers and the store (0: the default DefaultClockSkew).
func WithClockSkew(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.invalid("negative clock skew %v", d)
		}
		c.clockSkew = cmp.Or(d, DefaultClockSkew)
	}
}

// WithClock sets the clock of Mark's start and of the reports' times (nil:
// the default time.Now). It does not date the objects: Mark compares the
// cutoff (the export's start less the min age and the clock skew) with each
// object's modification time as the bucket's listing reports it.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.clock = now
	}
}

// WithTempDir sets the parent directory of Mark's spill files (default
// os.TempDir()). Mark creates one private directory there, named
// lakegc-mark-<pid>-<random>, and removes it before returning. While Mark
// runs it holds an exclusive lock (flock) on the file "lock" inside; the
// kernel releases it when the process ends, however it ends. A Mark killed
// before it could clean up leaves its directory behind, and the next Mark
// with the same temp directory removes it: at its start Mark removes every
// lakegc-mark-<pid>-<suffix> directory there whose lock it can take. It
// leaves alone the directories of Marks still running (in this process or
// another, so several Marks may share a temp directory), directories
// without a lock file, and every other name (including the lakegc-sweep-*
// directories of earlier versions, whose owner cannot be told). On systems
// without flock (not Linux, macOS or the BSDs) nothing is removed.
func WithTempDir(dir string) Option {
	return func(c *config) { c.tempDir = dir }
}

// WithMemoryBudget bounds the bytes Mark holds in key buffers and in its
// list of folders (0: the default DefaultMemoryBudget; else at least 4
// KiB); beyond it keys are spilled to temporary files, and folders are
// listed one at a time without an entry. Keys are stored in slabs taken
// once and reused, mapped outside the Go heap on Linux, macOS and the BSDs,
// so the garbage collector's headroom (about as much again as the live heap
// with the default GOGC) applies only to the short-lived listing pages, not
// to the budget: from 64 MiB up, the process's peak resident memory grows by
// at most the budget plus 64 MiB while Mark runs.
func WithMemoryBudget(bytes int64) Option {
	return func(c *config) {
		if bytes == 0 {
			bytes = DefaultMemoryBudget
		}
		if bytes < minMemoryBudget {
			c.invalid("memory budget %d below %d bytes", bytes, minMemoryBudget)
			return
		}
		c.memoryBudget = bytes
	}
}

// WithListConcurrency sets how many slices Mark lists at once (0: the
// default DefaultListConcurrency).
func WithListConcurrency(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.invalid("negative list concurrency %d", n)
			return
		}
		c.listConcurrency = cmp.Or(n, DefaultListConcurrency)
	}
}

// WithDeleteConcurrency sets how many DeleteBatch calls Sweep runs at once
// (0: the default DefaultDeleteConcurrency).
func WithDeleteConcurrency(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.invalid("negative delete concurrency %d", n)
			return
		}
		c.deleteConcurrency = cmp.Or(n, DefaultDeleteConcurrency)
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
