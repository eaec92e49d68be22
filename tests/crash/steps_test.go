//go:build unix

package crash

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
	"github.com/lakegc/lakegc/uncommitted"
)

// The steps a child runs. Each is written as a host runs it after a crash:
// it reads what it recorded (in a local file, the host's own database, not
// in the bucket) and continues.
const (
	stepExport  = "export"  // the uncommitted export, resumed from the host's last recorded mark
	stepMark    = "mark"    // sweep.Mark of a finished export, rerun with the same run ID
	stepSweep   = "sweep"   // sweep.Sweep of a finished mark, rerun
	stepResweep = "resweep" // sweep.Sweep of a mark swept before with failures, rerun
	stepCollect = "collect" // lakegc.Collect with Sweep, resumed as the root package documents

	stepQuarantine = "quarantine" // sweep.Sweep with quarantine.Mover of a finished mark, rerun
	stepRestore    = "restore"    // quarantine.Restore of a finished quarantine, rerun
	stepPurge      = "purge"      // quarantine.Purge of a finished quarantine, rerun
)

var steps = []string{stepExport, stepMark, stepSweep, stepResweep, stepCollect, stepQuarantine, stepRestore, stepPurge}

// quarantineSteps are the steps that start from a finished mark and work
// with its quarantine.
var quarantineSteps = []string{stepQuarantine, stepRestore, stepPurge}

// purgeAge is how long after the world's now the purge runs, with an age
// of 0: every quarantine is past its days.
const purgeAge = time.Hour

// exportFileSize is the size budget of an export file: a few rows, so that
// an export is many calls and files.
const exportFileSize = 300

// markBudget is the mark's memory budget: the smallest, so that it spills.
const markBudget = 4 << 10

// runStep runs step on the world in dir through bucket (the killing one).
func runStep(ctx context.Context, step, dir string, w *world, bucket *blob.Bucket) error {
	switch step {
	case stepExport:
		return hostExport(ctx, dir, w, bucket)
	case stepMark:
		_, err := sweep.Mark(ctx, bucket, w.MarkRunID, markInputs(ctx, w, bucket), markOptions(dir, w)...)
		if errors.Is(err, sweep.ErrRunExists) {
			return nil // a run killed after its summary: done
		}
		return err
	case stepSweep, stepResweep:
		// One batch at a time, so that a kill at the first delete of a
		// batch lands between batches.
		_, err := sweep.Sweep(ctx, bucket, w.MarkRunID, append(sweepOptions(w), sweep.WithDeleteConcurrency(1))...)
		return err
	case stepCollect:
		return collect(ctx, dir, w, bucket)
	case stepQuarantine:
		_, err := sweep.Sweep(ctx, bucket, w.MarkRunID, quarantineOptions(dir, w)...)
		return err
	case stepRestore:
		res, err := quarantine.Restore(ctx, bucket, w.MarkRunID, nil, sweepOptions(w)...)
		if err == nil && len(res.Refused)+len(res.Missing) > 0 {
			err = fmt.Errorf("restore left objects in the quarantine: %+v", res)
		}
		return err
	case stepPurge:
		_, err := quarantine.Purge(ctx, bucket, 0, sweep.WithClock(func() time.Time { return w.Now.Add(purgeAge) }))
		return err
	}
	return fmt.Errorf("unknown step %q", step)
}

// hostState is the host's record of its export: the run it started and
// the continuation token of its next call.
type hostState struct {
	RunID string `json:"run_id"`
	Next  string `json:"next"`
	Done  bool   `json:"done"`
}

func hostStateFile(dir string) string { return filepath.Join(dir, "host-export.json") }

func readJSON(name string, v any) (bool, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}

func writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(name, b)
}

// hostExport runs the export as a host drives uncommitted.Preparer: it
// names the run and records it before the first call, records the token
// after each call, and after a crash continues from the last token it
// recorded.
func hostExport(ctx context.Context, dir string, w *world, bucket *blob.Bucket) error {
	var st hostState
	if _, err := readJSON(hostStateFile(dir), &st); err != nil {
		return err
	}
	if st.RunID == "" {
		st.RunID = retention.NewRunID(w.Now)
		if err := writeJSON(hostStateFile(dir), st); err != nil {
			return err
		}
	}
	return exportRun(ctx, w, bucket, st, func(st hostState) error { return writeJSON(hostStateFile(dir), st) })
}

// exportRun continues the export st until it is done, calling record after
// each call.
func exportRun(ctx context.Context, w *world, bucket *blob.Bucket, st hostState, record func(hostState) error) error {
	p := must(uncommitted.NewPreparer(bucket, uncommitted.WithMaxFileSize(exportFileSize), uncommitted.WithoutTimeBudget(),
		uncommitted.WithClock(func() time.Time { return w.Now }), uncommitted.WithRunID(func() string { return st.RunID })))
	repo := uncommitted.Repository{ID: "crash", StorageNamespace: "file:///crash"}
	for !st.Done {
		mark, err := uncommitted.DecodeToken(st.Next)
		if err != nil {
			return err
		}
		res, err := p.Prepare(ctx, repo, w, mark)
		if err != nil {
			return err
		}
		st.Next, st.Done = uncommitted.EncodeToken(res.Checkpoint), res.Checkpoint == nil
		if err := record(st); err != nil {
			return err
		}
	}
	return nil
}

// markInputs are the mark step's keep set: the finished export, read back
// from the bucket, and the files of the branches' heads.
func markInputs(ctx context.Context, w *world, bucket *blob.Bucket) sweep.Inputs {
	var active []retention.ActiveCommit
	for _, b := range slices.Sorted(maps.Keys(w.Tips)) {
		active = append(active, retention.ActiveCommit{CommitID: w.Tips[b]})
	}
	return sweep.Inputs{
		Uncommitted: uncommitted.Addresses(ctx, bucket, lakegc.DefaultStoragePrefix, w.ExportRunID),
		Committed:   w.CommittedAddresses(ctx, active),
		ExportStart: w.Now,
	}
}

func markOptions(dir string, w *world) []sweep.MarkOption {
	return []sweep.MarkOption{sweep.WithMinAge(minAge), sweep.WithClock(func() time.Time { return w.Now }),
		sweep.WithTempDir(spillDir(dir)), sweep.WithMemoryBudget(markBudget)}
}

// sweepOptions are the options of markOptions that Sweep takes.
func sweepOptions(w *world) []sweep.SweepOption {
	return []sweep.SweepOption{sweep.WithClock(func() time.Time { return w.Now })}
}

// quarantineOptions are the options of a sweep into the quarantine, one
// batch at a time.
func quarantineOptions(dir string, w *world) []sweep.SweepOption {
	return append(sweepOptions(w), sweep.WithMover(quarantine.Mover{}), sweep.WithDeleteConcurrency(1))
}

// cycleState is the host's record of a cycle of Collect, kept from its
// Progress reports: the IDs it needs to resume after a crash.
type cycleState struct {
	ExportRunID string `json:"export_run_id"`
	RunID       string `json:"run_id"`
}

func cycleStateFile(dir string) string { return filepath.Join(dir, "host-cycle.json") }

// collect runs a cycle of Collect with Sweep, resuming what the host
// recorded as the root package documents: the sweep of a mark that
// succeeded (ResumeMark), else the export it started (ResumeExport), else
// a new cycle. The host records an export's run ID only once Collect
// reported it, after its first call, so a resume is never refused.
func collect(ctx context.Context, dir string, w *world, bucket *blob.Bucket) error {
	var st cycleState
	if _, err := readJSON(cycleStateFile(dir), &st); err != nil {
		return err
	}
	cfg := lakegc.Config{
		Bucket: bucket, Namespace: "file:///crash", Repository: "crash", Sweep: true,
		MinAge: minAge, TempDir: spillDir(dir), MemoryBudget: markBudget, ExportFileSize: exportFileSize,
		Clock: func() time.Time { return w.Now },
	}
	cfg.Progress = func(p lakegc.Progress) {
		// A resumed mark reports no export: keep the one recorded.
		next := cycleState{ExportRunID: cmp.Or(p.ExportRunID, st.ExportRunID), RunID: cmp.Or(p.RunID, st.RunID)}
		if next != st {
			st = next
			if err := writeJSON(cycleStateFile(dir), st); err != nil {
				panic(err)
			}
		}
	}
	host := lakegc.Host{Staging: w, Commits: w, Committed: w}
	again := cfg
	switch {
	case st.RunID != "" && markSucceeded(ctx, bucket, st.RunID):
		again.ResumeMark = st.RunID
	case st.ExportRunID != "":
		again.ResumeExport = st.ExportRunID
	}
	_, err := lakegc.Collect(ctx, host, again)
	return err
}

func markSucceeded(ctx context.Context, bucket *blob.Bucket, runID string) bool {
	sum, err := sweep.ReadSummary(ctx, bucket, lakegc.DefaultStoragePrefix, runID)
	return err == nil && sum.Success
}

// deniedDeleter deletes the keys whose hash is not a multiple of five, and
// is refused the others (gcerrors.PermissionDenied), which Sweep lists in
// failed/ at once: the first sweep of the resweep step.
type deniedDeleter struct{ bucket *blob.Bucket }

type deniedErr struct{}

func (deniedErr) Error() string                 { return "crash: access denied" }
func (deniedErr) ErrorCode() gcerrors.ErrorCode { return gcerrors.PermissionDenied }

func (d deniedDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	failed := map[string]error{}
	for _, k := range keys {
		if crc32.ChecksumIEEE([]byte(k))%5 == 0 {
			failed[k] = deniedErr{}
		} else if err := d.bucket.Delete(ctx, k); err != nil {
			failed[k] = err
		}
	}
	return failed, nil
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
