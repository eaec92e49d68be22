package lakegc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
	"github.com/lakegc/lakegc/uncommitted"
)

func TestCollectDryRunMarksExactlyTheGarbage(t *testing.T) {
	w := newWorld(t)
	rep, err := lakegc.Collect(context.Background(), w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
	if gone := w.expectLiveKept(); len(gone) > 0 {
		t.Errorf("a dry run deleted %q", gone)
	}
	if !rep.DryRun || rep.Sweep != nil {
		t.Errorf("report of a dry run: DryRun %v, Sweep %+v", rep.DryRun, rep.Sweep)
	}
	if rep.Mark.Summary.NumDeletedObjects != int64(len(w.garbage)) || rep.Mark.Marked != int64(len(w.garbage)) {
		t.Errorf("report: %d candidates, %d marked; want %d", rep.Mark.Summary.NumDeletedObjects, rep.Mark.Marked, len(w.garbage))
	}
	if want := "_lakefs/retention/gc/unified/" + rep.RunID + "/"; rep.Mark.Report != want {
		t.Errorf("report folder %q, want %q", rep.Mark.Report, want)
	}
	// The candidates' size, from the summary, is the stored file's.
	if size := w.candidatesSize(rep.RunID); rep.Mark.Bytes != size || rep.Mark.Summary.CandidatesBytes != size {
		t.Errorf("candidates' bytes: report %d, summary %d; stored %d", rep.Mark.Bytes, rep.Mark.Summary.CandidatesBytes, size)
	}
	// The cutoff is anchored at the export's start.
	if want := gcTime.Add(-24*time.Hour - sweep.DefaultClockSkew - sweep.StagingMargin); !rep.Mark.Summary.CutoffTime.Equal(want) {
		t.Errorf("cutoff %v, want %v", rep.Mark.Summary.CutoffTime, want)
	}
	// The host was asked for exactly the active commits: c2 and c3.
	var asked []string
	for _, a := range w.host.asked {
		asked = append(asked, a.CommitID)
	}
	if !slices.Equal(asked, []string{"c2", "c3"}) {
		t.Errorf("CommittedAddresses asked for %q, want c2 and c3", asked)
	}
	e := rep.Export
	if e.Rows != stagedRows || e.Files < 3 || e.Calls != e.Files || e.Bytes <= 0 || !e.Start.Equal(gcTime) ||
		e.Location != uncommitted.Location(w.ns, "_lakefs", rep.ExportRunID) {
		t.Errorf("export report %+v", *e)
	}
	if !rep.Rules.Found || rep.Rules.Rules.BranchRetentionDays["main"] != 30 {
		t.Errorf("rules report %+v", *rep.Rules)
	}
	if rep.Commits.Active != 2 || rep.Commits.Bytes <= 0 || !w.exists(rep.Commits.Key) {
		t.Errorf("commits report %+v", *rep.Commits)
	}
	if rep.ExportRunID == "" || rep.RunID == "" || rep.ExportRunID == rep.RunID {
		t.Errorf("run IDs: export %q, GC %q", rep.ExportRunID, rep.RunID)
	}
}

func TestCollectSweepDeletesOnlyTheGarbage(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Sweep = true
	rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("swept %q, want all of %d garbage objects", gone, len(w.garbage))
	}
	if rep.DryRun || rep.Sweep == nil || rep.Sweep.Deleted != int64(len(w.garbage)) || rep.Sweep.Failed+rep.Sweep.Refused != 0 {
		t.Errorf("sweep report %+v (dry run %v)", rep.Sweep, rep.DryRun)
	}
}

// A dry run, then a sweep of what it marked, by its run ID, without the
// host.
func TestCollectResumeMarkSweepsIt(t *testing.T) {
	w := newWorld(t)
	rep, err := lakegc.Collect(context.Background(), w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	// A summary without the candidates' size (lakeFS's client's, an older
	// Mark's): the resumed mark lists deleted/ for it.
	key := rep.Mark.Report + "summary.json"
	raw, err := w.bucket.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["candidates_bytes"]; !ok {
		t.Fatalf("summary without candidates_bytes: %s", raw)
	}
	delete(fields, "candidates_bytes")
	if raw, err = json.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	if err := w.bucket.WriteAll(context.Background(), key, raw, nil); err != nil {
		t.Fatal(err)
	}
	cfg := w.config()
	cfg.ResumeMark, cfg.Sweep = rep.RunID, true
	swept, err := lakegc.Collect(context.Background(), lakegc.Host{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if swept.Mark.Bytes != rep.Mark.Bytes || swept.Mark.Bytes <= 0 {
		t.Errorf("resumed mark's bytes %d, the mark's %d", swept.Mark.Bytes, rep.Mark.Bytes)
	}
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("swept %q, want all of %d garbage objects", gone, len(w.garbage))
	}
	if swept.RunID != rep.RunID || swept.Export != nil || swept.Mark.Summary.NumDeletedObjects != int64(len(w.garbage)) {
		t.Errorf("report of a resumed mark: %+v", swept)
	}
}

// lakeFS keeps every commit of a repository without rules, or with an
// empty rules object.
func TestCollectWithoutRulesKeepsEveryCommit(t *testing.T) {
	for _, name := range []string{"missing", "empty"} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			if err := retention.NewRulesStore(w.bucket).Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if name == "empty" {
				if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/rules/config.json", nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{"data/old/a1", "data/old/d"} {
				w.live[k] = "in an expired commit, but without rules every commit is kept"
				delete(w.garbage, k)
			}
			rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
			if err != nil {
				t.Fatal(err)
			}
			w.expectMarked(rep.RunID)
			if rep.Rules.Found || rep.Rules.Rules != nil || rep.Commits.Active != 4 {
				t.Errorf("rules %+v, %d active commits; want no rules and all 4 commits", *rep.Rules, rep.Commits.Active)
			}
		})
	}
}

// Invalid settings are refused before any I/O: the host is not read and
// the bucket not written.
func TestCollectRefusesInvalidConfig(t *testing.T) {
	w := newWorld(t)
	w.host.hook = func() { t.Error("the host was read") }
	tracker := must(copytrack.New(copytrack.NewMemStore()))
	for _, tc := range []struct {
		name string
		edit func(*lakegc.Config, *lakegc.Host)
	}{
		{"no bucket", func(c *lakegc.Config, _ *lakegc.Host) { c.Bucket = nil }},
		{"no namespace", func(c *lakegc.Config, _ *lakegc.Host) { c.Namespace = "" }},
		{"namespace without scheme", func(c *lakegc.Config, _ *lakegc.Host) { c.Namespace = "bucket/repo" }},
		{"namespace of a scheme only", func(c *lakegc.Config, _ *lakegc.Host) { c.Namespace = "s3://" }},
		{"namespace of a scheme and slashes", func(c *lakegc.Config, _ *lakegc.Host) { c.Namespace = "s3:////" }},
		{"storage prefix with a leading slash", func(c *lakegc.Config, _ *lakegc.Host) { c.StoragePrefix = "/_lakefs" }},
		{"storage prefix with a trailing slash", func(c *lakegc.Config, _ *lakegc.Host) { c.StoragePrefix = "_lakefs/" }},
		{"storage prefix inside data", func(c *lakegc.Config, _ *lakegc.Host) { c.StoragePrefix = "data/_lakefs" }},
		{"data prefix is the storage prefix", func(c *lakegc.Config, _ *lakegc.Host) { c.DataPrefix = "_lakefs" }},
		{"data prefix URI", func(c *lakegc.Config, _ *lakegc.Host) { c.DataPrefix = "s3://x" }},
		{"negative link TTL", func(c *lakegc.Config, _ *lakegc.Host) { c.LinkTTL = -time.Second }},
		{"negative min age", func(c *lakegc.Config, _ *lakegc.Host) { c.MinAge = -time.Second }},
		{"min age below link TTL", func(c *lakegc.Config, _ *lakegc.Host) { c.MinAge, c.LinkTTL = time.Hour, 2*time.Hour }},
		{"min age below the default link TTL", func(c *lakegc.Config, _ *lakegc.Host) { c.MinAge = time.Hour }},
		{"negative export file size", func(c *lakegc.Config, _ *lakegc.Host) { c.ExportFileSize = -1 }},
		{"tiny memory budget", func(c *lakegc.Config, _ *lakegc.Host) { c.MemoryBudget = 4<<10 - 1 }},
		{"negative memory budget", func(c *lakegc.Config, _ *lakegc.Host) { c.MemoryBudget = -1 }},
		{"resume both", func(c *lakegc.Config, _ *lakegc.Host) { c.ResumeExport, c.ResumeMark = "a", "b" }},
		{"resume export with a path", func(c *lakegc.Config, _ *lakegc.Host) { c.ResumeExport = "../x" }},
		{"resume mark with a slash", func(c *lakegc.Config, _ *lakegc.Host) { c.ResumeMark = "a/b" }},
		{"no staging", func(_ *lakegc.Config, h *lakegc.Host) { h.Staging = nil }},
		{"no commits", func(_ *lakegc.Config, h *lakegc.Host) { h.Commits = nil }},
		{"no committed", func(_ *lakegc.Config, h *lakegc.Host) { h.Committed = nil }},
		{"copies without repository", func(c *lakegc.Config, h *lakegc.Host) { h.Copies, c.Repository = tracker, "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, host := w.config(), w.host.host()
			tc.edit(&cfg, &host)
			rep, err := lakegc.Collect(context.Background(), host, cfg)
			if !errors.Is(err, lakegc.ErrInvalidInput) {
				t.Errorf("Collect = %v, want ErrInvalidInput", err)
			}
			if rep != nil {
				t.Errorf("Collect returned a report %+v", rep)
			}
		})
	}
	if runs := w.marks(); len(runs) > 0 {
		t.Errorf("invalid configs left marks %q", runs)
	}
	if w.exists("_lakefs/retention/gc/uncommitted") {
		t.Error("an export was written")
	}
	if err := (lakegc.Config{Bucket: w.bucket, Namespace: w.ns}).Validate(); err != nil {
		t.Errorf("a config with only a bucket and a namespace: %v", err)
	}
	if err := (lakegc.Config{Bucket: w.bucket, Namespace: w.ns, LinkTTL: 48 * time.Hour}).Validate(); err != nil {
		t.Errorf("a link TTL longer than the default min age, with the default min age: %v", err)
	}
}

// The mark's memory floor is sweep's: Collect refuses below it before any
// I/O, and sweep accepts it.
func TestMemoryBudgetFloorIsSweeps(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.MemoryBudget = 4 << 10
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err := sweep.Mark(context.Background(), w.bucket, "floor", sweep.Inputs{ExportStart: gcTime}, sweep.WithMemoryBudget(4<<10-1))
	if !errors.Is(err, sweep.ErrInvalidInput) || !strings.Contains(err.Error(), "memory budget") {
		t.Errorf("sweep with a budget below 4 KiB: %v", err)
	}
}

// A link TTL longer than the default min age raises the min age with it.
func TestCollectMinAgeFollowsLinkTTL(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.LinkTTL = 72 * time.Hour
	rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := gcTime.Add(-72*time.Hour - sweep.DefaultClockSkew - sweep.StagingMargin); !rep.Mark.Summary.CutoffTime.Equal(want) {
		t.Errorf("cutoff %v, want %v", rep.Mark.Summary.CutoffTime, want)
	}
}

func TestReportMarshalsToJSON(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Sweep = true
	rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{
		{"export_run_id"}, {"run_id"}, {"dry_run"}, {"export", "location"}, {"export", "rows"}, {"export", "bytes"},
		{"export", "duration_ns"}, {"rules", "found"}, {"rules", "rules", "default_retention_days"},
		{"commits", "key"}, {"commits", "active"}, {"mark", "summary", "num_deleted_objects"},
		{"mark", "summary", "cutoff_time"}, {"mark", "report"}, {"sweep", "deleted"}, {"sweep", "duration_ns"},
	} {
		var v any = m
		for _, k := range path {
			obj, _ := v.(map[string]any)
			v = obj[k]
		}
		if v == nil {
			t.Errorf("JSON report lacks %s:\n%s", strings.Join(path, "."), b)
		}
	}
}

// The host's full addresses are made relative when under the namespace,
// and left out otherwise: an object elsewhere is not in the listing.
func TestCollectCommittedFullAddresses(t *testing.T) {
	w := newWorld(t)
	w.host.stage("main", uncommitted.Entry{Key: "elsewhere", PhysicalAddress: "s3://other-bucket/data/old/orphan", AddressType: uncommitted.Full})
	w.host.commit("main", w.commitAt("c4", 0))
	rep, err := lakegc.Collect(context.Background(), w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID) // data/old/full kept, data/old/orphan still garbage
}

// A URI's scheme is case-insensitive (RFC 3986): a full address that
// spells the namespace's scheme in another case names an object of the
// namespace, which a reader that parses it (as lakeFS does) reads.
func TestCollectCommittedFullAddressSchemeCase(t *testing.T) {
	w := newWorld(t)
	upper := "FILE" + strings.TrimPrefix(w.ns, "file") + "/data/old/orphan"
	w.host.stage("main", uncommitted.Entry{Key: "upper", PhysicalAddress: upper, AddressType: uncommitted.Full})
	w.host.commit("main", w.commitAt("c4", 0))
	delete(w.garbage, "data/old/orphan")
	w.live["data/old/orphan"] = "in c4 by a full address with an upper-case scheme"
	rep, err := lakegc.Collect(context.Background(), w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
}

// Every phase reports its progress, in order, and the export's after each
// call.
func TestCollectProgress(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Sweep = true
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	var phases []string
	var exports []lakegc.Progress
	// The first two calls of the mark and of the sweep: the phase's
	// start, without counters, then the package's first phase.
	firsts := map[string][]string{}
	cfg.Progress = func(p lakegc.Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		if p.Phase == lakegc.PhaseExport {
			exports = append(exports, p)
		}
		if (p.Phase == lakegc.PhaseMark || p.Phase == lakegc.PhaseSweep) && len(firsts[p.Phase]) < 2 {
			firsts[p.Phase] = append(firsts[p.Phase], p.Counters.Phase)
		}
	}
	rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{lakegc.PhaseExport, lakegc.PhaseRules, lakegc.PhaseCommits, lakegc.PhaseMark, lakegc.PhaseSweep}
	if !slices.Equal(phases, want) {
		t.Errorf("phases %q, want %q", phases, want)
	}
	if want := map[string][]string{lakegc.PhaseMark: {"", "start"}, lakegc.PhaseSweep: {"", "delete"}}; !maps.EqualFunc(firsts, want, slices.Equal) {
		t.Errorf("first progress calls of the mark and the sweep %q, want %q", firsts, want)
	}
	if len(exports) != rep.Export.Calls {
		t.Errorf("%d export progress calls, %d export calls", len(exports), rep.Export.Calls)
	}
	for _, phase := range want {
		if !strings.Contains(logs.String(), "lakegc: "+phase+" done") {
			t.Errorf("no log of the end of phase %s:\n%s", phase, logs.String())
		}
	}
	for i, p := range exports {
		last := i == len(exports)-1
		if p.ExportRunID != rep.ExportRunID || (p.ExportNext == nil) != last || !last && p.ExportNext.RunID != rep.ExportRunID {
			t.Errorf("export progress %d of %d: %+v", i+1, len(exports), p)
		}
	}
}

// With Optimized, a cycle's mark starts from the latest run, and marks
// what the clean run before it marked.
func TestCollectOptimizedStartsFromTheLatestRun(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Optimized = true
	first, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The world's keys are not in slices (the flat layout, or folders
	// that are not slices): the first run lists no slice.
	if s := first.Mark.Summary; s.RunKind != sweep.RunClean || s.PreviousRunID != "" || s.FirstSlice != "" {
		t.Fatalf("first run: %+v", s)
	}
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	next, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The previous run listed no slice, so the run is clean, and says why.
	if s := next.Mark.Summary; s.PreviousRunID != first.RunID || s.RunKind != sweep.RunClean || !strings.Contains(s.CleanReason, "no slice") {
		t.Fatalf("next run: %+v", s)
	}
	if a, b := w.candidates(first.RunID), w.candidates(next.RunID); !slices.Equal(a, b) || len(a) != len(w.garbage) {
		t.Errorf("candidates %q, then %q; want the %d garbage objects", a, b, len(w.garbage))
	}
	cfg.CleanEvery = -1
	if _, err := lakegc.Collect(context.Background(), w.host.host(), cfg); !errors.Is(err, lakegc.ErrInvalidInput) {
		t.Errorf("CleanEvery -1: %v", err)
	}
}

// MarkOptions and SweepOptions reach the mark and the sweep; one that sets
// what a field of the Config sets is refused before any I/O, as an invalid
// one is.
func TestCollectSweepOptions(t *testing.T) {
	t.Run("invalid", func(t *testing.T) {
		w := newWorld(t)
		cfg := w.config()
		cfg.MarkOptions = []sweep.MarkOption{sweep.WithListConcurrencyRange(4, 2)}
		rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
		if !errors.Is(err, sweep.ErrInvalidInput) || !errors.Is(err, lakegc.ErrInvalidInput) {
			t.Fatalf("an invalid sweep option: %v", err)
		}
		// Refused before any I/O: no export, no report.
		if rep != nil && rep.Export != nil || len(w.marks()) > 0 {
			t.Errorf("an invalid sweep option was refused only after the export: %+v", rep)
		}
	})
	t.Run("set by the Config", func(t *testing.T) {
		for _, opts := range []sweep.Options{
			{Mark: []sweep.MarkOption{sweep.WithStoragePrefix("elsewhere")}},
			{Sweep: []sweep.SweepOption{sweep.WithStoragePrefix("elsewhere")}},
			{Mark: []sweep.MarkOption{sweep.WithPrevious("")}},
			{Mark: []sweep.MarkOption{sweep.WithMinAge(48 * time.Hour)}},
			{Mark: []sweep.MarkOption{sweep.WithCleanEvery(2)}},
			{Sweep: []sweep.SweepOption{sweep.WithBatchDeleter(nil)}},
			{Sweep: []sweep.SweepOption{sweep.WithRecognizer(nil)}},
			// Quarantine decides whether the sweep moves, set or not.
			{Sweep: []sweep.SweepOption{sweep.WithMover(quarantine.Mover{})}},
		} {
			w := newWorld(t)
			cfg := w.config()
			cfg.MarkOptions, cfg.SweepOptions = opts.Mark, opts.Sweep
			rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
			if !errors.Is(err, sweep.ErrInvalidInput) || !errors.Is(err, lakegc.ErrInvalidInput) {
				t.Fatalf("an option the Config sets: %v", err)
			}
			if !strings.Contains(err.Error(), "a field of Config decides this") {
				t.Errorf("an option the Config sets, refused without saying why: %v", err)
			}
			if rep != nil && rep.Export != nil || len(w.marks()) > 0 {
				t.Errorf("an option the Config sets was refused only after the export: %+v", rep)
			}
		}
	})
	t.Run("reach", func(t *testing.T) {
		w := newWorld(t)
		cfg := w.config()
		cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
		cfg.Sweep = true
		cfg.MarkOptions = []sweep.MarkOption{
			sweep.WithListConcurrency(1),
			sweep.WithBackoff(time.Millisecond, 10*time.Millisecond),
		}
		cfg.SweepOptions = []sweep.SweepOption{
			sweep.WithDeleteConcurrency(1),
			sweep.WithBackoff(time.Millisecond, 10*time.Millisecond),
		}
		rep, err := lakegc.Collect(context.Background(), w.host.host(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s := rep.Mark.Summary; s.RunKind != sweep.RunClean || s.PreviousRunID != "" {
			t.Errorf("a run that is not Optimized started from %q (%s)", s.PreviousRunID, s.RunKind)
		}
		if _, err := sweep.ReadSummary(context.Background(), w.bucket, lakegc.DefaultStoragePrefix, rep.RunID); err != nil {
			t.Errorf("the report is not under the Config's storage prefix: %v", err)
		}
		if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
			t.Errorf("swept %q, want all of %d garbage objects", gone, len(w.garbage))
		}
	})
}
