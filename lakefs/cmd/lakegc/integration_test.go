package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// TestIntegrationGC runs "lakegc gc --sweep" against a real lakeFS
// (LAKEFS_BIN, or LAKEFS_ENDPOINT with a key pair; skipped otherwise) as of
// three days after the history was built, then checks through lakeFS that
// every object of every kept commit and every staged object still reads
// back, and that exactly the garbage is gone.
func TestIntegrationGC(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-cmd")
	h.VerifyBeforeGC(t, s)
	// gcAt fails the test unless the run exits 0 (and a sweep has no
	// failed or refused delete).
	now := h.Built.Add(3 * 24 * time.Hour)

	// A dry run deletes nothing.
	rep := gcAt(t, s, h.Repo, now)
	dryRun := rep.RunID
	h.VerifyBeforeGC(t, s)
	t.Logf("dry run: %d candidates of %d listed; %d kept commits", rep.Mark.Summary.NumDeletedObjects, rep.Mark.Listed, rep.Commits.Active)

	rep = gcAt(t, s, h.Repo, now, "--sweep")
	if rep.Sweep == nil || rep.Sweep.Failed+rep.Sweep.Refused != 0 {
		t.Fatalf("sweep report %+v", rep.Sweep)
	}
	if rep.Commits.Active != len(h.KeptCommits) {
		t.Errorf("%d kept commits, the history keeps %d (%v)", rep.Commits.Active, len(h.KeptCommits), h.KeptCommits)
	}
	h.VerifyAfterGC(t, s)
	if got, want := rep.Sweep.Deleted, int64(len(h.Garbage())); got != want {
		t.Errorf("deleted %d objects, the history has %d garbage objects", got, want)
	}
	t.Logf("sweep: %d deleted (%d garbage objects in the history), %d kept commits, %d listed\n%s",
		rep.Sweep.Deleted, len(h.Garbage()), rep.Commits.Active, rep.Mark.Listed, rep.logs)

	// An optimized run after them starts from the latest (the clock is
	// pinned, so both started in the same second: either may be it), and
	// finds nothing more to delete.
	swept := rep.RunID
	rep = gcAt(t, s, h.Repo, now, "--sweep", "--optimized")
	if s := rep.Mark.Summary; s.PreviousRunID != swept && s.PreviousRunID != dryRun || s.NumDeletedObjects != 0 || rep.Sweep == nil || rep.Sweep.Deleted != 0 {
		t.Errorf("optimized run after %s and %s: %+v, sweep %+v", dryRun, swept, s, rep.Sweep)
	}
	h.VerifyAfterGC(t, s)
	t.Logf("optimized run: %s, previous %s, %d slices listed, %d skipped, reason %q",
		rep.Mark.Summary.RunKind, rep.Mark.Summary.PreviousRunID, rep.Mark.Summary.SlicesListed, rep.Mark.Summary.SlicesSkipped, rep.Mark.Summary.CleanReason)
}

// TestIntegrationBareRepository: a repository without lakeFS's marker (one
// created bare, for a refs restore; here the marker is removed by hand) is
// refused before anything is read or written, with a clear error; with
// --init-namespace lakegc writes its own marker and collects. Needs a
// lakeFS on the local blockstore (LAKEFS_BIN).
func TestIntegrationBareRepository(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-bare")
	folder, ok := strings.CutPrefix(h.AddressNamespace, "local://")
	if !ok {
		t.Skipf("namespace %s is not local", h.Namespace)
	}
	if err := os.Remove(filepath.Join(filepath.FromSlash(folder), "_lakefs", "dummy")); err != nil {
		t.Fatal(err)
	}
	gc := func(args ...string) (int, string) {
		code, _, stderr := gcIn(t, s, s.BlockstorePath, h.Repo, h.Built.Add(3*24*time.Hour), args...)
		return code, stderr.String()
	}
	if code, logs := gc("--sweep"); code != exitFailed || !strings.Contains(logs, "no repository marker") || !strings.Contains(logs, "--init-namespace") {
		t.Fatalf("without a marker: exit %d\n%s", code, logs)
	}
	h.VerifyBeforeGC(t, s)
	if code, logs := gc("--sweep", "--init-namespace"); code != exitOK {
		t.Fatalf("--init-namespace: exit %d\n%s", code, logs)
	}
	h.VerifyAfterGC(t, s)
	if code, logs := gc(); code != exitOK {
		t.Fatalf("after --init-namespace, without it: exit %d\n%s", code, logs)
	}
}
