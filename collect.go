package lakegc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
)

// Collect runs one GC cycle of a repository, in the order its safety needs:
//
//  0. the namespace's identity: the bucket must hold a repository marker,
//     lakeFS's or lakegc's of this namespace (InitNamespace), before
//     anything is read or written (ErrNoNamespaceMarker,
//     ErrNamespaceMismatch), and every full address of every input is
//     judged by one rule as it is read (see the package documentation,
//     "Namespace identity");
//  1. the uncommitted export, to completion, with the copy records as its
//     trailer (read after every branch); its start, recorded before its
//     first call, anchors the cutoff;
//  2. the retention rules: Config.Rules, or else lakeFS's rules file and
//     lakegc's extended one read from the namespace; a repository without
//     rules keeps every commit, as lakeFS does, and the report and a WARN
//     log say so;
//  3. the active commits, read after the export (a commit made during it
//     holds objects the export may not have seen staged), and their
//     report, commits.csv;
//  4. the mark: the namespace listing minus the export's addresses (read
//     back through a reader that refuses a missing or unfinished export),
//     minus the addresses of the active commits, minus every object younger
//     than the cutoff;
//  5. the sweep, only with Config.Sweep.
//
// Collect makes the run IDs: Report.ExportRunID and Report.RunID. Without
// Config.Sweep it is a dry run: Report.Mark says how many objects a sweep
// deletes and where they are listed.
//
// Collect is safe to interrupt anywhere: a cancelled or failed phase stops
// the cycle before the next one, an export that did not finish is never
// read, and a mark that did not finish is never swept. Then run Collect
// again: a new cycle, or Config.ResumeExport with Report.ExportRunID to
// continue the export, or Config.ResumeMark with Report.RunID to sweep a
// finished mark. The error names the phase that stopped; the report holds
// what was done until then.
//
// cfg and host are checked before any I/O: an error wrapping
// ErrInvalidInput, with no report, says what is wrong.
func Collect(ctx context.Context, host Host, cfg Config) (*Report, error) {
	s, err := cfg.validated()
	if err != nil {
		return nil, err
	}
	if s.ResumeMark == "" {
		if err := host.validate(s); err != nil {
			return nil, err
		}
	}
	c := &cycle{cfg: s, host: host, report: &Report{DryRun: !s.Sweep}, ns: s.ns}
	return c.report, c.withLease(ctx, c.runAndPrune)
}

func (h Host) validate(s settings) error {
	switch {
	case h.Staging == nil && h.Export == nil:
		return fmt.Errorf("%w: Host without Staging or Export", ErrInvalidInput)
	case h.Staging != nil && h.Export != nil:
		return fmt.Errorf("%w: Host with both Staging and Export: which export protects the staged objects?", ErrInvalidInput)
	case h.Commits == nil && h.Active == nil:
		return fmt.Errorf("%w: Host without Commits or Active", ErrInvalidInput)
	case h.Commits != nil && h.Active != nil:
		return fmt.Errorf("%w: Host with both Commits and Active: which decides the kept commits?", ErrInvalidInput)
	case h.Committed == nil:
		return fmt.Errorf("%w: Host without Committed", ErrInvalidInput)
	case h.Active != nil && s.Rules != nil:
		return fmt.Errorf("%w: Config.Rules with a Host's own Active, which applies its own rules", ErrInvalidInput)
	case h.Export != nil && h.Copies != nil:
		return fmt.Errorf("%w: Host with Export and Copies: a host's own export must add its copy records itself", ErrInvalidInput)
	case h.Export != nil && s.ResumeExport != "":
		return fmt.Errorf("%w: ResumeExport with a Host's own Export, which Collect cannot resume", ErrInvalidInput)
	case h.Copies != nil && s.Repository == "":
		return fmt.Errorf("%w: no Repository, needed to read the Host's copy records", ErrInvalidInput)
	}
	return nil
}

// cycle is one run of Collect.
type cycle struct {
	cfg    settings
	host   Host
	report *Report

	export exportState // the export, once done
	// exported are the addresses of a host's own export (Host.Export).
	exported iter.Seq2[string, error]
	rules    *retention.Rules    // nil: keep every commit
	ext      *retention.Extended // nil: lakeFS's rules alone
	active   []retention.ActiveCommit

	ns      *nsaddr.Namespace // Config.Namespace, parsed
	foreign foreign           // full addresses outside the namespace
}

func (c *cycle) run(ctx context.Context) error {
	if err := c.checkMarker(ctx); err != nil {
		return err
	}
	if c.cfg.ResumeMark != "" {
		c.report.RunID = c.cfg.ResumeMark
		if err := c.resumeMark(ctx); err != nil {
			return err
		}
	} else {
		phases := []func(context.Context) error{c.runExport, c.readRules, c.activeCommits, c.mark}
		if c.host.Export != nil {
			phases[0] = c.hostExport
		}
		if c.host.Active != nil {
			phases = []func(context.Context) error{phases[0], c.hostActive, c.mark}
		}
		for _, phase := range phases {
			if err := phase(ctx); err != nil {
				return err
			}
		}
	}
	if !c.cfg.Sweep {
		return nil
	}
	return c.sweep(ctx)
}

// phase logs the start of a phase and returns a function that logs its end
// and returns its duration.
func (c *cycle) phase(ctx context.Context, name string) (done func(args ...any) time.Duration) {
	start := c.cfg.Clock()
	c.log(ctx, "lakegc: "+name+" started")
	return func(args ...any) time.Duration {
		d := c.cfg.Clock().Sub(start)
		c.log(ctx, "lakegc: "+name+" done", append(args, "duration", d)...)
		return d
	}
}

func (c *cycle) log(ctx context.Context, msg string, args ...any) {
	if c.cfg.Logger != nil {
		c.cfg.Logger.InfoContext(ctx, msg, append([]any{"export_run_id", c.report.ExportRunID, "run_id", c.report.RunID}, args...)...)
	}
}

func (c *cycle) progress(p Progress) {
	if c.cfg.Progress != nil {
		p.ExportRunID, p.RunID = c.report.ExportRunID, c.report.RunID
		c.cfg.Progress(p)
	}
}

// readRules reads the repository's rules: Config.Rules, or lakeFS's rules
// file and lakegc's extended one. A repository without rules keeps every
// commit, as lakeFS does: its prepare-commits step refuses to run, and its
// GC client then expires nothing. The cycle says so in its report and logs
// it at WARN: a host that forgot its rules keeps everything, not silently.
func (c *cycle) readRules(ctx context.Context) error {
	done := c.phase(ctx, PhaseRules)
	c.progress(Progress{Phase: PhaseRules})
	rep := &RulesReport{Source: RulesFromConfig}
	c.report.Rules = rep
	if c.cfg.Rules != nil {
		c.rules, c.ext = c.cfg.Rules, c.cfg.ExtendedRules
		if c.rules.DefaultRetentionDays == 0 && len(c.rules.BranchRetentionDays) == 0 {
			c.rules = nil // the zero rules are no rules
		}
	} else {
		rep.Source = RulesFromFiles
		rep.Key = layout.RulesKey(c.cfg.StoragePrefix) // where retention.RulesStore reads them
		store := retention.NewRulesStore(c.cfg.Bucket, retention.WithStoragePrefix(c.cfg.StoragePrefix))
		rules, err := store.Get(ctx)
		switch {
		case err == nil:
			c.rules = rules
		case errors.Is(err, retention.ErrNotFound): // missing, or the zero rules
		default:
			return fmt.Errorf("lakegc: rules: %w", err)
		}
		ext := retention.NewExtendedStore(c.cfg.Bucket, retention.WithStoragePrefix(c.cfg.StoragePrefix))
		rep.ExtendedKey = ext.Key()
		c.ext, err = ext.Get(ctx)
		if err != nil && !errors.Is(err, retention.ErrNotFound) {
			// A file that does not decode fails the cycle: guessing what
			// it meant could delete what it keeps.
			return fmt.Errorf("lakegc: rules: %w", err)
		}
	}
	if c.rules == nil {
		c.ext = nil
		rep.Applied = "none: every commit kept"
		rep.Warning = "no retention rules (neither Config.Rules nor " + layout.RulesKey(c.cfg.StoragePrefix) + "): every commit is kept, as lakeFS does; set rules to collect expired commits"
		if c.cfg.Logger != nil {
			c.cfg.Logger.WarnContext(ctx, "lakegc: "+rep.Warning, "export_run_id", c.report.ExportRunID)
		}
	} else {
		rep.Found, rep.Rules = true, c.rules
		if !c.ext.IsZero() {
			rep.Extended = c.ext
		}
		rep.Applied = describeRules(c.rules, c.ext)
		if _, ok := c.host.Commits.(retention.Tags); c.ext != nil && c.ext.KeepTags && !ok {
			// Not silent: the rules say tags are kept, and none are known.
			rep.Applied += " (but Host.Commits is not retention.Tags: no tag known, none kept)"
		}
	}
	rep.Duration = done("found", rep.Found, "applied", rep.Applied)
	return nil
}

// describeRules says in one line which rules a cycle applies.
func describeRules(r *retention.Rules, ext *retention.Extended) string {
	s := fmt.Sprintf("lakeFS's: %d days by default", r.DefaultRetentionDays)
	for _, b := range slices.Sorted(maps.Keys(r.BranchRetentionDays)) {
		s += fmt.Sprintf(", %q %d days", b, r.BranchRetentionDays[b])
	}
	if !ext.IsZero() {
		s += "; lakegc's: " + ext.String()
	}
	return s
}

// keepAll are rules that keep every commit: every commit is newer than a
// threshold of 2^31-1 days (about 5.9 million years) ago, so every step of
// every walk keeps the next commit.
var keepAll = &retention.Rules{DefaultRetentionDays: 1<<31 - 1}

// activeCommits computes the commits the rules keep and writes their
// report. It runs after the export.
func (c *cycle) activeCommits(ctx context.Context) error {
	done := c.phase(ctx, PhaseCommits)
	now := c.cfg.Clock()
	c.report.RunID = retention.NewRunID(now)
	c.progress(Progress{Phase: PhaseCommits})
	rules := c.rules
	if rules == nil {
		rules = keepAll
	}
	var err error
	// A host's Commits that is also retention.Tags or
	// retention.DefaultBranch gives the extended rules its tags and its
	// default branch.
	c.active, err = retention.ActiveCommitsExtended(ctx, c.host.Commits.Heads(ctx), c.host.Commits, rules, c.ext, now)
	if err != nil {
		return fmt.Errorf("lakegc: active commits: %w", err)
	}
	return c.commitsReport(ctx, done, "")
}

// commitsReport writes the active commits' report, unless the host wrote
// one at key, and reports it.
func (c *cycle) commitsReport(ctx context.Context, done func(...any) time.Duration, key string) error {
	rep := &CommitsReport{Active: len(c.active), Key: key}
	c.report.Commits = rep
	var err error
	if rep.Key == "" {
		rep.Key, err = retention.WriteCommitsCSV(ctx, c.cfg.Bucket, c.cfg.StoragePrefix, c.report.RunID, c.active)
		if err != nil {
			return fmt.Errorf("lakegc: commits report: %w", err)
		}
	}
	if rep.Bytes, err = folderSize(ctx, c.cfg.Bucket, rep.Key); err != nil {
		return fmt.Errorf("lakegc: commits report: %w", err)
	}
	rep.Duration = done("active", rep.Active)
	return nil
}

// hostActive asks the host for the kept commits (Host.Active). It runs
// after the export, as activeCommits does.
func (c *cycle) hostActive(ctx context.Context) error {
	done := c.phase(ctx, PhaseCommits)
	now := c.cfg.Clock()
	c.progress(Progress{Phase: PhaseCommits})
	hc, err := c.host.Active.ActiveCommits(ctx, now)
	if err == nil {
		err = ctx.Err()
	}
	switch {
	case err != nil:
	case hc == nil || len(hc.Active) == 0:
		err = errors.New("the host kept no commit")
	case hc.RunID != "" && !validRunID(hc.RunID):
		err = fmt.Errorf("the host's run ID %q is not a run ID", hc.RunID)
	case hc.Key != "" && (strings.HasPrefix(hc.Key, "/") || nsaddr.IsFull(hc.Key)):
		err = fmt.Errorf("the host's commits report %q is not a key relative to the namespace", hc.Key)
	}
	if err != nil {
		return fmt.Errorf("lakegc: active commits: %w", err)
	}
	c.report.RunID = hc.RunID
	if c.report.RunID == "" {
		c.report.RunID = retention.NewRunID(now)
	}
	c.active = hc.Active
	return c.commitsReport(ctx, done, hc.Key)
}

// reportFolder is the folder of a mark's report.
func (c *cycle) reportFolder() string {
	return layout.RunPath(c.cfg.StoragePrefix, layout.Report, c.report.RunID)
}

// decided returns the options of Mark and Sweep that the Config decides,
// given after its MarkOptions and SweepOptions (which Validate keeps from
// setting the same); progress receives the counters. Only an optimized
// mark takes a previous run and CleanEvery, and SliceMargin with an
// inventory too.
func (s settings) decided(progress func(sweep.Progress), optimized bool, previous string) sweep.Options {
	shared := []sweep.Option{
		sweep.WithStoragePrefix(s.StoragePrefix),
		sweep.WithDataPrefix(s.DataPrefix),
		sweep.WithClock(s.Clock),
		sweep.WithLogger(s.Logger),
		sweep.WithProgress(progress),
		sweep.WithInclude(s.Include...),
	}
	if s.Recognize != nil {
		shared = append(shared, sweep.WithRecognizer(s.Recognize))
	}
	for _, cl := range s.classifiers() {
		shared = append(shared, sweep.WithErrorClassifier(cl))
	}
	var o sweep.Options
	for _, opt := range shared {
		o.Mark = append(o.Mark, opt)
		o.Sweep = append(o.Sweep, opt)
	}
	o.Mark = append(o.Mark,
		sweep.WithLinkTTL(s.LinkTTL),
		sweep.WithMinAge(s.minAge),
		sweep.WithMemoryBudget(s.MemoryBudget),
		sweep.WithTempDir(s.TempDir),
		sweep.WithCanary(s.Canary),
		sweep.WithPrevious(previous), // "": clean
		sweep.WithInventory(s.Inventory),
	)
	if optimized {
		o.Mark = append(o.Mark, sweep.WithCleanEvery(s.CleanEvery), sweep.WithSliceMargin(s.SliceMargin))
	} else if s.Inventory != nil {
		o.Mark = append(o.Mark, sweep.WithSliceMargin(s.SliceMargin))
	}
	if s.BatchDeleter != nil {
		o.Sweep = append(o.Sweep, sweep.WithBatchDeleter(s.BatchDeleter))
	}
	return o
}

// progressTo returns a sweep progress function that keeps the counters in
// counters and reports them as phase.
func (c *cycle) progressTo(counters *sweep.Progress, phase string) func(sweep.Progress) {
	return func(p sweep.Progress) {
		*counters = p
		c.progress(Progress{Phase: phase, Counters: p})
	}
}

// classifiers are the classifiers of the bucket's errors: the Config's,
// then the BatchDeleter's.
func (s settings) classifiers() []sweep.ErrorClassifier {
	cs := slices.Clip(s.ErrorClassifiers)
	if cl, ok := s.BatchDeleter.(sweep.ErrorClassifier); ok {
		cs = append(cs, cl)
	}
	return cs
}

// mark marks the garbage: the export's addresses are read, and the active
// commits' (after them, or beside them when the host gives parts), and
// nothing newer than the export's start minus the minimum age is a
// candidate.
func (c *cycle) mark(ctx context.Context) error {
	done := c.phase(ctx, PhaseMark)
	c.progress(Progress{Phase: PhaseMark})
	var counters sweep.Progress
	var prev string
	if c.cfg.Optimized {
		var err error
		prev, err = sweep.LatestRun(ctx, c.cfg.Bucket, c.cfg.StoragePrefix, c.cfg.classifiers()...)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("lakegc: mark: %w", err)
			}
			// Unsure which run is the latest: a clean run.
			c.log(ctx, "lakegc: no previous run for an optimized mark", "error", err)
			prev = ""
		}
	}
	opts := c.cfg.decided(c.progressTo(&counters, PhaseMark), c.cfg.Optimized, prev)
	in, err := c.committedInputs(ctx, prev)
	if err != nil {
		return fmt.Errorf("lakegc: mark: %w", err)
	}
	in.Uncommitted, in.ExportStart = c.keptUncommitted(ctx), c.export.Start
	sum, err := sweep.Mark(ctx, c.cfg.Bucket, c.report.RunID, in, append(slices.Clip(c.cfg.MarkOptions), opts.Mark...)...)
	if err != nil {
		return mismatch(fmt.Errorf("lakegc: mark: %w", err))
	}
	rep := &MarkReport{
		Summary:           sum,
		Report:            c.reportFolder(),
		Listed:            counters.Listed,
		Kept:              counters.Kept,
		Marked:            counters.Marked,
		Foreign:           c.foreign.count,
		ForeignSample:     c.foreign.sample,
		Recognized:        counters.Listed - counters.Unrecognized,
		Unrecognized:      sum.NumUnrecognizedObjects,
		UnrecognizedBytes: sum.UnrecognizedBytes,
		Walled:            sum.NumWalledObjects,
	}
	c.report.Mark = rep
	if rep.Bytes, err = candidatesSize(ctx, c.cfg.Bucket, rep.Report, sum); err != nil {
		return fmt.Errorf("lakegc: mark: %w", err)
	}
	rep.Duration = done("candidates", sum.NumDeletedObjects, "cutoff", sum.CutoffTime)
	return nil
}

// committedInputs is the mark's committed input: the host's parts
// (CommittedParts) if it gives them, else its addresses, with, from a
// CommittedChanges host, its changes since prev, checked and made keys as
// its addresses are (see CommittedChanges).
func (c *cycle) committedInputs(ctx context.Context, prev string) (sweep.Inputs, error) {
	if cp, ok := c.host.Committed.(CommittedParts); ok {
		parts, err := c.committedParts(ctx, cp)
		return sweep.Inputs{Parts: parts}, err
	}
	in := sweep.Inputs{Committed: c.relativeAddresses(ctx, "committed", c.host.Committed.CommittedAddresses(ctx, c.active))}
	if ch, ok := c.host.Committed.(CommittedChanges); ok {
		changes, err := ch.CommittedChanges(ctx, prev, c.report.RunID, c.active)
		switch {
		case err != nil:
			return sweep.Inputs{}, fmt.Errorf("committed changes: %w", err)
		case changes == nil:
		case changes.Since != prev || prev == "":
			return sweep.Inputs{}, fmt.Errorf("%w: committed changes since %q, asked since %q", ErrInvalidInput, changes.Since, prev)
		case changes.Added == nil || changes.Removed == nil:
			return sweep.Inputs{}, fmt.Errorf("%w: committed changes with a nil sequence", ErrInvalidInput)
		default:
			// Each address becomes the keys Committed's would (the same
			// function): Mark counts every key each time it comes, so
			// a key several addresses hold (a relative and a full one,
			// two spellings the namespace cleans alike) falls to 0
			// only when the last of them is removed.
			in.Changes = &sweep.Changes{Since: prev,
				Added:   c.relativeAddresses(ctx, "committed added", changes.Added),
				Removed: c.relativeAddresses(ctx, "committed removed", changes.Removed)}
		}
	}
	return in, nil
}

// uncommittedAddresses yields the addresses of the finished export: the
// host's own, or Collect's read back from the bucket.
func (c *cycle) uncommittedAddresses(ctx context.Context) iter.Seq2[string, error] {
	if c.host.Export != nil {
		return c.exported
	}
	return exportedAddresses(ctx, c.cfg.Bucket, c.cfg.StoragePrefix, c.report.ExportRunID, c.export.Done)
}

// keptUncommitted is the mark's uncommitted input: the export's addresses,
// then, with Host.Copies, the copy records read again. A copy made after the
// export read the records is in neither the export nor, when only an
// expired commit held its object, the active commits; its record, younger
// than the tracker's TTL, is still there now.
func (c *cycle) keptUncommitted(ctx context.Context) iter.Seq2[string, error] {
	exported := c.uncommittedAddresses(ctx)
	if c.host.Copies == nil {
		return exported
	}
	copies := c.relativeAddresses(ctx, "copy record", c.host.Copies.Addresses(ctx, c.cfg.Repository))
	return func(yield func(string, error) bool) {
		for _, seq := range []iter.Seq2[string, error]{exported, copies} {
			for a, err := range seq {
				if !yield(a, err) || err != nil {
					return
				}
			}
		}
	}
}

// resumeMark reads the summary of a finished mark, to sweep it.
func (c *cycle) resumeMark(ctx context.Context) error {
	done := c.phase(ctx, PhaseMark)
	c.progress(Progress{Phase: PhaseMark})
	sum, err := sweep.ReadSummary(ctx, c.cfg.Bucket, c.cfg.StoragePrefix, c.report.RunID, c.cfg.classifiers()...)
	if err != nil {
		return fmt.Errorf("lakegc: resume mark %s: %w", c.report.RunID, err)
	}
	if !sum.Success {
		return fmt.Errorf("lakegc: resume mark %s: %w", c.report.RunID, sweep.ErrRunFailed)
	}
	if c.cfg.Sweep && !c.cfg.SweepSuperseded {
		if err := checkNotSuperseded(ctx, c.cfg.Bucket, c.cfg.StoragePrefix, c.report.RunID, sum); err != nil {
			return fmt.Errorf("lakegc: resume mark %s: %w", c.report.RunID, err)
		}
	}
	rep := &MarkReport{Summary: sum, Report: c.reportFolder()}
	c.report.Mark = rep
	if rep.Bytes, err = candidatesSize(ctx, c.cfg.Bucket, rep.Report, sum); err != nil {
		return fmt.Errorf("lakegc: resume mark %s: %w", c.report.RunID, err)
	}
	rep.Duration = done("candidates", sum.NumDeletedObjects)
	return nil
}

// sweep deletes the candidates of the mark.
func (c *cycle) sweep(ctx context.Context) error {
	done := c.phase(ctx, PhaseSweep)
	c.progress(Progress{Phase: PhaseSweep})
	var counters sweep.Progress
	opts := c.cfg.decided(c.progressTo(&counters, PhaseSweep), false, "")
	sweepOpts := append(slices.Clip(c.cfg.SweepOptions), opts.Sweep...)
	if c.cfg.Quarantine {
		sweepOpts = append(sweepOpts, sweep.WithMover(quarantine.Mover{}))
	}
	res, err := sweep.Sweep(ctx, c.cfg.Bucket, c.report.RunID, sweepOpts...)
	if err != nil {
		return fmt.Errorf("lakegc: sweep: %w", err)
	}
	c.report.Sweep = &SweepReport{
		Deleted:     res.Deleted,
		AlreadyGone: res.AlreadyGone,
		Failed:      res.Failed,
		Refused:     res.Refused,
		Report:      c.reportFolder(),
		Quarantine:  res.Quarantine,
	}
	c.report.Sweep.Duration = done("deleted", res.Deleted, "failed", res.Failed, "refused", res.Refused)
	return nil
}

// candidatesSize returns the size of the candidates' files of the mark
// whose report folder is report: the summary's CandidatesBytes, the one
// file Mark wrote under deleted/ (it removed what a failed run of the same
// ID left there), or, in a summary without it (lakeFS's client's, an older
// Mark's), the size of what deleted/ holds.
func candidatesSize(ctx context.Context, bucket *blob.Bucket, report string, sum *sweep.Summary) (int64, error) {
	if sum.CandidatesBytes > 0 {
		return sum.CandidatesBytes, nil
	}
	return folderSize(ctx, bucket, report+layout.DeletedFolder)
}

// folderSize returns the total size of the objects under prefix (or of the
// one object named prefix).
func folderSize(ctx context.Context, bucket *blob.Bucket, prefix string) (int64, error) {
	var n int64
	it := bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n += obj.Size
	}
}
