package lakegc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// DefaultKeepRuns is the number of runs of each kind the command keeps
// (lakegc gc --keep-runs).
const DefaultKeepRuns = 10

// PruneGrace is how recently a run's folder must have been written to for
// Prune to keep it whatever its rank: a run in progress (a mark, an export,
// lakeFS's own GC) is never pruned under it.
const PruneGrace = 24 * time.Hour

// PruneOptions configure Prune.
type PruneOptions struct {
	// StoragePrefix is the folder of lakeFS's files (default
	// DefaultStoragePrefix).
	StoragePrefix string
	// Keep is how many runs of each kind to keep, the newest (at least 1).
	Keep int
	// Clock is the time the grace is counted back from (default
	// time.Now): the store's clock, which dates the files.
	Clock func() time.Time
}

// PruneReport is what Prune removed.
type PruneReport struct {
	// Runs are the run folders removed.
	Runs []PrunedRun `json:"runs"`
	// Objects and Bytes total them.
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Kept counts the run folders kept.
	Kept int `json:"kept"`
}

// PrunedRun is a run folder Prune removed.
type PrunedRun struct {
	Folder  string    `json:"folder"`
	Written time.Time `json:"written"` // when its last object was written
	Objects int64     `json:"objects"`
	Bytes   int64     `json:"bytes"`
}

// Prune removes the files of old runs below the storage prefix: of the
// exports (retention/gc/uncommitted/), the commits reports (commits/) and
// the GC reports (unified/, with their failed/ lists and the records of
// optimized runs), all but the o.Keep newest of each kind, ranked by when
// their folder was last written. It always keeps
//
//   - every run folder written to within PruneGrace (a run in progress);
//   - the latest GC run (sweep.LatestRun), whose records the next optimized
//     run starts from;
//   - the latest successful GC run not swept yet (no sweep.json), which a
//     sweep of that run needs;
//   - the commits report of every GC report it keeps, which Explain of
//     that run reads. (An export's run ID is not in the report: exports
//     are ranked on their own; Explain does not read them.)
//
// Quarantines are not runs: quarantine.Purge (package sweep/quarantine) removes them. In a removed folder
// the JSON files go first (a report's summary.json, an export's manifest
// and state), so a prune stopped midway leaves a run that reads as
// unfinished, never as a smaller finished one; the next prune finishes it.
// Run it under the namespace's lease (package lease), as Collect does with
// Config.KeepRuns, or when no GC runs.
func Prune(ctx context.Context, bucket *blob.Bucket, o PruneOptions) (*PruneReport, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: Prune: nil bucket", ErrInvalidInput)
	}
	if o.Keep < 1 {
		return nil, fmt.Errorf("%w: Prune: Keep %d, want at least 1", ErrInvalidInput, o.Keep)
	}
	o.StoragePrefix = cmp.Or(o.StoragePrefix, DefaultStoragePrefix)
	if !layout.ValidPrefix(o.StoragePrefix) {
		return nil, fmt.Errorf("%w: Prune: storage prefix %q", ErrInvalidInput, o.StoragePrefix)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	protect, err := neededRuns(ctx, bucket, o.StoragePrefix)
	if err != nil {
		return nil, err
	}
	rep := &PruneReport{Runs: []PrunedRun{}}
	// Reports first: the commits report of each report kept is kept too
	// (Explain reads it).
	reports := layout.Runs(o.StoragePrefix, layout.Report)
	for _, kind := range []layout.RunKind{layout.Report, layout.Commits, layout.Uncommitted} {
		runs, err := runFolders(ctx, bucket, layout.Runs(o.StoragePrefix, kind))
		if err != nil {
			return rep, err
		}
		slices.SortFunc(runs, func(a, b PrunedRun) int {
			return cmp.Or(b.Written.Compare(a.Written), strings.Compare(b.Folder, a.Folder))
		})
		for i, r := range runs {
			if i < o.Keep || protect[r.Folder] || !r.Written.Before(o.Clock().Add(-PruneGrace)) {
				rep.Kept++
				if kind == layout.Report {
					id := strings.TrimSuffix(strings.TrimPrefix(r.Folder, reports), "/")
					protect[layout.RunPath(o.StoragePrefix, layout.Commits, id)] = true
				}
				continue
			}
			if err := removeRun(ctx, bucket, r.Folder); err != nil {
				return rep, err
			}
			rep.Runs = append(rep.Runs, r)
			rep.Objects += r.Objects
			rep.Bytes += r.Bytes
		}
	}
	return rep, nil
}

// neededRuns returns the report folders Prune keeps whatever their age: the
// latest run, and the latest successful run not swept.
func neededRuns(ctx context.Context, bucket *blob.Bucket, prefix string) (map[string]bool, error) {
	need := map[string]bool{}
	latest, err := sweep.LatestRun(ctx, bucket, prefix)
	if err != nil {
		return nil, fmt.Errorf("lakegc: prune: %w", err)
	}
	if latest != "" {
		need[layout.RunPath(prefix, layout.Report, latest)] = true
	}
	runs, err := runFolders(ctx, bucket, layout.Runs(prefix, layout.Report))
	if err != nil {
		return nil, err
	}
	var pending string
	var pendingStart time.Time
	for _, r := range runs {
		id := strings.TrimSuffix(strings.TrimPrefix(r.Folder, layout.Runs(prefix, layout.Report)), "/")
		sum, err := sweep.ReadSummary(ctx, bucket, prefix, id)
		if errors.Is(err, sweep.ErrNoRun) || errors.Is(err, sweep.ErrInvalidInput) {
			continue // no run to sweep
		}
		if err != nil {
			return nil, fmt.Errorf("lakegc: prune: %w", err)
		}
		if !sum.Success {
			continue
		}
		swept, err := bucket.Exists(ctx, r.Folder+"sweep.json")
		if err != nil {
			return nil, fmt.Errorf("lakegc: prune: %w", err)
		}
		if !swept && (pending == "" || sum.StartTime.After(pendingStart)) {
			pending, pendingStart = r.Folder, sum.StartTime
		}
	}
	if pending != "" {
		need[pending] = true
	}
	return need, nil
}

// runFolders lists the run folders under root, each with its objects, bytes
// and the time of its last write.
func runFolders(ctx context.Context, bucket *blob.Bucket, root string) ([]PrunedRun, error) {
	var runs []PrunedRun
	it := bucket.List(&blob.ListOptions{Prefix: root, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("lakegc: prune: list %s: %w", root, err)
		}
		if o.IsDir {
			runs = append(runs, PrunedRun{Folder: o.Key})
		}
	}
	for i := range runs {
		r := &runs[i]
		it := bucket.List(&blob.ListOptions{Prefix: r.Folder})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("lakegc: prune: list %s: %w", r.Folder, err)
			}
			r.Objects++
			r.Bytes += o.Size
			if o.ModTime.After(r.Written) {
				r.Written = o.ModTime
			}
		}
	}
	return runs, nil
}

// removeRun deletes a run folder, its JSON files first.
func removeRun(ctx context.Context, bucket *blob.Bucket, folder string) error {
	var first, rest []string
	it := bucket.List(&blob.ListOptions{Prefix: folder})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("lakegc: prune: list %s: %w", folder, err)
		}
		if strings.HasSuffix(o.Key, ".json") {
			first = append(first, o.Key)
		} else {
			rest = append(rest, o.Key)
		}
	}
	for _, k := range slices.Concat(first, rest) {
		if err := bucket.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("lakegc: prune: delete %s: %w", k, err)
		}
	}
	return nil
}

// runAndPrune runs the cycle, then, with Config.KeepRuns, prunes old runs
// into Report.Pruned. A failed cycle prunes nothing.
func (c *cycle) runAndPrune(ctx context.Context) error {
	if err := c.run(ctx); err != nil || c.cfg.KeepRuns == 0 {
		return err
	}
	// The grace is judged on the store's clock, which wrote the
	// modification times, not on Config.Clock, the time of the decisions.
	rep, err := Prune(ctx, c.cfg.Bucket, PruneOptions{StoragePrefix: c.cfg.StoragePrefix, Keep: c.cfg.KeepRuns})
	c.report.Pruned = rep
	if err != nil {
		return fmt.Errorf("lakegc: prune: %w", err)
	}
	if c.cfg.Logger != nil {
		c.cfg.Logger.Info("lakegc: pruned old runs", "runs", len(rep.Runs), "objects", rep.Objects, "bytes", rep.Bytes, "kept", rep.Kept)
	}
	return nil
}
