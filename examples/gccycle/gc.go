package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"path"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/uncommitted"
)

// gcOptions are the knobs of one GC cycle.
type gcOptions struct {
	// exportFileSize is the uncommitted export's size budget per file.
	exportFileSize int64
	// sweep deletes the candidates; without it the cycle only marks.
	sweep bool
	// progress, if set, sees the counters of the mark and the sweep.
	progress func(sweep.Progress)
}

// gcRun is what one GC cycle did.
type gcRun struct {
	exportStart time.Time
	exportRunID string
	exportFiles int
	exportRows  int64
	exportDir   string
	copyRecords int64 // rows of the export's trailer

	rules     *retention.Rules
	commits   int
	active    []retention.ActiveCommit
	runID     string
	commitCSV string

	minAge                time.Duration
	slices, slicesSkipped int // slices of data/, and those newer than the cutoff
	summary               *sweep.Summary
	counts                sweep.Progress // the mark's final counters
	candidates            []string
	sizes                 map[string]int64 // candidates' sizes, read before the sweep (-1: unknown)

	swept        *sweep.Result
	batchDeletes bool // the sweep used S3's DeleteObjects
}

// exportCallTime is the simulated duration of one call of the export.
const exportCallTime = 30 * time.Minute

// collect runs one GC cycle through lakegc.Collect, which keeps the order
// the GC's safety needs: the uncommitted export (copy records last, as its
// trailer) is complete before the committed data is read; then the active
// commits and their CSV; then the mark, anchored at the export's start.
// The cycle is a dry run; with opts.sweep, a second call sweeps what it
// marked, once the candidates' sizes are read for the report. between, if
// set, is called after each call of the export that leaves more to do,
// with the next mark: the store keeps working during a GC.
func (l *lake) collect(ctx context.Context, opts gcOptions, between func(next *uncommitted.Checkpoint) error) (*gcRun, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var storyErr error
	active := &activeCommits{store: l.store}
	cfg := lakegc.Config{
		Bucket:     l.bucket,
		Namespace:  l.namespace,
		Repository: repoID,
		// The host's signer uses the same TTL: an address handed out just
		// under it before the export can still be linked after it.
		LinkTTL:        l.linkTTL,
		MinAge:         l.linkTTL,
		Clock:          l.clock.Now,
		ExportFileSize: opts.exportFileSize,
		Progress: func(p lakegc.Progress) {
			if p.Phase != lakegc.PhaseExport {
				// The mark's and the sweep's counters; a phase's start
				// has none yet.
				if opts.progress != nil && p.Counters.Phase != "" {
					opts.progress(p.Counters)
				}
				return
			}
			// Exporting a large staging area takes a while: a mark taken
			// at the end of it would be a poor anchor for the cutoff.
			l.clock.advance(exportCallTime)
			if p.ExportNext != nil && between != nil && storyErr == nil {
				if storyErr = between(p.ExportNext); storyErr != nil {
					cancel()
				}
			}
		},
	}
	host := lakegc.Host{Staging: l.store, Commits: l.store, Committed: active, Copies: l.copies}
	report, err := lakegc.Collect(ctx, host, cfg)
	if storyErr != nil {
		return nil, storyErr
	}
	if err != nil {
		return nil, err
	}
	run := &gcRun{
		exportStart: report.Export.Start,
		exportRunID: report.ExportRunID,
		exportFiles: report.Export.Files,
		exportRows:  report.Export.Rows,
		exportDir:   report.Export.Location,
		copyRecords: report.Export.CopyRecords,
		rules:       report.Rules.Rules,
		commits:     len(l.store.order),
		active:      active.asked,
		runID:       report.RunID,
		commitCSV:   report.Commits.Key,
		minAge:      cfg.MinAge,
		summary:     report.Mark.Summary,
		counts:      sweep.Progress{Listed: report.Mark.Listed, Kept: report.Mark.Kept, Marked: report.Mark.Marked},
	}
	if err := l.readCandidates(ctx, run); err != nil {
		return nil, err
	}
	if !opts.sweep {
		return run, nil
	}
	// On S3, delete 1000 keys a request rather than one by one.
	if deleter, err := s3delete.FromBucket(l.bucket); err == nil {
		cfg.BatchDeleter = deleter
		run.batchDeletes = true
	}
	cfg.ResumeMark, cfg.Sweep = report.RunID, true
	swept, err := lakegc.Collect(ctx, lakegc.Host{}, cfg)
	if err != nil {
		return nil, err
	}
	run.swept = &sweep.Result{Deleted: swept.Sweep.Deleted, AlreadyGone: swept.Sweep.AlreadyGone,
		Failed: swept.Sweep.Failed, Refused: swept.Sweep.Refused}
	return run, nil
}

// activeCommits reads the committed addresses from the store, and keeps
// the active commits it was asked for, for the report.
type activeCommits struct {
	store *store
	asked []retention.ActiveCommit
}

func (a *activeCommits) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	a.asked = active
	return a.store.CommittedAddresses(ctx, active)
}

// readCandidates reads the marked candidates back, with their sizes, for
// the report.
func (l *lake) readCandidates(ctx context.Context, run *gcRun) error {
	for key, err := range sweep.Candidates(ctx, l.bucket, sweep.DefaultStoragePrefix, run.runID) {
		if err != nil {
			return fmt.Errorf("read candidates: %w", err)
		}
		run.candidates = append(run.candidates, key)
	}
	if err := l.countSlices(ctx, run); err != nil {
		return err
	}
	run.sizes = map[string]int64{}
	for _, key := range run.candidates {
		run.sizes[key] = -1
		if attrs, err := l.bucket.Attributes(ctx, key); err == nil {
			run.sizes[key] = attrs.Size
		}
	}
	return nil
}

// countSlices counts the slices of data/, and those the mark skipped
// because they started at or after the cutoff.
func (l *lake) countSlices(ctx context.Context, run *gcRun) error {
	it := l.bucket.List(&blob.ListOptions{Prefix: l.paths.CommonPrefix() + "/", Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list slices: %w", err)
		}
		name := path.Base(obj.Key)
		id, err := xid.FromString(name)
		if !obj.IsDir || err != nil {
			continue
		}
		run.slices++
		if !pathprovider.DescendingTime(id).Before(run.summary.CutoffTime) {
			run.slicesSkipped++
		}
	}
}
