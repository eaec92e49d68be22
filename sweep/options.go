package sweep

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/contract"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/retry"
	"gocloud.dev/blob"
)

// Defaults of the options.
const (
	DefaultStoragePrefix = layout.StoragePrefix // "_lakefs"
	DefaultDataPrefix    = layout.DataPrefix    // "data"
	DefaultMinAge        = 24 * time.Hour
	DefaultLinkTTL       = 24 * time.Hour
	DefaultClockSkew     = 5 * time.Minute
	DefaultMemoryBudget  = 256 << 20
)

// StagingMargin is kept on top of the clock skew: the cutoff is the anchor
// less MinAge, ClockSkew and StagingMargin. A host verifies a link and then
// writes it to its staging area, in two steps; in between, the object is in
// no input of Mark and only its age protects it. With the margin, a link
// verified just inside the link TTL (as lakeFS's link verifies it) may land
// its staging write up to StagingMargin after the TTL ran out, and the
// clock skew is left to the clocks. It is the same constant as
// linkaddr.StagingMargin, whose Verify leaves a host that much time to
// stage and returns the deadline of the staging write. It is not an option:
// the two sides must agree.
const StagingMargin = contract.StagingMargin

// Defaults of the concurrency and the retries, which follow the store (see
// the package documentation): Mark lists up to DefaultMaxListConcurrency
// pages at once, starting from DefaultListConcurrency; Sweep keeps up to
// DefaultMaxDeleteConcurrency batches in flight, starting from
// DefaultDeleteConcurrency; both go down to one when the store throttles.
// A failed request is retried after DefaultMinBackoff, doubling up to
// DefaultMaxBackoff, the range of lakeFS's Spark client.
const (
	DefaultListConcurrency      = 8
	DefaultMaxListConcurrency   = 32
	DefaultDeleteConcurrency    = 16
	DefaultMaxDeleteConcurrency = 64
	DefaultMinBackoff           = time.Second
	DefaultMaxBackoff           = 2 * time.Minute
)

// maxConcurrency is the most listing requests or delete batches any option
// lets Mark or Sweep keep in flight: each has a goroutine, and a listing's a
// page of up to 1000 keys and a file buffer beyond the memory budget, so a
// larger bound is refused rather than allocated.
const maxConcurrency = 1024

// minMemoryBudget is the smallest budget WithMemoryBudget accepts: below it the
// fixed-size I/O buffers would dominate.
const minMemoryBudget = 4 << 10

// A MarkOption configures Mark. An option of Sweep only (WithDeleteRate,
// WithBatchDeleter...) is no MarkOption, so giving it to Mark does not
// compile. A zero value means the option's default; an invalid value makes
// Mark fail with an error wrapping ErrInvalidInput before it reads or
// writes anything. Of two options that set the same thing (the same
// function, or WithListConcurrency and WithListConcurrencyRange), the later
// wins, except for WithInclude and WithErrorClassifier, which add up.
type MarkOption interface{ applyMark(*config) }

// A SweepOption configures Sweep, as a MarkOption does Mark. An option of
// Mark only (WithShard, WithMinAge...) is no SweepOption.
type SweepOption interface{ applySweep(*config) }

// An Option configures Mark and Sweep alike: it is both a MarkOption and a
// SweepOption.
type Option func(*config)

func (o Option) applyMark(c *config) {
	if o != nil {
		o(c)
	}
}

func (o Option) applySweep(c *config) {
	if o != nil {
		o(c)
	}
}

type markOption func(*config)

func (o markOption) applyMark(c *config) { o(c) }

type sweepOption func(*config)

func (o sweepOption) applySweep(c *config) { o(c) }

// option makes an option of both Mark and Sweep that sets the setting name
// ("" for one whose values add up); markOnly and sweepOnly make options of
// one of them.
func option(name string, f func(*config)) Option {
	return func(c *config) {
		if name != "" {
			c.touched = append(c.touched, name)
		}
		f(c)
	}
}

func markOnly(name string, f func(*config)) MarkOption { return markOption(option(name, f)) }

func sweepOnly(name string, f func(*config)) SweepOption { return sweepOption(option(name, f)) }

type config struct {
	storagePrefix string
	dataPrefix    string
	minAge        time.Duration
	linkTTL       time.Duration
	unsafeMinAge  bool
	clockSkew     time.Duration
	clock         func() time.Time
	tempDir       string
	memoryBudget  int64
	list          span // pages Mark lists at once
	delete        span // batches Sweep deletes at once
	deleteRate    float64
	deleter       BatchDeleter
	pageLister    PageLister // nil: the bucket's own ListPage
	logger        *slog.Logger
	progress      func(Progress)
	backoff       retry.Backoff // WithBackoff's range; tests replace its sleep
	previous      string
	sliceMargin   time.Duration
	cleanEvery    int
	check         CandidateCheck
	shardIndex    int // with shardCount: WithShard; shardCount 0 is no sharding
	shardCount    int
	recognize     func(string) bool // WithRecognizer; nil: layout's shapes
	include       []string          // WithInclude, sorted once checked
	canary        Canary
	classify      classifiers // WithErrorClassifier
	mover         Mover       // WithMover
	localDir      string      // WithLocalListing
	inventory     Inventory   // WithInventory

	batch int // keys a DeleteBatch call gets (0: the deleter's default); set by tests

	touched []string // the settings the options set, by name (see option)

	err error // the first invalid option
}

// newMarkConfig is the config of Mark's options.
func newMarkConfig(opts []MarkOption) *config {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.applyMark(c)
		}
	}
	return c.finish()
}

// newSweepConfig is the config of Sweep's options.
func newSweepConfig(opts []SweepOption) *config {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.applySweep(c)
		}
	}
	return c.finish()
}

func defaultConfig() *config {
	return &config{
		storagePrefix: DefaultStoragePrefix,
		dataPrefix:    DefaultDataPrefix,
		minAge:        DefaultMinAge,
		linkTTL:       DefaultLinkTTL,
		clockSkew:     DefaultClockSkew,
		clock:         time.Now,
		memoryBudget:  DefaultMemoryBudget,
		list:          span{1, DefaultListConcurrency, DefaultMaxListConcurrency},
		delete:        span{1, DefaultDeleteConcurrency, DefaultMaxDeleteConcurrency},
		backoff:       retry.Backoff{Min: DefaultMinBackoff, Max: DefaultMaxBackoff, Sleep: retry.Sleep},
		cleanEvery:    DefaultCleanEvery,
		canary:        defaultCanary(),
	}
}

// finish validates what no one option can: the prefixes and the includes.
func (c *config) finish() *config {
	if c.err == nil {
		c.err = validatePrefixes(c.storagePrefix, c.dataPrefix)
	}
	if c.err == nil {
		c.err = c.checkInclude()
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
	return option("StoragePrefix", func(c *config) { c.storagePrefix = cmp.Or(p, DefaultStoragePrefix) })
}

// WithDataPrefix sets the folder of the slices ("": the default
// DefaultDataPrefix).
func WithDataPrefix(p string) Option {
	return option("DataPrefix", func(c *config) { c.dataPrefix = cmp.Or(p, DefaultDataPrefix) })
}

// WithMinAge sets how much older than the uncommitted export an object must be
// to be marked (0: the default DefaultMinAge). It must be at least the link
// TTL. An object's age is read from the listing's modification time (the
// store's LastModified), not from its address: an object rewritten in place
// is young again.
func WithMinAge(d time.Duration) MarkOption {
	return markOnly("MinAge", func(c *config) {
		if d < 0 {
			c.invalid("negative min age %v", d)
		}
		c.minAge = cmp.Or(d, DefaultMinAge)
	})
}

// WithLinkTTL sets the host's link-address TTL (0: the default
// DefaultLinkTTL), the floor of the min age: an object uploaded to a signed
// address is in no input until it is linked, so only its age protects it.
func WithLinkTTL(d time.Duration) MarkOption {
	return markOnly("LinkTTL", func(c *config) {
		if d < 0 {
			c.invalid("negative link TTL %v", d)
		}
		c.linkTTL = cmp.Or(d, DefaultLinkTTL)
	})
}

// WithUnsafeMinAge allows a min age below the link TTL, which can delete an
// object being uploaded. Meant for tests and read-only repositories.
func WithUnsafeMinAge() MarkOption {
	return markOnly("UnsafeMinAge", func(c *config) { c.unsafeMinAge = true })
}

// WithClockSkew sets the margin subtracted from the cutoff for the clocks of
// the writers and the store (0: the default DefaultClockSkew). StagingMargin
// is subtracted too, whatever the skew.
func WithClockSkew(d time.Duration) MarkOption {
	return markOnly("ClockSkew", func(c *config) {
		if d < 0 {
			c.invalid("negative clock skew %v", d)
		}
		c.clockSkew = cmp.Or(d, DefaultClockSkew)
	})
}

// WithClock sets the clock of Mark's start and of the reports' times (nil:
// the default time.Now). It does not date the objects: Mark compares the
// cutoff (the export's start less the min age, the clock skew and
// StagingMargin) with each
// object's modification time as the bucket's listing reports it.
func WithClock(now func() time.Time) Option {
	return option("Clock", func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.clock = now
	})
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
func WithTempDir(dir string) MarkOption {
	return markOnly("TempDir", func(c *config) { c.tempDir = dir })
}

// WithMemoryBudget bounds the bytes Mark holds in key buffers and in its
// list of folders (0: the default DefaultMemoryBudget; else at least 4
// KiB); beyond it keys are spilled to temporary files, and folders are
// listed one at a time without an entry. On Linux, from 64 MiB up, the
// process's peak resident memory grows by at most the budget plus 64 MiB
// while Mark runs (keys are held outside the Go heap, where the garbage
// collector's headroom does not double them).
func WithMemoryBudget(bytes int64) MarkOption {
	return markOnly("MemoryBudget", func(c *config) {
		if bytes == 0 {
			bytes = DefaultMemoryBudget
		}
		if bytes < minMemoryBudget {
			c.invalid("memory budget %d below %d bytes", bytes, minMemoryBudget)
			return
		}
		c.memoryBudget = bytes
	})
}

// span is a concurrency range and where it starts.
type span struct{ lo, start, hi int }

// window returns a window over the span.
func (s span) window() *aimd.Window { return aimd.New(s.lo, s.start, s.hi) }

// doublingWindow returns a window over the span that doubles each round
// until the first throttled answer (aimd.NewDoubling).
func (s span) doublingWindow() *aimd.Window { return aimd.NewDoubling(s.lo, s.start, s.hi) }

// concurrencyRange returns an option setting the span *field to [lo, hi]
// (0: 1 for lo, the larger of defaultHi and lo for hi), starting at
// defaultStart within it; what names the span in the error of an invalid
// range: negative, lo above hi, or hi above maxConcurrency.
func concurrencyRange(what string, field func(*config) *span, lo, hi, defaultStart, defaultHi int) func(*config) {
	return func(c *config) {
		if lo < 0 || hi < 0 {
			c.invalid("%s concurrency range [%d, %d]", what, lo, hi)
			return
		}
		lo = cmp.Or(lo, 1)
		hi = cmp.Or(hi, max(defaultHi, lo))
		if lo > hi || hi > maxConcurrency {
			c.invalid("%s concurrency range [%d, %d] (at most %d)", what, lo, hi, maxConcurrency)
			return
		}
		*field(c) = span{lo, min(max(defaultStart, lo), hi), hi}
	}
}

// WithListConcurrency fixes how many listing requests (pages of up to 1000
// keys, each of one slice) Mark keeps in flight at n: the window does not
// follow the store (0: the default, a window of
// WithListConcurrencyRange(0, 0)). It bounds the slices listed at once too.
// n above 1024 is an error. It is WithListConcurrencyRange(n, n).
func WithListConcurrency(n int) MarkOption { return WithListConcurrencyRange(n, n) }

// WithListConcurrencyRange sets the bounds of the listing requests Mark
// keeps in flight: it starts at DefaultListConcurrency (within the bounds),
// grows while requests are slow and halves on throttling, never below lo or
// above hi (0: 1 for lo, the larger of DefaultMaxListConcurrency and lo for
// hi). Each slice is listed by one request at a time, so hi also bounds the
// slices listed at once, each holding a page of up to 1000 keys and a
// buffer. hi above 1024 is an error.
func WithListConcurrencyRange(lo, hi int) MarkOption {
	return markOnly("ListConcurrency", concurrencyRange("list", func(c *config) *span { return &c.list }, lo, hi, DefaultListConcurrency, DefaultMaxListConcurrency))
}

// WithDeleteConcurrency fixes how many DeleteBatch calls Sweep keeps in
// flight at n: the window does not follow the store (0: the default, a
// window of WithDeleteConcurrencyRange(0, 0)). n above 1024 is an error. It
// is WithDeleteConcurrencyRange(n, n).
func WithDeleteConcurrency(n int) SweepOption { return WithDeleteConcurrencyRange(n, n) }

// WithDeleteConcurrencyRange sets the bounds of the DeleteBatch calls Sweep
// keeps in flight: it starts at DefaultDeleteConcurrency (within the
// bounds), grows while calls succeed and halves on throttling, never below lo
// or above hi (0: 1 for lo, the larger of DefaultMaxDeleteConcurrency and lo
// for hi). hi above 1024 is an error.
func WithDeleteConcurrencyRange(lo, hi int) SweepOption {
	return sweepOnly("DeleteConcurrency", concurrencyRange("delete", func(c *config) *span { return &c.delete }, lo, hi, DefaultDeleteConcurrency, DefaultMaxDeleteConcurrency))
}

// WithBackoff sets the waits before the retries of a listing page or a
// delete batch that failed with a transient error: the first retry waits
// about lo, each next one twice as long, up to hi; each wait is drawn
// between half and all of that (0: DefaultMinBackoff for lo, the larger of
// DefaultMaxBackoff and lo for hi). A page is tried up to 10 times before
// Mark fails, a key up to 5 times before Sweep lists it in failed/.
func WithBackoff(lo, hi time.Duration) Option {
	return option("Backoff", func(c *config) {
		if lo < 0 || hi < 0 {
			c.invalid("negative backoff [%v, %v]", lo, hi)
			return
		}
		lo = cmp.Or(lo, DefaultMinBackoff)
		hi = cmp.Or(hi, max(DefaultMaxBackoff, lo))
		if lo > hi {
			c.invalid("backoff range [%v, %v]", lo, hi)
			return
		}
		c.backoff.Min, c.backoff.Max = lo, hi
	})
}

// WithDeleteRate limits Sweep to perSecond keys a second (default, <= 0,
// NaN or +Inf: unlimited).
func WithDeleteRate(perSecond float64) SweepOption {
	return sweepOnly("DeleteRate", func(c *config) { c.deleteRate = perSecond })
}

// WithBatchDeleter sets how Sweep deletes (default: bucket.Delete key by key);
// see package s3delete for S3's DeleteObjects.
func WithBatchDeleter(d BatchDeleter) SweepOption {
	return sweepOnly("BatchDeleter", func(c *config) { c.deleter = d })
}

// PageLister lists one page of a bucket, with the contract of
// blob.Bucket.ListPage (which is one): the keys in order, relative to the
// bucket, and the token of the next page (empty after the last). Mark
// checks what it returns as it checks the bucket's own listing.
type PageLister interface {
	ListPage(ctx context.Context, pageToken []byte, pageSize int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error)
}

// WithPageLister sets how Mark lists a page (default: the bucket's
// ListPage); see package s3list for a faster decoder of S3's listings. The
// lister must list the bucket given to Mark. With WithLocalListing too, the
// local read lists what it can and the lister the rest.
func WithPageLister(pl PageLister) MarkOption {
	return markOnly("PageLister", func(c *config) { c.pageLister = pl })
}

// WithLogger sets a logger for the phases of Mark and Sweep (default none).
func WithLogger(l *slog.Logger) Option {
	return option("Logger", func(c *config) { c.logger = l })
}

// WithProgress sets a function called with the counters of Mark or Sweep at
// each phase change and every few thousand keys. Calls never overlap; the
// function should return quickly.
func WithProgress(f func(Progress)) Option {
	return option("Progress", func(c *config) { c.progress = f })
}

// WithErrorClassifier adds c to the classifiers of the bucket's errors
// (see ErrorClassifier), asked in the order given, before the deleter's own:
// give the one of the bucket's store, such as azdelete.Classifier for an
// Azure bucket (GCS's answers sweep reads itself). A nil c is ignored.
func WithErrorClassifier(c ErrorClassifier) Option {
	return option("", func(cfg *config) {
		if c != nil {
			cfg.classify = append(cfg.classify, c)
		}
	})
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
	if layout.PrefixesOverlap(storage, data) {
		return fmt.Errorf("%w: data prefix %q and storage prefix %q overlap", ErrInvalidInput, data, storage)
	}
	return nil
}

func validPrefix(p string) error {
	if !layout.ValidPrefix(p) {
		return fmt.Errorf("%w: prefix %q must be a non-empty folder name without leading or trailing '/'", ErrInvalidInput, p)
	}
	return nil
}

// Options are options of a Mark and of the Sweep of its run.
type Options struct {
	Mark  []MarkOption
	Sweep []SweepOption
}

// CheckOptions reports, without touching a bucket, the first invalid option
// among opts, as Mark and Sweep would; and, of those, the first that sets
// what an option of fixed sets (fixed's own values are not checked). Errors
// wrap ErrInvalidInput. A caller that gathers options ahead of a long run
// refuses them first (lakegc.Collect, before its export), and one that
// decides some settings itself (lakegc.Config) refuses an option that would
// silently change them.
func CheckOptions(opts, fixed Options) error {
	if err := newMarkConfig(opts.Mark).err; err != nil {
		return err
	}
	if err := newSweepConfig(opts.Sweep).err; err != nil {
		return err
	}
	decided := map[string]bool{}
	for _, name := range fixed.touched() {
		decided[name] = true
	}
	for _, o := range opts.Mark {
		for _, name := range (Options{Mark: []MarkOption{o}}).touched() {
			if decided[name] {
				return fmt.Errorf("%w: With%s sets what the caller decides", ErrInvalidInput, name)
			}
		}
	}
	for _, o := range opts.Sweep {
		for _, name := range (Options{Sweep: []SweepOption{o}}).touched() {
			if decided[name] {
				return fmt.Errorf("%w: With%s sets what the caller decides", ErrInvalidInput, name)
			}
		}
	}
	return nil
}

// touched lists the settings o's options set.
func (o Options) touched() []string {
	c := defaultConfig()
	for _, m := range o.Mark {
		if m != nil {
			m.applyMark(c)
		}
	}
	for _, s := range o.Sweep {
		if s != nil {
			s.applySweep(c)
		}
	}
	return c.touched
}

// A CandidateCheck is asked, before Mark writes its candidates, which of
// them to keep after all: keys are a batch of candidates in ascending order
// (at most checkBatch of them), and the check sets keep[i] to keep keys[i].
// An error fails the mark. It is called on one goroutine, one batch at a
// time, after the inputs were read; it may make requests of its own.
type CandidateCheck func(ctx context.Context, keys []string, keep []bool) error

// checkBatch is the most candidates a CandidateCheck gets at once.
const checkBatch = 1000

// WithCandidateCheck makes Mark ask check about every candidate before it
// writes it: a host whose keep set cannot name every live object (lakeFS's
// listings hide some staged objects) spares those a check recognises. A
// spared key is counted as kept (Progress.Kept, Summary.NumKeptObjects) and
// is not in the candidates (the canary still counts it as one: see
// Canary, rule B); its slice is listed again by the next
// optimized run, as a slice with young objects is, so that the check sees
// it again.
func WithCandidateCheck(check CandidateCheck) MarkOption {
	return markOnly("CandidateCheck", func(c *config) { c.check = check })
}

// WithLocalListing makes Mark list the folders of a local namespace by
// reading dir, the folder of a gocloud fileblob bucket (the bucket given to
// Mark, opened at dir with no prefix), rather than through the bucket's
// ListPage, whose every page walks and sorts the whole folder (about
// n²/1000 file system calls for n objects, against n). The keys are those
// fileblob lists; the package documentation says where the two differ. A
// listing the local read cannot match exactly (a prefix that is not a plain
// folder, or, with a delimiter, a folder holding a name with fileblob's
// escape or invalid UTF-8) goes through the bucket (or WithPageLister's
// lister). Mark checks that the bucket is a fileblob bucket rooted at dir
// (a bucket wrapped by a driver that forwards As and ErrorAs passes, and its
// listing is then bypassed: give the option only for the bucket fileblob
// opened), and fails with ErrInvalidInput if not. dir is made absolute; ""
// is an error.
func WithLocalListing(dir string) MarkOption {
	return markOnly("LocalListing", func(c *config) {
		if dir == "" {
			c.invalid("empty local listing folder")
			return
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			c.invalid("local listing folder %q: %v", dir, err)
			return
		}
		c.localDir = abs
	})
}
