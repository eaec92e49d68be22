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
	// sweepOptions are added to the mark and the sweep (deleter, temp dir…).
	sweepOptions []sweep.Option
}

// gcRun is what one GC cycle did.
type gcRun struct {
	exportStart time.Time
	exportRunID string
	exportFiles int
	exportRows  int64
	exportDir   string
	copyRecords int // rows of the export's trailer

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

	swept        *sweep.SweepResult
	batchDeletes bool // the sweep used S3's DeleteObjects
}

// collect runs one GC cycle in the order the GC's safety needs: the
// uncommitted export (copy records last, as its trailer) is complete before
// the committed data is read; then the active commits and their CSV; then
// the mark, anchored at the export's start; then, if asked, the sweep.
// between, if set, is called after each call of the export that leaves
// more to do, with the next mark: the store keeps working during a GC.
func (l *lake) collect(ctx context.Context, opts gcOptions, between func(next *uncommitted.Mark) error) (*gcRun, error) {
	// The cutoff is anchored here, before the first Prepare call: an
	// upload linked after the export passed its path is in neither input.
	run := &gcRun{exportStart: l.clock.Now()}
	if err := l.export(ctx, run, opts.exportFileSize, between); err != nil {
		return nil, err
	}
	if err := l.activeCommits(ctx, run); err != nil {
		return nil, err
	}
	if err := l.mark(ctx, run, opts); err != nil {
		return nil, err
	}
	if !opts.sweep {
		return run, nil
	}
	return run, l.sweep(ctx, run, opts)
}

// activeCommits reads the GC rules, computes the commits retention keeps
// and writes their CSV. It runs after the export: a commit made during the
// export holds objects the export may not have seen staged.
func (l *lake) activeCommits(ctx context.Context, run *gcRun) error {
	rules, err := l.rules.Get(ctx)
	if err != nil {
		return fmt.Errorf("read GC rules: %w", err)
	}
	run.rules = rules
	run.commits = len(l.store.order)
	now := l.clock.Now()
	run.active, err = retention.ActiveCommits(ctx, l.store.refs(), l.store, rules, now)
	if err != nil {
		return fmt.Errorf("active commits: %w", err)
	}
	run.runID = retention.NewRunID(now)
	run.commitCSV, err = retention.WriteCommitsCSV(ctx, l.bucket, retention.DefaultStoragePrefix, run.runID, run.active)
	if err != nil {
		return fmt.Errorf("write commits CSV: %w", err)
	}
	return nil
}

// mark marks the garbage: the uncommitted rows are read first, then the
// committed addresses, and nothing newer than the export's start minus
// the minimum age is a candidate. It then reads the candidates back, with
// their sizes, for the report.
func (l *lake) mark(ctx context.Context, run *gcRun, opts gcOptions) error {
	// The minimum age must cover the link TTL: an address handed out just
	// under it before the export can still be linked after it.
	run.minAge = l.linkTTL
	markOpts := append([]sweep.Option{
		sweep.WithClock(l.clock.Now),
		sweep.WithLinkTTL(l.linkTTL),
		sweep.WithMinAge(run.minAge),
		sweep.WithProgress(func(p sweep.Progress) {
			run.counts = p
			if opts.progress != nil {
				opts.progress(p)
			}
		}),
	}, opts.sweepOptions...)
	var err error
	run.summary, err = sweep.Mark(ctx, l.bucket, run.runID, sweep.Inputs{
		Uncommitted: exported(ctx, l, run.exportRunID),
		Committed:   l.store.committed(run.active),
		ExportStart: run.exportStart,
	}, markOpts...)
	if err != nil {
		return fmt.Errorf("mark: %w", err)
	}
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

// sweep deletes the marked candidates.
func (l *lake) sweep(ctx context.Context, run *gcRun, opts gcOptions) error {
	sweepOpts := append([]sweep.Option{sweep.WithClock(l.clock.Now)}, opts.sweepOptions...)
	// On S3, delete 1000 keys a request rather than one by one.
	if deleter, err := s3delete.FromBucket(l.bucket); err == nil {
		sweepOpts = append(sweepOpts, sweep.WithBatchDeleter(deleter))
		run.batchDeletes = true
	}
	if opts.progress != nil {
		sweepOpts = append(sweepOpts, sweep.WithProgress(opts.progress))
	}
	var err error
	run.swept, err = sweep.Sweep(ctx, l.bucket, run.runID, sweepOpts...)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// exportCallTime is the simulated duration of one call of the export.
const exportCallTime = 20 * time.Minute

// export runs the uncommitted export to completion, one Prepare call (one
// file) at a time, as a host's GC job would across API calls.
func (l *lake) export(ctx context.Context, run *gcRun, fileSize int64, between func(*uncommitted.Mark) error) error {
	if _, err := l.copies.Expire(ctx, repoID); err != nil {
		return fmt.Errorf("expire copy records: %w", err)
	}
	p := uncommitted.NewPreparer(l.bucket,
		uncommitted.WithClock(l.clock.Now),
		uncommitted.WithMaxFileSize(fileSize),
		uncommitted.WithTrailer(func(ctx context.Context) iter.Seq2[string, error] {
			return l.copies.Addresses(ctx, repoID)
		}),
	)
	repo := uncommitted.Repository{ID: repoID, StorageNamespace: l.namespace}
	var mark *uncommitted.Mark
	for {
		res, err := p.Prepare(ctx, repo, l.store, mark)
		if err != nil {
			return fmt.Errorf("uncommitted export: %w", err)
		}
		run.exportRunID = res.RunID
		if res.Filename != "" {
			run.exportFiles++
			run.exportRows += res.Rows
			run.exportDir = res.Location
		}
		// Exporting a large staging area takes a while: a mark taken at
		// the end of it would be a poor anchor for the cutoff.
		l.clock.advance(exportCallTime)
		if mark = res.Mark; mark == nil {
			return l.countCopyRecords(ctx, run)
		}
		if between != nil {
			if err := between(mark); err != nil {
				return err
			}
		}
	}
}

// countCopyRecords counts the copy records the export's trailer read.
func (l *lake) countCopyRecords(ctx context.Context, run *gcRun) error {
	for _, err := range l.copies.Addresses(ctx, repoID) {
		if err != nil {
			return fmt.Errorf("count copy records: %w", err)
		}
		run.copyRecords++
	}
	return nil
}

// exported yields the addresses of an uncommitted run, once its manifest
// shows it complete.
func exported(ctx context.Context, l *lake, runID string) iter.Seq2[string, error] {
	return uncommitted.Addresses(ctx, l.bucket, uncommitted.DefaultStoragePrefix, runID)
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
