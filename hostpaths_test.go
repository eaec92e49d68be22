package lakegc_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// ownHost is a host that runs the export and the retention itself, as
// lakeFS does through its prepare calls: Host.Export and Host.Active over
// the world's memHost. It logs each step, in order.
type ownHost struct {
	mem   *memHost
	rules *retention.Rules
	// tick, if set, is called at the end of Export: a slow export.
	tick func()

	exportErr, activeErr, addressesErr error
	noActive, noAddresses              bool
	// runID and key, if set, are the HostCommits' (default "host-run", no key).
	runID, key string
	cancel     context.CancelFunc // called within Export, if set

	mu     sync.Mutex
	events []string
}

func (o *ownHost) log(e string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, e)
}

func (o *ownHost) host() lakegc.Host {
	return lakegc.Host{Export: o, Active: o, Committed: loggedCommitted{o}}
}

func (o *ownHost) Export(ctx context.Context) (*lakegc.HostExport, error) {
	o.log("export")
	if o.exportErr != nil {
		return nil, o.exportErr
	}
	var addrs []string
	for b, err := range o.mem.Branches(ctx, "") {
		if err != nil {
			return nil, err
		}
		for e, err := range o.mem.Uncommitted(ctx, b, "") {
			if err != nil {
				return nil, err
			}
			if !e.Tombstone {
				addrs = append(addrs, e.PhysicalAddress)
			}
		}
	}
	if o.cancel != nil {
		o.cancel()
	}
	if o.tick != nil {
		o.tick()
	}
	if o.noAddresses {
		return &lakegc.HostExport{RunID: "host-export"}, nil
	}
	return &lakegc.HostExport{RunID: "host-export", Addresses: func(yield func(string, error) bool) {
		o.log("read export")
		for _, a := range addrs {
			if !yield(a, nil) {
				return
			}
		}
		if o.addressesErr != nil {
			yield("", o.addressesErr)
		}
	}}, nil
}

func (o *ownHost) ActiveCommits(ctx context.Context, now time.Time) (*lakegc.HostCommits, error) {
	o.log("active")
	if o.activeErr != nil {
		return nil, o.activeErr
	}
	runID := o.runID
	if runID == "" {
		runID = "host-run"
	}
	if o.noActive {
		return &lakegc.HostCommits{RunID: runID}, nil
	}
	active, err := retention.ActiveCommits(ctx, o.mem.Heads(ctx), o.mem, o.rules, now)
	return &lakegc.HostCommits{RunID: runID, Key: o.key, Active: active}, err
}

type loggedCommitted struct{ o *ownHost }

func (l loggedCommitted) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		l.o.log("read committed")
		for a, err := range l.o.mem.CommittedAddresses(ctx, active) {
			if !yield(a, err) {
				return
			}
		}
	}
}

func newOwnHost(w *world) *ownHost {
	return &ownHost{mem: w.host, rules: &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 30}}}
}

// A host's own export and retention give the same exact mark as Collect's,
// in the safe order: the export finished before the kept commits are
// computed and before any committed address is read, and the cutoff
// anchored at the start recorded before the export began, however long it
// took.
func TestCollectHostExportAndActive(t *testing.T) {
	w := newWorld(t)
	o := newOwnHost(w)
	now := gcTime
	o.tick = func() { now = now.Add(3 * time.Hour) }
	cfg := w.config()
	cfg.Clock = func() time.Time { return now }
	cfg.Sweep = true
	rep, err := lakegc.Collect(context.Background(), o.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("swept %q, want all of %d garbage objects", gone, len(w.garbage))
	}
	if want := gcTime.Add(-24*time.Hour - sweep.DefaultClockSkew - sweep.StagingMargin); !rep.Mark.Summary.CutoffTime.Equal(want) {
		t.Errorf("cutoff %v, want %v: anchored at the start recorded before the export", rep.Mark.Summary.CutoffTime, want)
	}
	if len(o.events) < 4 || !slices.Equal(o.events[:2], []string{"export", "active"}) ||
		!slices.Contains(o.events, "read export") || !slices.Contains(o.events, "read committed") {
		t.Errorf("events %q: want the export, then the active commits, then the reads", o.events)
	}
	if rep.ExportRunID != "host-export" || rep.RunID != "host-run" || rep.Rules != nil ||
		!rep.Export.Host || !rep.Export.Start.Equal(gcTime) || rep.Commits.Active != 2 || !w.exists(rep.Commits.Key) {
		t.Errorf("report: export %q %+v, run %q, rules %+v, commits %+v", rep.ExportRunID, rep.Export, rep.RunID, rep.Rules, rep.Commits)
	}
}

// Every failure of a host's own export or retention stops the cycle at the
// phase that failed, or fails the mark: nothing is marked, nothing deleted,
// and a failed export is never followed by a question for the kept commits.
func TestCollectHostPathsFailuresMarkNothing(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		edit func(*ownHost)
		// cancel cancels the cycle's context within the host's Export.
		cancel bool
		// committedFails fails the committed reads only: the export ran.
		committedFails bool
		// phase is the phase the error names; cause is what it wraps.
		phase string
		cause error
	}{
		{name: "export fails", edit: func(o *ownHost) { o.exportErr = boom }, phase: lakegc.PhaseExport, cause: boom},
		{name: "export cancelled", cancel: true, phase: lakegc.PhaseExport, cause: context.Canceled},
		{name: "export addresses fail", edit: func(o *ownHost) { o.addressesErr = boom }, phase: lakegc.PhaseMark, cause: boom},
		{name: "active fails", edit: func(o *ownHost) { o.activeErr = boom }, phase: "active commits", cause: boom},
		{name: "no active commit", edit: func(o *ownHost) { o.noActive = true }, phase: "active commits"},
		{name: "export without addresses", edit: func(o *ownHost) { o.noAddresses = true }, phase: lakegc.PhaseExport},
		// The run ID names the mark's report folder, the key a file of the
		// namespace: neither may reach elsewhere.
		{name: "run ID a path", edit: func(o *ownHost) { o.runID = "../data" }, phase: "active commits"},
		{name: "commits report absolute", edit: func(o *ownHost) { o.key = "/_lakefs/commits.csv" }, phase: "active commits"},
		{name: "commits report a URI", edit: func(o *ownHost) { o.key = "s3://bucket/repo/_lakefs/commits.csv" }, phase: "active commits"},
		{name: "committed fails", committedFails: true, phase: lakegc.PhaseMark, cause: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			o := newOwnHost(w)
			if tc.edit != nil {
				tc.edit(o)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				o.cancel = cancel
			}
			cfg := w.config()
			cfg.Sweep = true
			host := o.host()
			if tc.committedFails {
				host.Committed = failingCommitted{boom}
			}
			rep, err := lakegc.Collect(ctx, host, cfg)
			if err == nil {
				t.Fatalf("Collect succeeded: %+v", rep)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
			if want := "lakegc: " + tc.phase + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if tc.phase == lakegc.PhaseExport && (slices.Contains(o.events, "active") || rep.Commits != nil) {
				t.Errorf("the kept commits were asked for after a failed export: events %q, commits %+v", o.events, rep.Commits)
			}
			if n := strings.Count(err.Error(), "lakegc:"); n != 1 {
				t.Errorf("error %q names the package %d times, want once", err, n)
			}
			if ok := w.successfulMarks(); len(ok) > 0 {
				t.Errorf("successful marks %q", ok)
			}
			if gone := w.expectLiveKept(); len(gone) > 0 {
				t.Errorf("deleted %q", gone)
			}
			if rep.Sweep != nil {
				t.Errorf("swept: %+v", rep.Sweep)
			}
		})
	}
}

// Exactly one of Staging and Export, and of Commits and Active; a host's
// own export has no copy tracker and cannot be resumed.
func TestCollectRefusesAmbiguousHosts(t *testing.T) {
	w := newWorld(t)
	o := newOwnHost(w)
	tracker := must(copytrack.New(copytrack.NewMemStore()))
	for _, tc := range []struct {
		name string
		edit func(*lakegc.Config, *lakegc.Host)
	}{
		{"staging and export", func(_ *lakegc.Config, h *lakegc.Host) { h.Staging = w.host }},
		{"neither staging nor export", func(_ *lakegc.Config, h *lakegc.Host) { h.Export = nil }},
		{"commits and active", func(_ *lakegc.Config, h *lakegc.Host) { h.Commits = w.host }},
		{"neither commits nor active", func(_ *lakegc.Config, h *lakegc.Host) { h.Active = nil }},
		{"export with copies", func(_ *lakegc.Config, h *lakegc.Host) { h.Copies = tracker }},
		{"export resumed", func(c *lakegc.Config, _ *lakegc.Host) { c.ResumeExport = "run1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, host := w.config(), o.host()
			tc.edit(&cfg, &host)
			rep, err := lakegc.Collect(context.Background(), host, cfg)
			if !errors.Is(err, lakegc.ErrInvalidInput) || rep != nil {
				t.Errorf("Collect = %+v, %v; want ErrInvalidInput", rep, err)
			}
		})
	}
	if len(o.events) > 0 {
		t.Errorf("the host was called: %q", o.events)
	}
}

// A host that wrote its own commits report (HostCommits.Key) is reported
// with it, and Collect writes no second one.
func TestCollectHostCommitsReport(t *testing.T) {
	w := newWorld(t)
	o := newOwnHost(w)
	o.key = "_lakefs/retention/gc/commits/run_id=host-run/host-commits.csv"
	const body = "commit_id,expired,metarange_id\n"
	if err := w.bucket.WriteAll(context.Background(), o.key, []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	rep, err := lakegc.Collect(context.Background(), o.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Commits.Key != o.key || rep.Commits.Bytes != int64(len(body)) || rep.Commits.Active != 2 {
		t.Errorf("commits %+v, want the host's report %q of %d bytes", rep.Commits, o.key, len(body))
	}
	if own := "_lakefs/retention/gc/commits/run_id=host-run/commits.csv"; w.exists(own) {
		t.Errorf("Collect wrote %s beside the host's report", own)
	}
}
