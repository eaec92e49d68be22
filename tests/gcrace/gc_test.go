package gcrace

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

const storagePrefix = "_lakefs"

// wiring is how a GC cycle is put together. The zero value is the correct
// flow; every flag breaks it the way a host could get it wrong, for the
// mutation tests.
type wiring struct {
	noTrailer         bool // export without copytrack's Addresses as the trailer
	cutoffAtMark      bool // ExportStart = Mark's start instead of the export's
	startAfterPrepare bool // ExportStart taken after each Prepare call returned
	committedFirst    bool // list active commits before the export instead of after
	skipMain          bool // the export's Source skips branch "main"
	ignoreBranchDays  bool // retention without the per-branch rules
	unsafeMinAge      bool // MinAge 1h with WithUnsafeMinAge
	keepAllCommits    bool // every commit's addresses as Committed, expired ones too
	lostDeletes       bool // a BatchDeleter that reports success and deletes nothing
}

// lostDeleter is the lostDeletes mutation: a deleter that claims success
// (as a misconfigured S3 adapter could) without deleting.
type lostDeleter struct{}

func (lostDeleter) DeleteBatch(context.Context, []string) (map[string]error, error) { return nil, nil }

// hook runs a few writer steps with probability p: the GC yields control to
// the writers. where names the point of the cycle, for the schedule.
func (w *world) hook(where string, p float64) {
	w.mu.Lock()
	run := w.rng.Float64() < p
	n := 1 + w.rng.IntN(3)
	prev := w.inGC
	w.inGC = where
	w.mu.Unlock()
	if run {
		for range n {
			w.writerStep()
		}
	}
	w.mu.Lock()
	w.inGC = prev
	w.mu.Unlock()
}

// source is the staging area as the export sees it: read live, one entry
// at a time, with writers running between entries and between branches.
type source struct {
	w    *world
	skip string
}

func (s source) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		last, first := from, true
		for {
			s.w.hook("export: before next branch", 0.5)
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			s.w.mu.Lock()
			next := ""
			for _, n := range s.w.branchNames() {
				if n == s.skip {
					continue
				}
				if (first && n >= last) || (!first && n > last) {
					next = n
					break
				}
			}
			s.w.mu.Unlock()
			if next == "" {
				return
			}
			if !yield(next, nil) {
				return
			}
			last, first = next, false
		}
	}
}

func (s source) Uncommitted(ctx context.Context, bn, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		last, first := from, true
		for {
			s.w.mu.Lock()
			s.w.focus = bn
			s.w.mu.Unlock()
			s.w.hook("export: scanning "+bn, 0.4)
			s.w.mu.Lock()
			s.w.focus = ""
			s.w.mu.Unlock()
			if err := ctx.Err(); err != nil {
				yield(uncommitted.Entry{}, err)
				return
			}
			s.w.mu.Lock()
			b := s.w.branches[bn]
			if b == nil {
				s.w.mu.Unlock()
				yield(uncommitted.Entry{}, fmt.Errorf("branch %q: %w", bn, uncommitted.ErrBranchNotFound))
				return
			}
			next := ""
			for p := range b.staging {
				if ((first && p >= last) || (!first && p > last)) && (next == "" || p < next) {
					next = p
				}
			}
			e := b.staging[next]
			s.w.mu.Unlock()
			if next == "" {
				return
			}
			ue := uncommitted.Entry{Key: next, PhysicalAddress: e.physical(),
				CreationDate: e.staged, Tombstone: e.tomb}
			if e.full {
				ue.AddressType = uncommitted.Full
			}
			if !yield(ue, nil) {
				return
			}
			last, first = next, false
		}
	}
}

// commitSource is retention's view of the commits: List is a snapshot, Get
// reads live (for commits made while the GC runs).
type commitSource struct{ w *world }

func toCommit(c *commit) retention.Commit {
	return retention.Commit{ID: c.id, Parents: append([]string(nil), c.parents...),
		CreationDate: c.date, MetaRangeID: c.metaRange, Version: c.version}
}

func (cs commitSource) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return func(yield func(retention.Commit, error) bool) {
		cs.w.mu.Lock()
		list := make([]retention.Commit, 0, len(cs.w.commits))
		for _, c := range cs.w.commits {
			list = append(list, toCommit(c))
		}
		cs.w.mu.Unlock()
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
		for _, c := range list {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (cs commitSource) Get(ctx context.Context, id string) (retention.Commit, error) {
	cs.w.mu.Lock()
	defer cs.w.mu.Unlock()
	c := cs.w.commits[id]
	if c == nil {
		return retention.Commit{}, fmt.Errorf("commit %q not found", id)
	}
	return toCommit(c), nil
}

// branchHeads is retention's view of the branches: live, with writers
// running between branches.
func (w *world) branchHeads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	return func(yield func(retention.Branch, error) bool) {
		last := ""
		for {
			w.hook("retention: before next branch", 0.3)
			w.mu.Lock()
			var br retention.Branch
			for _, n := range w.branchNames() {
				if n > last {
					br = retention.Branch{ID: n, CommitID: w.branches[n].head}
					break
				}
			}
			w.mu.Unlock()
			if br.ID == "" || !yield(br, nil) {
				return
			}
			last = br.ID
		}
	}
}

// activeCommits computes the active commits and returns the iterator of
// their (relative) addresses, which Mark consumes after the uncommitted
// rows, with writers running in between.
func (w *world) activeCommits(ctx context.Context, wire wiring) (iter.Seq2[string, error], []retention.ActiveCommit, error) {
	rules := w.rules
	if wire.ignoreBranchDays {
		rules = retention.Rules{DefaultRetentionDays: w.rules.DefaultRetentionDays}
	}
	active, err := retention.ActiveCommits(ctx, w.branchHeads(ctx), commitSource{w}, &rules, w.clock.Now())
	noRules := errors.Is(err, retention.ErrNotFound) // 0 days, no branch rules: keep every commit, as lakeFS does
	if err != nil && !noRules {
		return nil, nil, fmt.Errorf("ActiveCommits: %w", err)
	}
	if wire.keepAllCommits || noRules {
		w.mu.Lock()
		active = active[:0]
		for id, c := range w.commits {
			active = append(active, retention.ActiveCommit{CommitID: id, MetaRangeID: c.metaRange})
		}
		w.mu.Unlock()
		sort.Slice(active, func(i, j int) bool { return active[i].CommitID < active[j].CommitID })
	}
	committed := func(yield func(string, error) bool) {
		for i, ac := range active {
			if i%4 == 0 {
				w.hook("Mark: reading committed", 0.3)
			}
			w.mu.Lock()
			c := w.commits[ac.CommitID]
			var addrs []string
			if c != nil {
				for _, e := range c.tree {
					if !e.external {
						addrs = append(addrs, e.addr)
					}
				}
			}
			w.mu.Unlock()
			if c == nil {
				yield("", fmt.Errorf("active commit %q unknown", ac.CommitID))
				return
			}
			for _, a := range addrs {
				if !yield(a, nil) {
					return
				}
			}
		}
	}
	return committed, active, nil
}

// cycleReport is what one GC cycle did, for the checks.
type cycleReport struct {
	exportStart, markStart time.Time
	givenStart             time.Time     // the ExportStart the mark was given
	givenMinAge            time.Duration // and its MinAge
	summary                *sweep.Summary
	swept                  *sweep.Result
	prepareCalls           int
}

// gcCycle runs one full GC cycle with writers interleaved at every step.
func (w *world) gcCycle(ctx context.Context, wire wiring, tempDir string) (*cycleReport, error) {
	rep := &cycleReport{}
	if _, err := w.track.Expire(ctx, repoID); err != nil {
		return nil, fmt.Errorf("Expire: %w", err)
	}

	var committed iter.Seq2[string, error]
	var active []retention.ActiveCommit
	var err error
	if wire.committedFirst {
		if committed, active, err = w.activeCommits(ctx, wire); err != nil {
			return nil, err
		}
	}

	// 1. The uncommitted export, resumed from its mark until complete.
	w.mu.Lock()
	maxFile := int64(64 << w.rng.IntN(8))
	budget := time.Duration(1+w.rng.IntN(4)) * 30 * time.Minute
	w.mu.Unlock()
	opts := []uncommitted.Option{
		uncommitted.WithClock(w.clock.Now),
		uncommitted.WithMaxFileSize(maxFile),
		uncommitted.WithPrepareDuration(budget),
	}
	if !wire.noTrailer {
		opts = append(opts, uncommitted.WithTrailer(func(ctx context.Context) iter.Seq2[string, error] {
			return func(yield func(string, error) bool) {
				for a, err := range w.track.Addresses(ctx, repoID) {
					if !yield(a, err) || err != nil {
						return
					}
					w.hook("export: reading copy records", 0.2)
				}
			}
		}))
	}
	prep := must(uncommitted.NewPreparer(w.bucket, opts...))
	src := source{w: w}
	if wire.skipMain {
		src.skip = "main"
	}
	repo := uncommitted.Repository{ID: repoID, StorageNamespace: namespace}
	rep.exportStart = w.clock.Now()
	var mark *uncommitted.Checkpoint
	var runID string
	for {
		res, err := prep.Prepare(ctx, repo, src, mark)
		if err != nil {
			return nil, fmt.Errorf("Prepare #%d: %w", rep.prepareCalls+1, err)
		}
		rep.prepareCalls++
		if wire.startAfterPrepare {
			rep.exportStart = w.clock.Now()
		}
		runID = res.RunID
		if res.Checkpoint == nil {
			break
		}
		if rep.prepareCalls > 10000 {
			return nil, errors.New("Prepare makes no progress")
		}
		mark = res.Checkpoint
		w.hook("export: between Prepare calls", 0.5)
	}
	w.hook("after the export", 0.5)

	// 2. The committed side, after the export finished.
	if !wire.committedFirst {
		if committed, active, err = w.activeCommits(ctx, wire); err != nil {
			return nil, err
		}
	}
	gcRun := retention.NewRunID(w.clock.Now())
	if _, err := retention.WriteCommitsCSV(ctx, w.bucket, storagePrefix, gcRun, active); err != nil {
		return nil, fmt.Errorf("WriteCommitsCSV: %w", err)
	}
	w.hook("before Mark", 0.5)

	// 3. Mark, with writers running while it lists the namespace.
	rep.markStart = w.clock.Now()
	in := sweep.Inputs{
		Uncommitted: uncommitted.Addresses(ctx, w.bucket, storagePrefix, runID),
		Committed:   committed,
		ExportStart: rep.exportStart,
	}
	if wire.cutoffAtMark {
		in.ExportStart = rep.markStart
	}
	rep.givenStart = in.ExportStart
	w.mu.Lock()
	memBudget := int64(16<<10) << w.rng.IntN(6)
	w.mu.Unlock()
	sopts := []sweep.MarkOption{
		sweep.WithClock(w.clock.Now),
		sweep.WithMinAge(minAge),
		sweep.WithLinkTTL(linkTTL),
		sweep.WithTempDir(tempDir),
		sweep.WithListConcurrency(1),
		sweep.WithMemoryBudget(memBudget),
	}
	swopts := []sweep.SweepOption{sweep.WithClock(w.clock.Now), sweep.WithDeleteConcurrency(1)}
	rep.givenMinAge = minAge
	if wire.unsafeMinAge {
		sopts = append(sopts, sweep.WithMinAge(time.Hour), sweep.WithUnsafeMinAge())
		rep.givenMinAge = time.Hour
	}
	// With runConfig.optimized, two cycles in three start from the latest
	// run (an optimized run, unless that run cannot be used); the others
	// are clean.
	if w.optRNG != nil && w.optRNG.IntN(3) != 0 {
		cleanEvery := 1 + w.optRNG.IntN(8)
		prev, err := sweep.LatestRun(ctx, w.bucket, storagePrefix)
		if err != nil {
			return nil, fmt.Errorf("LatestRun: %w", err)
		}
		sopts = append(sopts, sweep.WithPrevious(prev), sweep.WithCleanEvery(cleanEvery),
			sweep.WithSliceMargin(w.interval+linkTTL+clockSkew))
	}
	w.sim.setHooks(func(prefix string) {
		if strings.HasPrefix(prefix, "data/") || prefix == "" {
			w.hook("Mark: listing "+prefix, 0.15)
		}
	}, nil)
	rep.summary, err = sweep.Mark(ctx, w.bucket, gcRun, in, sopts...)
	w.sim.setHooks(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("Mark: %w", err)
	}
	if rep.summary.RunKind == sweep.RunOptimized {
		w.mu.Lock()
		w.optimized++
		w.skipped += rep.summary.SlicesSkipped
		w.mu.Unlock()
	}
	w.hook("between Mark and Sweep", 0.5)

	// 4. Sweep; the bucket checks every delete against the oracle, with
	// writers running between deletes.
	w.sim.setHooks(nil, func(key string) error {
		w.hook("Sweep: between deletes", 0.2)
		return w.checkDelete(key, "Sweep")
	})
	if wire.lostDeletes {
		swopts = append(swopts, sweep.WithBatchDeleter(lostDeleter{}))
	}
	rep.swept, err = sweep.Sweep(ctx, w.bucket, gcRun, swopts...)
	w.sim.setHooks(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("Sweep: %w", err)
	}
	// Mark's spill files are gone once it returns.
	if left, err := os.ReadDir(tempDir); err != nil || len(left) > 0 {
		w.mu.Lock()
		w.violate("temp dir after the cycle: %d entries left (%v)", len(left), err)
		w.mu.Unlock()
	}
	return rep, nil
}

// checkCycle checks the invariants after a cycle: nothing reachable was
// deleted (the delete hook recorded every violation), every reachable
// object still exists, and garbage unreachable since before the cutoff is
// gone.
func (w *world) checkCycle(rep *cycleReport) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	if !rep.summary.Success {
		w.violate("Mark reported success:false")
	}
	if s := rep.swept; s.Failed != 0 || s.Refused != 0 {
		w.violate("Sweep: %+v", *s)
	}
	if s := rep.swept; s.Deleted+s.AlreadyGone != rep.summary.NumDeletedObjects {
		w.violate("Sweep deleted %d+%d of %d candidates", s.Deleted, s.AlreadyGone, rep.summary.NumDeletedObjects)
	}
	for addr, why := range w.reachable(now) {
		if _, ours := w.objects[addr]; ours && !w.sim.exists(addr) {
			w.violate("reachable object %s (%s) is missing", addr, why)
		}
	}
	// The cutoff is at most the export's start minus MinAge and the skew;
	// the GC may round it down to whole seconds, hence the margin.
	expected := rep.exportStart.Add(-minAge - clockSkew - sweep.StagingMargin)
	cutoff := rep.summary.CutoffTime
	if cutoff.Before(expected.Add(-2 * time.Second)) {
		w.violate("cutoff %s is earlier than export start - MinAge - skew = %s", cutoff, expected)
	}
	// The mark anchors its cutoff at the start it was given, never later:
	// in the right wiring that is the export's, so there the cutoff is at
	// most expected and the liveness margin below is the cutoff's own.
	if given := rep.givenStart.Add(-rep.givenMinAge - clockSkew - sweep.StagingMargin); cutoff.After(given) {
		w.violate("cutoff %s is later than the given export start - the given MinAge - skew = %s", cutoff, given)
	}
	// Garbage must be gone if it died before the cutoff, and before the
	// export's start less MinAge and the margins too: the export may have
	// seen an object that died after it started as staged, and kept it
	// (the cutoff is later than that only in a mutation that anchors it
	// late, which the reachable-object check must catch, not this one).
	margin := cutoff
	if expected.Before(margin) {
		margin = expected
	}
	margin = margin.Add(-2 * time.Second)
	for addr, o := range w.objects {
		// An optimized run does not list the slices older than its
		// previous run's boundary again: an object uploaded there after its
		// address's TTL is garbage it cannot see, left to a clean run.
		if o.late && rep.summary.RunKind == sweep.RunOptimized {
			continue
		}
		if !o.deleted && !o.deadAt.IsZero() && o.deadAt.Before(margin) {
			w.violate("garbage %s (uploaded %s, unreachable since %s) survived a cycle with cutoff %s",
				addr, o.uploaded.Format(time.RFC3339), o.deadAt.Format(time.RFC3339), cutoff.Format(time.RFC3339))
		}
	}
	// The namespace holds exactly the objects the oracle knows and has not
	// seen deleted, the GC's own files, and the untouchable keys.
	present := make(map[string]bool)
	for _, k := range w.sim.keys("") {
		present[k] = true
		if strings.HasPrefix(k, storagePrefix+"/retention/") {
			continue
		}
		if o := w.objects[k]; (o == nil || o.deleted) && !slices.Contains(untouchable, k) {
			w.violate("unexpected object %s in the namespace", k)
		}
	}
	for k, o := range w.objects {
		if !o.deleted && !present[k] {
			w.violate("object %s vanished without a delete", k)
		}
	}
	for _, k := range untouchable {
		if !present[k] {
			w.violate("%s, outside what the GC scans, is gone", k)
		}
	}
}
