package lakegc

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// Defaults of a Config's zero values.
const (
	// DefaultStoragePrefix is the folder of the namespace that holds
	// lakeFS's own files (rules, exports, reports): "_lakefs".
	DefaultStoragePrefix = layout.StoragePrefix
	// DefaultDataPrefix is the folder of the data slices: "data".
	DefaultDataPrefix = layout.DataPrefix
	// DefaultLinkTTL is how long a signed upload address lives, as
	// linkaddr's default.
	DefaultLinkTTL = linkaddr.DefaultTTL
	// DefaultSliceInterval is how long the host's pathprovider uses a
	// slice, as pathprovider's default.
	DefaultSliceInterval = pathprovider.DefaultInterval
	// DefaultMinAge is the minimum age of a candidate when the link TTL is
	// not longer.
	DefaultMinAge = sweep.DefaultMinAge
	// DefaultMemoryBudget bounds the mark's key buffers: 256 MiB.
	DefaultMemoryBudget = sweep.DefaultMemoryBudget
	// DefaultExportFileSize is the size budget of one export file: 20 MiB.
	DefaultExportFileSize = uncommitted.DefaultMaxFileSize
)

// minMemoryBudget is the smallest budget the mark accepts.
const minMemoryBudget = 4 << 10

// ErrInvalidInput is wrapped by the error Collect returns, before any I/O,
// for a Config or Host it cannot run with.
var ErrInvalidInput = errors.New("lakegc: invalid input")

// Config is one repository's GC settings. The zero value of every field but
// Bucket and Namespace means its default; a value that cannot be right (a
// negative duration, a prefix with a leading '/', a minimum age below the
// link TTL) is an error wrapping ErrInvalidInput before any I/O.
type Config struct {
	// Bucket is rooted at the repository's storage namespace: its keys are
	// the addresses relative to it, such as "data/<slice>/<xid>". It must
	// hold a repository marker, lakeFS's or lakegc's (InitNamespace), or
	// Collect refuses it (ErrNoNamespaceMarker). Required.
	Bucket *blob.Bucket
	// Namespace is the URI Bucket is rooted at, such as "s3://bucket/repo1",
	// spelled as the host spells the full addresses it stores: full
	// addresses under it count as the repository's, and one that names the
	// same place in another spelling (s3a://, file:/ for file:///, a
	// symbolic link, ...) fails the cycle with ErrNamespaceMismatch, as
	// does lakegc's marker of another namespace. See the package
	// documentation, "Namespace identity". Required, also for a host
	// whose addresses are all relative: lakegc's marker records it
	// (InitNamespace), and it is then the one proof that Bucket is this
	// repository's folder and not another's; such a host names the folder
	// with any URI of its own (file:///srv/lake/repo1) and keeps it.
	Namespace string
	// Repository is the repository's ID, used in logs and to read its copy
	// records; required when Host.Copies is set.
	Repository string

	// Rules, if set, are the repository's retention rules, for a host that
	// keeps them elsewhere than in its namespace. Precedence: when Rules is
	// set the cycle reads no rules file, neither lakeFS's nor lakegc's
	// extended one, and applies Rules and ExtendedRules alone; when it is
	// nil the cycle reads both files under StoragePrefix, and
	// ExtendedRules must be nil. The zero Rules are no rules, as in
	// lakeFS: every commit is kept. Rules that fail Validate are an error
	// wrapping ErrInvalidInput, and so is Rules with Host.Active, whose
	// host applies its own rules.
	Rules *retention.Rules
	// ExtendedRules, only with Rules, are lakegc's extended rules
	// (retention.Extended: tags, the last N commits, rules by branch
	// pattern, stale branches). Nil: lakeFS's rules alone.
	ExtendedRules *retention.Extended

	// StoragePrefix is the folder of lakeFS's own files in the namespace
	// (default DefaultStoragePrefix): the rules are read, and the export,
	// the commits report and the GC report written, under it. It is never
	// scanned for garbage.
	StoragePrefix string
	// DataPrefix is the folder of the data slices (default
	// DefaultDataPrefix): the host's pathprovider prefix.
	DataPrefix string

	// LinkTTL is the lifetime of the host's signed upload addresses
	// (default DefaultLinkTTL). The host's linkaddr.Signer must use the
	// same TTL: an object uploaded to a signed address is in no input
	// until it is linked, and only its age protects it, so LinkTTL is the
	// floor of MinAge.
	LinkTTL time.Duration
	// Signer is the host's linkaddr.Signer, if Collect may see it: its TTL
	// is then the LinkTTL, and a LinkTTL that differs is refused.
	Signer *linkaddr.Signer
	// SliceInterval is how long the host's pathprovider uses a slice
	// before it starts the next (pathprovider.WithInterval; default
	// DefaultSliceInterval). It must be below MinAge: a new address then
	// lands in a slice younger than every cutoff, which the mark does not
	// list, so an object whose modification time is not yet right (a
	// fileblob file before the host sets its time, a copy that kept its
	// source's time) is kept by its slice. It also sets the default of
	// SliceMargin.
	SliceInterval time.Duration
	// MinAge is how much older than the start of the export an object must
	// be to be marked (default the longer of DefaultMinAge and LinkTTL). An
	// object's age is the modification time the bucket's listing reports;
	// a time it does not report keeps the object. It must be at least
	// LinkTTL.
	MinAge time.Duration
	// Clock is the time of every decision of the cycle: the export's
	// start, the retention threshold, the mark's start, run IDs and phase
	// durations (default time.Now).
	Clock func() time.Time

	// ExportFileSize is the size budget, in bytes, of one file of the
	// uncommitted export (default DefaultExportFileSize).
	ExportFileSize int64
	// MemoryBudget bounds the bytes the mark holds in key buffers (default
	// DefaultMemoryBudget, at least 4 KiB); beyond it keys spill to TempDir.
	MemoryBudget int64
	// TempDir is where the mark spills (default os.TempDir()).
	TempDir string

	// Logger, if set, receives the start and end of each phase, and the
	// packages' own progress logs.
	Logger *slog.Logger
	// Progress, if set, is called after each call of the export, as each
	// later phase starts, and with the counters of the mark and the sweep.
	// Calls never overlap and Collect waits for each: it may be slow, but
	// it should not fail.
	Progress func(Progress)

	// Sweep deletes the marked candidates. Without it, Collect only marks:
	// a dry run whose report says what a sweep would delete.
	Sweep bool
	// Quarantine makes the sweep move each candidate into the run's
	// quarantine, <StoragePrefix>/retention/gc/quarantine/<run>/, instead of
	// deleting it (package sweep/quarantine's Mover): quarantine.Restore
	// puts objects back, quarantine.Purge deletes quarantines past their
	// days. Without Sweep it does nothing.
	Quarantine bool
	// Lease, if set, makes Collect take the namespace's lease before it
	// starts (package lease, in <StoragePrefix>/retention/gc/lease/) and
	// hold it until it ends: a second Collect on the same namespace fails,
	// or waits (Lease.Wait), with an error wrapping lease.ErrHeld that
	// names the holder; a lost lease stops the run with lease.ErrLost.
	// nil: no lease.
	Lease *lease.Options
	// KeepRuns, if positive, makes a cycle that succeeded prune the files
	// of old runs (Prune), keeping the KeepRuns newest of each kind and
	// what the next optimized run or a pending sweep needs, into
	// Report.Pruned (the command's default is DefaultKeepRuns). 0: nothing
	// is pruned.
	KeepRuns int
	// BatchDeleter is how the sweep deletes (default: the bucket's Delete,
	// key by key); see package sweep/s3delete for S3.
	BatchDeleter sweep.BatchDeleter
	// ErrorClassifiers read the bucket's errors where gocloud's codes
	// mislead (see sweep.ErrorClassifier): give azdelete.Classifier for an
	// Azure bucket, or Azure's refusals are retried before they fail and
	// its ServerBusy does not slow the sweep down. GCS's answers are read
	// without one. A BatchDeleter that implements sweep.ErrorClassifier is
	// asked after them.
	ErrorClassifiers []sweep.ErrorClassifier
	// MarkOptions and SweepOptions tune the mark and the sweep: how many
	// requests they keep in flight (sweep.WithListConcurrencyRange,
	// sweep.WithDeleteConcurrencyRange), their retries (sweep.WithBackoff,
	// an option of both), a delete rate (sweep.WithDeleteRate). An option
	// that sets what a field of this Config sets — prefixes, link TTL, min
	// age, clock, memory budget, temp dir, logger, progress, the deleter,
	// the quarantine (sweep.WithMover), the recognizer, the includes, the
	// error classifiers, the canary, the previous run, clean every, the
	// slice margin and the inventory — is an error wrapping ErrInvalidInput,
	// as is an invalid one: set the field.
	MarkOptions  []sweep.MarkOption
	SweepOptions []sweep.SweepOption

	// Recognize, if set, replaces the recognizer of the keys the mark may
	// mark and the sweep may delete (default: the shapes lakeFS and package
	// pathprovider write, sweep.DefaultRecognizer). A listed object whose
	// key it does not accept is unrecognized: counted in Report.Mark,
	// listed in the run's unrecognized/ folder, never deleted. It is called
	// from several goroutines and must not keep its argument
	// (sweep.WithRecognizer).
	Recognize func(key string) bool
	// Include lists key prefixes, relative to the namespace, whose objects
	// count as recognized whatever their shape: the operator's word that
	// they are the repository's own (sweep.WithInclude). Only the top level
	// and the data folder are ever listed.
	Include []string
	// Canary tunes the check that refuses an implausible mark before it
	// writes any candidate (zero: sweep's defaults; see sweep.Canary and
	// sweep.ErrImplausibleMark).
	Canary sweep.Canary

	// Optimized makes the mark start from the latest run in the report
	// folder (sweep.LatestRun): it lists only the slices that started
	// after that run's newest listed slice less SliceMargin, and judges
	// the older ones from that run's records. A latest run that cannot be
	// used (it failed, was marked by lakeFS's Spark client, or used other
	// settings) makes a clean run, which Report.Mark's Summary.CleanReason
	// explains. See package sweep, "Clean and optimized runs".
	Optimized bool
	// CleanEvery makes every CleanEvery-th run of a chain of optimized runs
	// clean (default sweep.DefaultCleanEvery; 1: every run).
	CleanEvery int
	// SliceMargin is how long a slice of the host's pathprovider can keep
	// receiving objects: its interval plus LinkTTL plus clock skew (default
	// SliceInterval + LinkTTL + sweep.DefaultClockSkew).
	SliceMargin time.Duration
	// Inventory, if set, is an inventory report of the namespace, such as
	// an S3 Inventory report opened by package inventory: the mark takes
	// the slices started before its time less SliceMargin from it instead
	// of listing them, and lists the rest (sweep.WithInventory). Such a
	// mark is clean: Optimized is ignored for it.
	Inventory sweep.Inventory

	// ResumeExport is the ID of an export that Collect started and that was
	// interrupted (Report.ExportRunID): Collect continues it where it
	// stopped, and the cycle keeps its start time as the anchor of the
	// cutoff. Collect records where an export stands beside its files
	// (<prefix>/retention/gc/uncommitted/<run_id>/_lakegc_export.json);
	// a run without that record, of another namespace, or whose first
	// calls read copy records that this Host (Host.Copies, Repository)
	// does not, is refused (ErrNoExport). With Host.Copies, an export,
	// finished or not, that began the tracker's TTL or more ago is refused
	// (ErrStaleExport): the records of renames made during or after it
	// may be gone when its last call, or the mark, reads them (the mark
	// reads the copy records again, for the copies made after the
	// export). Empty: a new export.
	ResumeExport string
	// ResumeMark is the ID of a finished mark (Report.RunID): Collect
	// skips to the sweep of its candidates, and reads nothing of the host.
	// Set Sweep to delete them; without it, Collect reports the mark.
	// Resume only a recent mark, never one older than a later mark: an
	// object it marked may have become live again since (see sweep.Sweep).
	// With Sweep, Collect refuses (ErrSuperseded) a mark that a later mark
	// of the namespace superseded, unless SweepSuperseded is set.
	ResumeMark string
	// SweepSuperseded lets Sweep with ResumeMark (or SweepRun) delete the
	// candidates of a mark although a later mark of the namespace exists.
	// An object such a mark found garbage may have become live since (a
	// branch reset to an old commit, a copy of an old address): set it only
	// for a mark known to be still right.
	SweepSuperseded bool
}

// settings is a Config with its defaults applied.
type settings struct {
	Config
	minAge time.Duration
	ns     *nsaddr.Namespace
}

func (c Config) withDefaults() settings {
	s := settings{Config: c}
	if s.StoragePrefix == "" {
		s.StoragePrefix = DefaultStoragePrefix
	}
	if s.DataPrefix == "" {
		s.DataPrefix = DefaultDataPrefix
	}
	if s.LinkTTL == 0 && s.Signer != nil {
		s.LinkTTL = s.Signer.TTL()
	}
	if s.LinkTTL == 0 {
		s.LinkTTL = DefaultLinkTTL
	}
	if s.SliceInterval == 0 {
		s.SliceInterval = DefaultSliceInterval
	}
	if s.SliceMargin == 0 && s.SliceInterval > 0 {
		s.SliceMargin = s.SliceInterval + s.LinkTTL + sweep.DefaultClockSkew
	}
	s.minAge = s.MinAge
	if s.minAge == 0 {
		s.minAge = max(DefaultMinAge, s.LinkTTL)
	}
	if s.Clock == nil {
		s.Clock = time.Now
	}
	if s.ExportFileSize == 0 {
		s.ExportFileSize = DefaultExportFileSize
	}
	if s.MemoryBudget == 0 {
		s.MemoryBudget = DefaultMemoryBudget
	}
	return s
}

// Validate reports whether Collect can run with c, without any I/O: an
// error wrapping ErrInvalidInput names the first field that is wrong.
func (c Config) Validate() error {
	_, err := c.validated()
	return err
}

func (c Config) validated() (settings, error) {
	s := c.withDefaults()
	invalid := func(format string, args ...any) (settings, error) {
		return settings{}, fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	// nsaddr.New refuses what is not a URI, and "s3://" alone, which would
	// make every s3:// address the namespace's.
	ns, nsErr := nsaddr.New(s.Namespace, s.DataPrefix)
	switch {
	case s.Bucket == nil:
		return invalid("no Bucket")
	case nsErr != nil:
		return invalid("Namespace %q is not a URI such as s3://bucket/repo", s.Namespace)
	case s.KeepRuns < 0:
		return invalid("negative KeepRuns %d", s.KeepRuns)
	case s.LinkTTL < 0:
		return invalid("negative LinkTTL %v", s.LinkTTL)
	case s.MinAge < 0:
		return invalid("negative MinAge %v", s.MinAge)
	case s.minAge < s.LinkTTL:
		return invalid("MinAge %v below LinkTTL %v: an object uploaded to a signed address could be deleted before it is linked", s.minAge, s.LinkTTL)
	case s.Signer != nil && s.Signer.TTL() != s.LinkTTL:
		return invalid("LinkTTL %v differs from the Signer's TTL %v: the minimum age must cover the TTL links are verified with", s.LinkTTL, s.Signer.TTL())
	case s.SliceInterval < 0:
		return invalid("negative SliceInterval %v", s.SliceInterval)
	case s.SliceInterval >= s.minAge:
		return invalid("SliceInterval %v not below MinAge %v: new addresses would land in slices the mark lists, kept by their modification times alone", s.SliceInterval, s.minAge)
	case s.ExportFileSize < 0:
		return invalid("negative ExportFileSize %d", s.ExportFileSize)
	case s.MemoryBudget < minMemoryBudget:
		return invalid("MemoryBudget %d below %d bytes", s.MemoryBudget, minMemoryBudget)
	case s.CleanEvery < 0:
		return invalid("negative CleanEvery %d", s.CleanEvery)
	case s.SliceMargin < 0:
		return invalid("negative SliceMargin %v", s.SliceMargin)
	case s.ResumeExport != "" && s.ResumeMark != "":
		return invalid("both ResumeExport and ResumeMark: a resumed mark has no export")
	case s.ExtendedRules != nil && s.Rules == nil:
		return invalid("ExtendedRules without Rules: the rules come from Config or from the namespace's files, not from both")
	}
	if s.Rules != nil {
		if err := s.Rules.Validate(); err != nil {
			return invalid("Rules: %v", err)
		}
		if err := s.ExtendedRules.Validate(); err != nil {
			return invalid("ExtendedRules: %v", err)
		}
	}
	if err := validPrefixes(s.StoragePrefix, s.DataPrefix); err != nil {
		return settings{}, err
	}
	s.ns = ns
	// Before any I/O, not when the mark starts after the whole export.
	fixed := s.decided(nil, true, "")
	// The fields decide these, set or not.
	fixed.Mark = append(fixed.Mark, sweep.WithRecognizer(nil))
	fixed.Sweep = append(fixed.Sweep, sweep.WithBatchDeleter(nil), sweep.WithMover(nil))
	given := sweep.Options{Mark: s.MarkOptions, Sweep: s.SweepOptions}
	if err := sweep.CheckOptions(given, sweep.Options{}); err != nil {
		return settings{}, fmt.Errorf("%w: MarkOptions or SweepOptions: %w", ErrInvalidInput, err)
	}
	if err := sweep.CheckOptions(given, fixed); err != nil {
		return settings{}, fmt.Errorf("%w: MarkOptions or SweepOptions: a field of Config decides this; set the field instead: %w", ErrInvalidInput, err)
	}
	if err := sweep.CheckOptions(sweep.Options{Mark: []sweep.MarkOption{sweep.WithStoragePrefix(s.StoragePrefix), sweep.WithDataPrefix(s.DataPrefix),
		sweep.WithInclude(s.Include...), sweep.WithCanary(s.Canary)}}, sweep.Options{}); err != nil {
		return settings{}, fmt.Errorf("%w: Include or Canary: %w", ErrInvalidInput, err)
	}
	for _, id := range []struct{ field, id string }{{"ResumeExport", s.ResumeExport}, {"ResumeMark", s.ResumeMark}} {
		if id.id != "" && !validRunID(id.id) {
			return invalid("%s %q is not a run ID", id.field, id.id)
		}
	}
	return s, nil
}

// validPrefixes checks that both prefixes are folder names and that neither
// folder holds the other: the data folder is scanned for garbage and the
// storage folder never is.
func validPrefixes(storage, data string) error {
	for _, p := range []struct{ field, prefix string }{{"StoragePrefix", storage}, {"DataPrefix", data}} {
		if p.prefix != "" && !layout.ValidPrefix(p.prefix) {
			return fmt.Errorf("%w: %s %q must be a folder name without leading or trailing '/'", ErrInvalidInput, p.field, p.prefix)
		}
	}
	if layout.PrefixesOverlap(storage, data) {
		return fmt.Errorf("%w: DataPrefix %q and StoragePrefix %q overlap", ErrInvalidInput, data, storage)
	}
	return nil
}

// validRunID accepts the run IDs Collect makes and lakeFS's (xids, UUIDs):
// the module's one rule, layout.ValidRunID.
func validRunID(id string) bool { return layout.ValidRunID(id) }
