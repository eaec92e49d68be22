package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// TestIntegrationPrune: on a real lakeFS, runs of gc leave exports,
// commits reports and GC reports; once they are older than the grace, a run
// with --keep-runs 1 prunes the older ones and reports them, and the next
// optimized run still starts from the latest run and finds nothing more.
func TestIntegrationPrune(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-prune")
	now := h.Built.Add(3 * 24 * time.Hour)
	gcAt(t, s, h.Repo, now)
	gcAt(t, s, h.Repo, now, "--sweep")
	gcAt(t, s, h.Repo, now)
	// Every file of the GC's folders three days older, in their order.
	err := filepath.WalkDir(s.BlockstorePath, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(filepath.ToSlash(path), "/_lakefs/") {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		at := st.ModTime().Add(-72 * time.Hour)
		return os.Chtimes(path, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := gcAt(t, s, h.Repo, now, "--keep-runs", "1")
	if rep.Pruned == nil || len(rep.Pruned.Runs) == 0 || rep.Pruned.Bytes <= 0 {
		t.Fatalf("pruned %+v", rep.Pruned)
	}
	for _, r := range rep.Pruned.Runs {
		if strings.Contains(r.Folder, rep.RunID) || strings.Contains(r.Folder, rep.ExportRunID) {
			t.Errorf("pruned the run's own %s", r.Folder)
		}
	}
	t.Logf("pruned %d run folders, %d objects, %d bytes, kept %d", len(rep.Pruned.Runs), rep.Pruned.Objects, rep.Pruned.Bytes, rep.Pruned.Kept)
	// The clock is pinned, so every run started in the same second: the
	// latest is the greatest ID among them (sweep.LatestRun), the one the
	// prune kept for the next optimized run, which must find it whole.
	opt := gcAt(t, s, h.Repo, now, "--sweep", "--optimized", "--keep-runs", "1")
	sum := opt.Mark.Summary
	if sum.RunKind != "optimized" || sum.PreviousRunID == "" || sum.CleanReason != "" || sum.NumDeletedObjects != 0 {
		t.Errorf("optimized run after the prune: previous %q, kind %s (%q), %d candidates", sum.PreviousRunID, sum.RunKind, sum.CleanReason, sum.NumDeletedObjects)
	}
	// (Its commits report may go: only its report folder is needed.)
	for _, r := range rep.Pruned.Runs {
		if strings.HasSuffix(r.Folder, layout.RunPath("", layout.Report, sum.PreviousRunID)) {
			t.Errorf("the optimized run started from %s, whose report the prune removed", sum.PreviousRunID)
		}
	}
	h.VerifyAfterGC(t, s)
}
