package lakegc_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// TestCollectInterruptedAnywhere cancels a cycle at each of its steps in
// turn (every item the host yields, every progress report) and checks that
// no live object was deleted, that no mark was left that a sweep would
// accept unless it is right, and that running Collect again, as a new cycle
// or resuming what the report names, ends with exactly the garbage gone.
func TestCollectInterruptedAnywhere(t *testing.T) {
	phases := []string{"export", "rules", "active commits", "mark", "sweep"}
	steps := 0
	stopped := map[string]bool{} // the phases an interruption stopped
	for k := 1; ; k++ {
		w := newWorld(t)
		cfg := w.config()
		cfg.Sweep = true
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		step := func() {
			if n.Add(1) == int64(k) {
				cancel()
			}
		}
		w.host.hook = step
		cfg.Progress = func(lakegc.Progress) { step() }
		rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
		cancel()
		w.host.hook = nil
		if err == nil {
			if k <= steps {
				t.Fatalf("step %d: Collect did not fail", k)
			}
			break // k is past the last step
		}
		steps = k
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("step %d: Collect = %v, want context.Canceled", k, err)
		}
		if rep == nil {
			t.Fatalf("step %d: no report with the error", k)
		}
		for _, phase := range phases {
			if strings.HasPrefix(err.Error(), "lakegc: "+phase) {
				stopped[phase] = true
			}
		}
		w.expectLiveKept()
		for _, run := range w.successfulMarks() {
			w.expectMarked(run)
		}

		// Again, resuming what the report names, or as a new cycle.
		again := w.config()
		again.Sweep = true
		switch {
		case rep.Mark != nil:
			again.ResumeMark = rep.RunID
		case rep.Export != nil && rep.ExportRunID != "" && k%2 == 0:
			again.ResumeExport = rep.ExportRunID
		}
		rep2, err := lakegc.Collect(context.Background(), w.host.host(), again)
		if err != nil {
			t.Fatalf("step %d: Collect again (resume export %q, mark %q): %v", k, again.ResumeExport, again.ResumeMark, err)
		}
		if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
			t.Errorf("step %d: after Collect again, %d of %d garbage objects gone", k, len(gone), len(w.garbage))
		}
		if again.ResumeExport != "" && (rep2.ExportRunID != rep.ExportRunID || !rep2.Export.Resumed) {
			t.Errorf("step %d: resumed export %s, report %+v", k, rep.ExportRunID, rep2.Export)
		}
	}
	for _, phase := range phases {
		if !stopped[phase] {
			t.Errorf("no interruption stopped the phase %q; stopped: %v", phase, stopped)
		}
	}
	t.Logf("interrupted at each of %d steps", steps)
}

// An export interrupted between two calls resumes where it stopped, keeps
// its start as the cutoff's anchor, and exports every staged object once.
func TestCollectResumesAnInterruptedExport(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	cfg.Progress = func(p lakegc.Progress) {
		if p.Phase == lakegc.PhaseExport {
			if calls++; calls == 2 {
				cancel()
			}
		}
	}
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "export") {
		t.Fatalf("Collect cancelled during the export = %v", err)
	}
	if rep.Export == nil || rep.Mark != nil || len(w.marks()) > 0 {
		t.Fatalf("interrupted export: report %+v, marks %q", rep, w.marks())
	}

	later := w.config()
	later.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	later.ResumeExport = rep.ExportRunID
	rep2, err := lakegc.Collect(context.Background(), w.host.host(), later)
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep2.RunID)
	e := rep2.Export
	if !e.Resumed || !e.Start.Equal(gcTime) || e.Rows != stagedRows || e.Files != e.Calls+2 {
		t.Errorf("resumed export report %+v", *e)
	}
	if !rep2.Mark.Summary.CutoffTime.Equal(gcTime.Add(-24*time.Hour - sweep.DefaultClockSkew - sweep.StagingMargin)) {
		t.Errorf("resumed export: cutoff %v, want it anchored at the first start %v", rep2.Mark.Summary.CutoffTime, gcTime)
	}
	rows := 0
	for _, err := range uncommitted.ReadRun(context.Background(), w.bucket, "_lakefs", rep.ExportRunID) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
	}
	if rows != stagedRows {
		t.Errorf("the resumed export holds %d rows, want %d", rows, stagedRows)
	}

	// Resuming a finished export skips to the rules.
	again := w.config()
	again.ResumeExport = rep.ExportRunID
	rep3, err := lakegc.Collect(context.Background(), w.host.host(), again)
	if err != nil {
		t.Fatal(err)
	}
	if rep3.Export.Calls != 0 || rep3.Export.Rows != stagedRows {
		t.Errorf("resuming a finished export: %+v", *rep3.Export)
	}
	w.expectMarked(rep3.RunID)
}

// The mistakes a host can make through the config end in a clear error,
// and mark nothing.
func TestCollectMistakesMarkNothing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	done, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	interrupted := func() string {
		cfg := w.config()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cfg.Progress = func(p lakegc.Progress) { cancel() }
		rep, _ := lakegc.Collect(ctx, w.host.host(), cfg)
		return rep.ExportRunID
	}()
	marksBefore := w.marks()
	for _, tc := range []struct {
		name string
		edit func(*lakegc.Config)
		want error
	}{
		{"resume a mistyped export", func(c *lakegc.Config) { c.ResumeExport = "g0ootg1ksdudqv37g7d0" }, lakegc.ErrNoExport},
		{"resume the mark's ID as an export", func(c *lakegc.Config) { c.ResumeExport = done.RunID }, lakegc.ErrNoExport},
		{"resume an export under another prefix", func(c *lakegc.Config) {
			c.ResumeExport, c.StoragePrefix = interrupted, "lakefs"
		}, lakegc.ErrNoExport},
		{"resume an export of another namespace", func(c *lakegc.Config) {
			c.ResumeExport, c.Namespace = interrupted, c.Namespace+"/other"
		}, lakegc.ErrNoExport},
		{"resume a mistyped mark", func(c *lakegc.Config) { c.ResumeMark, c.Sweep = "g0ootg1ksdudqv37g7d0", true }, sweep.ErrNoRun},
		{"resume the export's ID as a mark", func(c *lakegc.Config) { c.ResumeMark, c.Sweep = done.ExportRunID, true }, sweep.ErrNoRun},
		{"resume a mark under another prefix", func(c *lakegc.Config) {
			c.ResumeMark, c.Sweep, c.StoragePrefix = done.RunID, true, "lakefs"
		}, sweep.ErrNoRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := w.config()
			tc.edit(&cfg)
			_, err := lakegc.Collect(ctx, w.host.host(), cfg)
			if !errors.Is(err, tc.want) {
				t.Errorf("Collect = %v, want %v", err, tc.want)
			}
			if gone := w.expectLiveKept(); len(gone) > 0 {
				t.Errorf("deleted %q", gone)
			}
			if marks := w.marks(); len(marks) != len(marksBefore) {
				t.Errorf("marks %q, before %q", marks, marksBefore)
			}
			if w.exists("lakefs/retention/gc/unified") {
				t.Error("a mark under the other prefix")
			}
		})
	}
}

// quietSource stops iterating, without an error, once its context is done,
// as many iterators do.
type quietSource struct {
	uncommitted.Source
	cancelAfter int
	cancel      context.CancelFunc
	n           int
}

func (q *quietSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for id, err := range q.Source.Branches(context.Background(), from) {
			if ctx.Err() != nil || !yield(id, err) {
				return
			}
		}
	}
}

func (q *quietSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for e, err := range q.Source.Uncommitted(context.Background(), branch, from) {
			if q.n++; q.n == q.cancelAfter {
				q.cancel()
			}
			if ctx.Err() != nil {
				return
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// A Source that stops quietly when the context is cancelled makes a
// Prepare call look complete: Collect fails, and marks nothing.
func TestCollectCancelledExportMarksNothing(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := w.host.host()
	host.Staging = &quietSource{Source: w.host, cancelAfter: 5, cancel: cancel}
	cfg := w.config()
	cfg.ExportFileSize = 1 << 20
	cfg.Sweep = true
	rep, err := lakegc.Collect(ctx, host, cfg)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "lakegc: export") {
		t.Errorf("Collect with a quiet Source cancelled = %v, want the export's context.Canceled", err)
	}
	if rep.Mark != nil || len(w.marks()) > 0 {
		t.Errorf("a cancelled export was marked: %q", w.marks())
	}
	w.expectLiveKept()
}

// The store keeps working during a GC: a commit of staged objects between
// two calls of the export, and a rename racing it, lose nothing.
func TestCollectWhileTheStoreWorks(t *testing.T) {
	w := newWorld(t)
	tracker := must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(func() time.Time { return gcTime })))
	host := w.host.host()
	host.Copies = tracker
	cfg := w.config()
	raced := false
	cfg.Progress = func(p lakegc.Progress) {
		if p.Phase != lakegc.PhaseExport || p.ExportNext == nil || raced {
			return
		}
		raced = true
		// The export is inside feature: rename its last part to a path it
		// passed, and commit main, which it has passed too.
		w.renameLastPart(t, tracker)
		w.host.commit("main", w.commitAt("c5", 0))
	}
	rep, err := lakegc.Collect(context.Background(), host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("the export finished in one call")
	}
	w.expectMarked(rep.RunID)
	if rep.Export.CopyRecords != 1 {
		t.Errorf("%d copy records exported, want 1", rep.Export.CopyRecords)
	}
}

// A HEAD missing from the store fails the cycle before the mark.
func TestCollectMissingHeadFails(t *testing.T) {
	w := newWorld(t)
	w.host.commit("main", w.commitAt("c4", 0))
	delete(w.host.commits, "c4") // HEAD of main, gone from the store
	w.host.order = w.host.order[:len(w.host.order)-1]
	rep, err := lakegc.Collect(context.Background(), w.host.host(), w.config())
	if err == nil || !strings.HasPrefix(err.Error(), "lakegc: active commits") {
		t.Errorf("Collect with a HEAD missing from the store = %v", err)
	}
	if rep.Mark != nil || len(w.marks()) > 0 {
		t.Errorf("marked with a missing HEAD: %q", w.marks())
	}
}

type failingCommitted struct{ err error }

func (f failingCommitted) CommittedAddresses(context.Context, []retention.ActiveCommit) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if yield("data/old/orphan", nil) {
			yield("", f.err)
		}
	}
}

// Committed addresses the host cannot read fail the mark, which marks
// nothing.
func TestCollectCommittedErrorFailsTheMark(t *testing.T) {
	w := newWorld(t)
	host := w.host.host()
	boom := errors.New("metarange unreadable")
	host.Committed = failingCommitted{boom}
	cfg := w.config()
	cfg.Sweep = true
	rep, err := lakegc.Collect(context.Background(), host, cfg)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "lakegc: mark") {
		t.Errorf("Collect = %v, want the mark to fail with the host's error", err)
	}
	if rep.Mark != nil || len(w.successfulMarks()) > 0 || len(w.candidates(rep.RunID)) > 0 {
		t.Errorf("marked despite the error")
	}
	if gone := w.expectLiveKept(); len(gone) > 0 {
		t.Errorf("deleted %q", gone)
	}
}

// A copy record lives for the tracker's TTL. An export that has run that
// long may have lost the record of a rename that raced its first calls
// before its last call reads the records: Collect refuses to resume it, and
// refuses an export that finished that late, and marks nothing.
func TestCollectRefusesAnExportOlderThanTheCopyTTL(t *testing.T) {
	for _, resume := range []bool{false, true} {
		t.Run(map[bool]string{false: "finished late", true: "resumed late"}[resume], func(t *testing.T) {
			w := newWorld(t)
			now := gcTime
			clock := func() time.Time { return now }
			tracker := must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(clock)))
			host := w.host.host()
			host.Copies = tracker
			cfg := w.config()
			cfg.Clock = clock
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			raced := false
			cfg.Progress = func(p lakegc.Progress) {
				if p.Phase != lakegc.PhaseExport || p.ExportNext == nil || raced {
					return
				}
				raced = true
				w.renameLastPart(t, tracker)
				// A TTL later, another cycle expires the records.
				now = gcTime.Add(copytrack.DefaultTTL + time.Minute)
				if _, err := tracker.Expire(context.Background(), "repo1"); err != nil {
					t.Error(err)
				}
				if resume {
					cancel()
				}
			}
			rep, err := lakegc.Collect(ctx, host, cfg)
			if resume {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Collect cancelled during the export = %v", err)
				}
				again := w.config()
				again.Clock, again.ResumeExport = clock, rep.ExportRunID
				rep, err = lakegc.Collect(context.Background(), host, again)
				if rep.Export != nil && rep.Export.Calls > 0 {
					t.Errorf("a stale export was resumed for %d calls before it was refused", rep.Export.Calls)
				}
			}
			if !raced {
				t.Fatal("the export finished in one call")
			}
			if !errors.Is(err, lakegc.ErrStaleExport) || !strings.HasPrefix(err.Error(), "lakegc: ") {
				t.Errorf("Collect = %v, want an error wrapping ErrStaleExport", err)
			}
			if err == nil {
				w.expectMarked(rep.RunID)
			}
			if rep.Mark != nil || len(w.marks()) > 0 {
				t.Errorf("an export older than the copy TTL was marked: %q", w.marks())
			}
			w.expectLiveKept()
		})
	}
}

// An export whose first calls ran with the host's copy records is resumed
// only with the same records: those of the same repository, from a Host
// with Copies. Otherwise a rename that raced the first calls loses its
// object.
func TestCollectResumeNeedsTheSameCopyRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*lakegc.Config, *lakegc.Host)
	}{
		{"without copies", func(_ *lakegc.Config, h *lakegc.Host) { h.Copies = nil }},
		{"of another repository", func(c *lakegc.Config, _ *lakegc.Host) { c.Repository = "repo2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tracker := must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(func() time.Time { return gcTime })))
			host := w.host.host()
			host.Copies = tracker
			cfg := w.config()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg.Progress = func(p lakegc.Progress) {
				if p.Phase != lakegc.PhaseExport || p.ExportNext == nil {
					return
				}
				w.renameLastPart(t, tracker)
				cancel()
			}
			rep, err := lakegc.Collect(ctx, host, cfg)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Collect cancelled during the export = %v", err)
			}
			again, host2 := w.config(), host
			again.ResumeExport = rep.ExportRunID
			tc.edit(&again, &host2)
			rep, err = lakegc.Collect(context.Background(), host2, again)
			if !errors.Is(err, lakegc.ErrNoExport) {
				t.Errorf("Collect = %v, want an error wrapping ErrNoExport", err)
			}
			if err == nil {
				w.expectMarked(rep.RunID)
			}
			if len(w.marks()) > 0 {
				t.Errorf("marked %q", w.marks())
			}
		})
	}
}

// A copy made after the export read the copy records — of an object that
// only an expired commit holds — is in no input of the export, and the
// commits say nothing of it: the mark reads the copy records again, so the
// copy keeps its object, in a cycle run at once and in one resumed later
// from its finished export.
func TestCollectKeepsACopyMadeAfterTheExport(t *testing.T) {
	for _, resume := range []bool{false, true} {
		t.Run(map[bool]string{false: "at once", true: "resumed"}[resume], func(t *testing.T) {
			w := newWorld(t)
			tracker := must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(func() time.Time { return gcTime })))
			host := w.host.host()
			host.Copies = tracker
			cfg := w.config()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			copied := false
			cfg.Progress = func(p lakegc.Progress) {
				if p.Phase == lakegc.PhaseExport || copied {
					return
				}
				copied = true
				// Copy a1, which only the expired c1 holds, onto feature.
				if err := tracker.Track(context.Background(), copytrack.Copy{
					Repository: "repo1", Branch: "feature", SrcPath: "a", DstPath: "from-c1", PhysicalAddress: "data/old/a1",
				}); err != nil {
					t.Error(err)
				}
				w.host.stage("feature", entry("from-c1", "data/old/a1"))
				if resume {
					cancel()
				}
			}
			rep, err := lakegc.Collect(ctx, host, cfg)
			if resume {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Collect cancelled after the export = %v", err)
				}
				again := w.config()
				again.ResumeExport = rep.ExportRunID
				rep, err = lakegc.Collect(context.Background(), host, again)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !copied {
				t.Fatal("no phase after the export")
			}
			delete(w.garbage, "data/old/a1")
			w.live["data/old/a1"] = "copied onto feature after the export"
			w.expectMarked(rep.RunID)
		})
	}
}

// A finished export resumed the copy tracker's TTL or more after it began
// is refused too: copies made after it may have lost their records before
// the mark reads them.
func TestCollectRefusesAFinishedExportOlderThanTheCopyTTL(t *testing.T) {
	w := newWorld(t)
	now := gcTime
	clock := func() time.Time { return now }
	host := w.host.host()
	host.Copies = must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(clock)))
	cfg := w.config()
	cfg.Clock = clock
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Progress = func(p lakegc.Progress) {
		if p.Phase != lakegc.PhaseExport {
			cancel()
		}
	}
	rep, err := lakegc.Collect(ctx, host, cfg)
	if !errors.Is(err, context.Canceled) || rep.Export == nil || rep.Export.Rows != stagedRows {
		t.Fatalf("Collect cancelled after the export = %v (export %+v)", err, rep.Export)
	}
	now = gcTime.Add(copytrack.DefaultTTL)
	again := w.config()
	again.Clock, again.ResumeExport = clock, rep.ExportRunID
	if _, err := lakegc.Collect(context.Background(), host, again); !errors.Is(err, lakegc.ErrStaleExport) {
		t.Errorf("a finished export resumed a TTL later: %v, want ErrStaleExport", err)
	}
	if len(w.marks()) > 0 {
		t.Errorf("marked %q", w.marks())
	}
}

// renameLastPart renames feature's last part to a path the export has
// passed, as a host does: a copy record, then the staging change.
func (w *world) renameLastPart(t *testing.T, tracker *copytrack.Tracker) {
	t.Helper()
	last := w.host.branches["feature"].staging["part-11.json"]
	if err := tracker.Track(context.Background(), copytrack.Copy{
		Repository: "repo1", Branch: "feature", SrcPath: "part-11.json", DstPath: "a-renamed.json", PhysicalAddress: last.PhysicalAddress,
	}); err != nil {
		t.Error(err)
	}
	w.host.stage("feature", uncommitted.Entry{Key: "a-renamed.json", PhysicalAddress: last.PhysicalAddress})
	w.host.unstage("feature", "part-11.json")
}
