package lakegc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// TestPruneKeepsWhatIsNeeded builds run folders of every kind, dated by
// their files, and checks Prune against a model: the Keep newest of each
// kind stay, and so do the latest GC run, the latest successful run not
// swept, and anything written within the grace; everything else goes,
// counted.
func TestPruneKeepsWhatIsNeeded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := lakegc.DefaultStoragePrefix
	write := func(key, body string, at time.Time) {
		t.Helper()
		if err := b.WriteAll(ctx, key, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// Runs r00 (oldest) to r13, one a day, ending 2 days ago; r13 is
	// within the grace, written an hour ago.
	var all []string
	summary := func(id string, ok bool, start time.Time) string {
		return fmt.Sprintf(`{"run_id":%q,"success":%v,"start_time":%q,"cutoff_time":%q,"num_deleted_objects":0}`, id, ok, start.Format(time.RFC3339), start.Add(-24*time.Hour).Format(time.RFC3339))
	}
	for i := range 14 {
		id := fmt.Sprintf("r%02d", i)
		at := now.Add(time.Duration(i-15) * 24 * time.Hour)
		if i == 13 {
			at = now.Add(-time.Hour)
		}
		write(layout.CommitsKey(p, id), "commit_id,expired,metarange_id\n", at)
		write(layout.UncommittedFiles(p, id)+"part-0.parquet", "pq", at)
		write(layout.ExportStateKey(p, id), "{}", at)
		rep := layout.RunPath(p, layout.Report, id)
		write(rep+"deleted/part-0.parquet", "pq", at)
		// r01 is a dry run never swept: the newest successful run not
		// swept is r01 only if every later one was swept or failed.
		// r12 failed. Every other run was swept.
		write(rep+layout.SummaryFile, summary(id, i != 12, at), at)
		if i != 1 && i != 12 {
			write(rep+"sweep.json", "{}", at)
		}
		all = append(all, id)
	}
	res, err := lakegc.Prune(ctx, b, lakegc.PruneOptions{Keep: 3, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(key string) bool {
		ok, err := b.Exists(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	var pruned int
	for i, id := range all {
		newest := i >= 11 // r11, r12, r13 are the 3 newest
		keepReport := newest || id == "r01"
		for _, c := range []struct {
			key  string
			keep bool
		}{
			// A kept report's commits report is kept: Explain reads it.
			{layout.CommitsKey(p, id), keepReport},
			{layout.ExportStateKey(p, id), newest},
			{layout.UncommittedFiles(p, id) + "part-0.parquet", newest},
			{layout.RunPath(p, layout.Report, id) + layout.SummaryFile, keepReport},
			{layout.RunPath(p, layout.Report, id) + "deleted/part-0.parquet", keepReport},
		} {
			if got := exists(c.key); got != c.keep {
				t.Errorf("%s: kept %v, want %v", c.key, got, c.keep)
			}
		}
		if !newest {
			pruned++
			if !keepReport {
				pruned += 2
			}
		}
	}
	if len(res.Runs) != pruned || res.Objects == 0 || res.Bytes == 0 {
		t.Errorf("report: %d runs, %d objects, %d bytes; want %d runs", len(res.Runs), res.Objects, res.Bytes, pruned)
	}
	// The latest run (by its summary) is what the next optimized run
	// starts from: still readable.
	latest, err := sweep.LatestRun(ctx, b, p)
	if err != nil || latest != "r13" {
		t.Errorf("LatestRun = %q, %v", latest, err)
	}
	for _, r := range res.Runs {
		if strings.Contains(r.Folder, "r13") || strings.Contains(r.Folder, "r01/") && strings.Contains(r.Folder, "unified") {
			t.Errorf("pruned %s", r.Folder)
		}
	}
	// Twice is a no-op.
	again, err := lakegc.Prune(ctx, b, lakegc.PruneOptions{Keep: 3, Clock: func() time.Time { return now }})
	if err != nil || len(again.Runs) != 0 {
		t.Errorf("second prune: %+v, %v", again, err)
	}
	if _, err := lakegc.Prune(ctx, b, lakegc.PruneOptions{}); !errors.Is(err, lakegc.ErrInvalidInput) {
		t.Errorf("Keep 0: %v", err)
	}
}

// Cycles with KeepRuns prune as they go; an optimized run after the prune
// still starts from the latest run, and a dry run's candidates can still be
// swept (ResumeMark) after later cycles pruned.
func TestCollectKeepRuns(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	cfg := w.config()
	cfg.KeepRuns = 2
	// age moves every file of the storage prefix 3 days back, keeping
	// their order: out of the grace.
	age := func() {
		t.Helper()
		root := filepath.Join(w.dir, lakegc.DefaultStoragePrefix)
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
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
	}
	var ids []string
	for i := range 5 {
		if i == 4 {
			age()
		}
		time.Sleep(10 * time.Millisecond) // distinct modification times
		at := gcTime.Add(time.Duration(i) * 48 * time.Hour)
		cfg.Clock = func() time.Time { return at }
		cfg.Sweep = i != 4 // the last is a dry run, pending
		rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		ids = append(ids, rep.RunID)
		if i == 4 && (rep.Pruned == nil || len(rep.Pruned.Runs) == 0) {
			t.Errorf("cycle %d pruned nothing: %+v", i, rep.Pruned)
		}
	}
	// The dry run's candidates can be swept.
	cfg.ResumeMark, cfg.Sweep = ids[4], true
	if _, err := lakegc.Collect(ctx, w.host.host(), cfg); err != nil {
		t.Fatalf("sweeping the pending run: %v", err)
	}
	cfg.ResumeMark, cfg.Optimized = "", true
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mark.Summary.PreviousRunID != ids[4] {
		t.Errorf("optimized run's previous %q, want %q", rep.Mark.Summary.PreviousRunID, ids[4])
	}
}
