package lakegc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// ErrSuperseded is wrapped by the error of a sweep of a mark that a later
// mark of the same namespace superseded (Config.ResumeMark with Sweep, and
// SweepRun), unless Config.SweepSuperseded is set.
var ErrSuperseded = errors.New("lakegc: the mark was superseded by a later mark")

// SweepRun deletes the candidates of runID, a finished mark of the
// namespace (Report.RunID of a dry run of Collect): it is Collect with
// Config.ResumeMark runID and Config.Sweep, and reads nothing of a host. The
// review-then-sweep workflow is Collect without Sweep, a look at the
// candidates (Candidates, Explain), then SweepRun with the dry run's ID:
// exactly the candidates that run marked are deleted (sweep.Sweep).
//
// A mark that a later mark of the namespace superseded is refused with
// ErrSuperseded, naming the later runs: an object it found garbage may have
// become live since (a branch reset to an old commit, a copy of an old
// address), which only the later mark saw. Config.SweepSuperseded sweeps it
// anyway. A failed or unknown run is refused as sweep.Sweep refuses it
// (sweep.ErrRunFailed, sweep.ErrNoRun).
//
// The check and the deletes are not one atomic step: a mark that finishes
// after the check, or one still running (a run folder without a summary
// does not count), is not seen. Run one GC of a repository at a time.
func SweepRun(ctx context.Context, cfg Config, runID string) (*Report, error) {
	if runID == "" {
		return nil, fmt.Errorf("%w: no run ID to sweep", ErrInvalidInput)
	}
	cfg.ResumeMark, cfg.Sweep = runID, true
	return Collect(ctx, Host{}, cfg)
}

// LaterRuns returns the IDs of the marks of the namespace in bucket that
// supersede runID: every other run with a summary (successful or not, by
// Mark or by lakeFS's Spark client) whose start time is at or after
// runID's, or unknown (a summary without a start time), newest first, but
// for the runs of the other shards of a mark split the same way
// (sweep.WithShard: the same shard count, another index), whose slices are
// disjoint from runID's: their marks judged none of its objects, whether
// they were one mark's shards or another's, and each shard is its own run
// with its own cutoff (package lakefs/host, "Shards"). The shard of runID's
// index in a later mark split the same way does supersede it. A run folder
// without a summary (a mark still
// running, or killed) does not count. An unreadable summary is an error: it
// may be a later run's. An empty storagePrefix is DefaultStoragePrefix.
func LaterRuns(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string) ([]string, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: no Bucket", ErrInvalidInput)
	}
	if storagePrefix == "" {
		storagePrefix = DefaultStoragePrefix
	}
	sum, err := sweep.ReadSummary(ctx, bucket, storagePrefix, runID)
	if err != nil {
		return nil, fmt.Errorf("lakegc: later runs: %w", err)
	}
	return laterRuns(ctx, bucket, storagePrefix, runID, sum)
}

// laterRuns is LaterRuns of the run in the folder runID, whose summary is
// of: the run is told by its folder, not by the run_id its summary says.
func laterRuns(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, of *sweep.Summary) ([]string, error) {
	dir := layout.Runs(storagePrefix, layout.Report)
	type run struct {
		id    string
		start time.Time
	}
	var later []run
	it := bucket.List(&blob.ListOptions{Prefix: dir, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("lakegc: later runs: list %s: %w", dir, err)
		}
		id, folder := strings.CutSuffix(strings.TrimPrefix(o.Key, dir), "/")
		if !o.IsDir || !folder || id == runID || !validRunID(id) {
			continue
		}
		sum, err := sweep.ReadSummary(ctx, bucket, storagePrefix, id)
		if errors.Is(err, sweep.ErrNoRun) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lakegc: later runs: %w", err)
		}
		if otherShard(sum, of) {
			continue // another shard's slices: its mark judged none of of's objects
		}
		// A run whose start is unknown may be later: it counts.
		if sum.StartTime.IsZero() || !sum.StartTime.Before(of.StartTime) {
			later = append(later, run{id, sum.StartTime})
		}
	}
	sort.Slice(later, func(i, j int) bool {
		if !later[i].start.Equal(later[j].start) {
			return later[i].start.After(later[j].start)
		}
		return later[i].id > later[j].id
	})
	ids := make([]string, len(later))
	for i, r := range later {
		ids[i] = r.id
	}
	return ids, nil
}

// otherShard reports whether a and b are shards of marks split the same
// way (sweep.WithShard: the same shard count) with other indexes: their
// slices are disjoint (sweep.SliceShard), and so are their candidates.
func otherShard(a, b *sweep.Summary) bool {
	return a.ShardCount > 1 && a.ShardCount == b.ShardCount && a.ShardIndex != b.ShardIndex
}

// checkNotSuperseded refuses to sweep the mark runID, whose summary is
// sum, when a later mark exists.
func checkNotSuperseded(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, sum *sweep.Summary) error {
	later, err := laterRuns(ctx, bucket, storagePrefix, runID, sum)
	if err != nil {
		return err
	}
	if len(later) == 0 {
		return nil
	}
	more := ""
	if len(later) > 1 {
		more = fmt.Sprintf(" and %d more", len(later)-1)
	}
	return fmt.Errorf("%w: %s%s started after it; an object it marked may have become live again since (a branch reset, a copy of an old address): sweep the latest successful mark (or make a new one), or force this one", ErrSuperseded, later[0], more)
}

// Candidate is one object a mark marked for deletion, as Candidates
// describes it.
type Candidate struct {
	// Address is the key, relative to the namespace.
	Address string `json:"address"`
	// Size and ModTime are the object's, as the bucket says now; zero
	// when Gone.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time,omitzero"`
	// Slice is the data slice that holds it, if any.
	Slice string `json:"slice,omitempty"`
	// Reason says what kind of object it is and why the mark took it for
	// garbage, as far as its key and the mark's summary tell.
	Reason string `json:"reason"`
	// Gone is set when the object no longer exists (swept already).
	Gone bool `json:"gone,omitempty"`
}

// candidateStats is how many candidates Candidates stats at once.
const candidateStats = 16

// Candidates yields the candidates of runID, a finished mark of the
// namespace in cfg.Bucket (cfg.StoragePrefix, cfg.DataPrefix and
// cfg.Include as the mark had them), in the order of its report, each
// statted through the bucket (one request each, up to 16 at once): its
// size, modification time, slice, and a reason told from its key. A failed
// mark's run gives sweep.ErrRunFailed, an unknown one sweep.ErrNoRun; a
// candidate the bucket no longer holds is yielded with Gone. It stops at
// the first error.
func Candidates(ctx context.Context, cfg Config, runID string) iter.Seq2[Candidate, error] {
	return candidates(ctx, cfg, runID, 0)
}

// CandidatePage returns the candidates of runID from the offset-th (0 the
// first) in the order of the run's report, at most limit of them (0: all),
// as Candidates describes them, and the offset of the next page: 0 after
// the last. The candidates before offset are read from the report but not
// statted.
func CandidatePage(ctx context.Context, cfg Config, runID string, offset, limit int) (page []Candidate, next int, err error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("%w: negative offset %d or limit %d", ErrInvalidInput, offset, limit)
	}
	page = []Candidate{}
	i := offset
	for c, err := range candidates(ctx, cfg, runID, offset) {
		if err != nil {
			return nil, 0, err
		}
		if limit > 0 && len(page) == limit {
			return page, i, nil
		}
		page = append(page, c)
		i++
	}
	return page, 0, nil
}

// candidates yields the candidates of runID after the first skip, statted.
func candidates(ctx context.Context, cfg Config, runID string, skip int) iter.Seq2[Candidate, error] {
	return func(yield func(Candidate, error) bool) {
		s := cfg.withDefaults()
		if s.Bucket == nil {
			yield(Candidate{}, fmt.Errorf("%w: no Bucket", ErrInvalidInput))
			return
		}
		sum, err := sweep.ReadSummary(ctx, s.Bucket, s.StoragePrefix, runID)
		if err == nil && !sum.Success {
			err = fmt.Errorf("%w: %s", sweep.ErrRunFailed, runID)
		}
		if err != nil {
			yield(Candidate{}, fmt.Errorf("lakegc: candidates: %w", err))
			return
		}
		batch := make([]Candidate, 0, candidateStats*4)
		flush := func() bool {
			if err := statAll(ctx, s.Bucket, batch); err != nil {
				yield(Candidate{}, fmt.Errorf("lakegc: candidates: %w", err))
				return false
			}
			for _, c := range batch {
				if !yield(c, nil) {
					return false
				}
			}
			batch = batch[:0]
			return true
		}
		for a, err := range sweep.Candidates(ctx, s.Bucket, s.StoragePrefix, runID) {
			if err != nil {
				yield(Candidate{}, fmt.Errorf("lakegc: candidates: %w", err))
				return
			}
			if skip > 0 {
				skip--
				continue
			}
			slice, reason := shapeReason(a, s.DataPrefix, s.Include)
			batch = append(batch, Candidate{Address: a, Slice: slice, Reason: reason + "; " + markedWhy(sum)})
			if len(batch) == cap(batch) && !flush() {
				return
			}
		}
		if len(batch) > 0 {
			flush()
		}
	}
}

// markedWhy is why any candidate of a mark was marked.
func markedWhy(sum *sweep.Summary) string {
	return "older than the cutoff " + sum.CutoffTime.Format(time.RFC3339) +
		", referenced by no kept commit and not staged (an expired commit's, gone from staging, or never linked)"
}

// shapeReason tells the kind of object key is, from its shape.
func shapeReason(key, data string, include []string) (slice, reason string) {
	for _, p := range include {
		if strings.HasPrefix(key, p) {
			return "", "under the include prefix " + p
		}
	}
	// The slice is the folder right under the data folder, which may
	// itself be nested ("lake/data").
	inData, _ := strings.CutPrefix(key, data+"/")
	switch layout.Recognize(key, data) {
	case layout.Slice:
		slice, _, _ = strings.Cut(inData, "/")
		reason = "in slice " + slice
	case layout.SignedSlice:
		slice, _, _ = strings.Cut(inData, "/")
		reason = "linked object in slice " + slice
	case layout.Flat:
		reason = "flat layout (lakeFS before v0.86)"
	case layout.EarlyLinked:
		reason = "early linked upload (<data>/<staging token>/<id>)"
	default:
		reason = "of a shape the default recognizer does not know (the host's recognizer took it)"
	}
	if t, ok := layout.SliceTime(slice); ok {
		reason += " (started " + t.UTC().Format(time.RFC3339) + ")"
	}
	return slice, reason
}

// statAll fills in the size and time of each candidate, up to
// candidateStats at once.
func statAll(ctx context.Context, bucket *blob.Bucket, cs []Candidate) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, candidateStats)
	)
	for i := range cs {
		sem <- struct{}{}
		wg.Add(1)
		go func(c *Candidate) {
			defer func() { <-sem; wg.Done() }()
			attrs, err := bucket.Attributes(ctx, c.Address)
			switch {
			case gcerrors.Code(err) == gcerrors.NotFound:
				c.Gone = true
			case err != nil:
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("stat %s: %w", c.Address, err)
				}
				mu.Unlock()
			default:
				c.Size, c.ModTime = attrs.Size, attrs.ModTime.UTC()
			}
		}(&cs[i])
	}
	wg.Wait()
	return first
}
