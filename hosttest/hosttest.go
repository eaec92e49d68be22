package hosttest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
)

// Store is the host's versioned store under test: what Collect reads of it,
// and the writes its writers make. Addresses are relative to the storage
// namespace (data/<slice>/<xid>). Run calls it from one goroutine, and never
// while Collect reads it, so it need not be safe for concurrent use.
type Store interface {
	// Host returns the store's adapters for lakegc.Collect: Staging,
	// Commits and Committed (Host.Export and Host.Active work too).
	Host() lakegc.Host
	// CreateBranch creates branch id at the HEAD of branch from (no HEAD
	// if from has none), with an empty staging area.
	CreateBranch(ctx context.Context, id, from string) error
	// DeleteBranch deletes a branch and its staging area.
	DeleteBranch(ctx context.Context, id string) error
	// Stage stages address at path on branch, replacing what was staged
	// there.
	Stage(ctx context.Context, branch, path, address string) error
	// Unstage removes path from branch's staging area.
	Unstage(ctx context.Context, branch, path string) error
	// Commit turns branch's staging area into a commit dated at, whose
	// tree is its HEAD's with the staged paths over it, and returns the
	// commit's ID; the staging area is then empty.
	Commit(ctx context.Context, branch string, at time.Time) (string, error)
}

// Options configure Run. Zero values are the defaults.
type Options struct {
	// Seed makes the run: the same seed, the same history.
	Seed uint64
	// Cycles is how many GC cycles to run (default 100).
	Cycles int
	// MaxDuration bounds the run's wall time (default 10 minutes): it
	// stops after the cycle that passes it, without an error.
	MaxDuration time.Duration
	// Ops is the number of writer operations between two cycles (default
	// 12).
	Ops int
	// CycleEvery is the simulated time between the starts of two cycles
	// (default 20 minutes).
	CycleEvery time.Duration
	// MaxStagingDelay is the longest time between a link's VerifyOnce and
	// the start of its staging write, which then takes up to 30 seconds
	// (default 20 minutes: longer than linkaddr.StagingMargin, so Stage
	// has late writes to refuse and undo). Half the links stage within 10
	// seconds.
	MaxStagingDelay time.Duration
	// UncheckedStaging stages links without linkaddr.Signer.Stage, so a
	// write past the link's deadline stays.
	UncheckedStaging bool
	// Optimized runs every other cycle as an optimized mark
	// (lakegc.Config.Optimized).
	Optimized bool
	// Dir is the directory of the bucket (default a temporary directory,
	// removed at the end).
	Dir string
	// Logf, if set, receives every event of the history.
	Logf func(format string, args ...any)
	// Progress, if set, is called after every cycle with the counts so
	// far.
	Progress func(Result)
}

// Result counts what a run did.
type Result struct {
	Cycles       int   // GC cycles run
	Ops          int   // writer operations
	Links        int   // links staged
	Refused      int   // links refused: VerifyOnce too late, or Stage past the deadline
	LateUndone   int   // of those, staging writes that landed late and Stage undid
	Deleted      int64 // objects the sweeps deleted
	SimulatedFor time.Duration
}

func (r *Result) String() string {
	return fmt.Sprintf("%d cycles over %v simulated, %d writer operations, %d links staged, %d refused (%d undone by Stage), %d objects deleted",
		r.Cycles, r.SimulatedFor.Round(time.Hour), r.Ops, r.Links, r.Refused, r.LateUndone, r.Deleted)
}

// ErrLoss is wrapped by Run's error when a live object is gone.
var ErrLoss = errors.New("hosttest: live object lost")

// ingest is a branch that is never committed or deleted, and rarely
// written: its entries stay staged for days, as an ingest branch's do.
const ingest = "ingest"

const (
	repoID  = "repo1"
	ttl     = linkaddr.DefaultTTL
	numPath = 16
	maxBr   = 4
)

var rules = &retention.Rules{DefaultRetentionDays: 1, BranchRetentionDays: map[string]int32{"main": 2}}

// Run races store's writers against GC cycles, as the package documentation
// says, and returns what it did. An error wrapping ErrLoss names the first
// live object found missing, with its history; another error is a failure
// of the store, of Collect or of the bucket.
func Run(ctx context.Context, store Store, opts Options) (*Result, error) {
	if store == nil {
		return nil, errors.New("hosttest: nil Store")
	}
	opts.Cycles = cmp.Or(opts.Cycles, 100)
	opts.MaxDuration = cmp.Or(opts.MaxDuration, 10*time.Minute)
	opts.Ops = cmp.Or(opts.Ops, 12)
	opts.CycleEvery = cmp.Or(opts.CycleEvery, 20*time.Minute)
	opts.MaxStagingDelay = cmp.Or(opts.MaxStagingDelay, 20*time.Minute)
	if opts.Cycles < 0 || opts.Ops < 0 || opts.CycleEvery < 0 || opts.MaxStagingDelay < 0 || opts.MaxDuration < 0 {
		return nil, errors.New("hosttest: negative option")
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "hosttest-"); err != nil {
			return nil, fmt.Errorf("hosttest: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	r, err := newRun(ctx, store, opts, dir)
	if err != nil {
		return nil, err
	}
	defer r.bucket.Close()
	err = r.run()
	r.res.SimulatedFor = r.now.Sub(start)
	return &r.res, err
}

// start is the simulated clock's start.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type run struct {
	ctx    context.Context
	store  Store
	opts   Options
	rng    *rand.Rand
	now    time.Time
	dir    string
	bucket *blob.Bucket
	paths  *pathprovider.Partitioned
	signer *linkaddr.Signer
	once   linkaddr.Redeemer
	m      *model
	events queue
	cfg    lakegc.Config
	res    Result
	cycle  int
	nextBr int
	// deferred is the first error of a write made in Collect's progress
	// hook, which cannot return it.
	deferred error
	// exportCalls counts the cycle's export calls.
	exportCalls int
}

func newRun(ctx context.Context, store Store, opts Options, dir string) (*run, error) {
	r := &run{ctx: ctx, store: store, opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x6c616b65)), now: start, dir: dir, m: newModel()}
	clock := func() time.Time { return r.now }
	var err error
	if r.paths, err = pathprovider.New(pathprovider.WithClock(clock)); err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	if r.signer, err = linkaddr.New([]byte("hosttest key"), r.paths, linkaddr.WithClock(clock), linkaddr.WithTTL(ttl)); err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	r.once = linkaddr.NewMemRedeemer()
	if r.bucket, err = fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite}); err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	if err := retention.NewRulesStore(r.bucket).Save(ctx, rules); err != nil {
		r.bucket.Close()
		return nil, fmt.Errorf("hosttest: rules: %w", err)
	}
	r.cfg = lakegc.Config{
		Bucket: r.bucket, Namespace: "file://" + filepath.ToSlash(dir), Repository: repoID,
		Signer: r.signer, Clock: clock, Sweep: true, ExportFileSize: 600, MemoryBudget: 64 << 10,
		Progress: r.progress,
	}
	// As a host does when it creates the repository: Collect refuses a
	// bucket without a marker.
	if err := lakegc.InitNamespace(ctx, r.cfg); err != nil {
		r.bucket.Close()
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	for _, b := range [][2]string{{"main", ""}, {ingest, "main"}} {
		if err := store.CreateBranch(ctx, b[0], b[1]); err != nil {
			r.bucket.Close()
			return nil, fmt.Errorf("hosttest: create %s: %w", b[0], err)
		}
		r.m.createBranch(b[0], b[1])
	}
	return r, nil
}

func (r *run) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf("%s cycle %d: "+format, append([]any{r.now.Format(time.DateTime), r.cycle}, args...)...)
	}
}

func (r *run) run() error {
	wallStart := time.Now()
	for r.cycle = 1; r.cycle <= r.opts.Cycles; r.cycle++ {
		end := r.now.Add(r.opts.CycleEvery)
		for range r.opts.Ops {
			r.events.push(event{at: r.now.Add(time.Duration(r.rng.Int64N(int64(r.opts.CycleEvery)))), kind: evOp})
		}
		if err := r.until(end); err != nil {
			return err
		}
		if err := r.gc(); err != nil {
			return err
		}
		r.res.Cycles++
		if r.opts.Progress != nil {
			r.res.SimulatedFor = r.now.Sub(start)
			r.opts.Progress(r.res)
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if time.Since(wallStart) > r.opts.MaxDuration {
			break
		}
	}
	return nil
}

// until runs the events due before t, in order, and moves the clock to t.
func (r *run) until(t time.Time) error {
	for {
		at, ok := r.events.next()
		if !ok || at.After(t) {
			break
		}
		e := r.events.pop()
		r.now = maxTime(r.now, e.at)
		if err := r.handle(e); err != nil {
			return err
		}
	}
	r.now = maxTime(r.now, t)
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// gc runs one cycle and checks every live object afterwards.
func (r *run) gc() error {
	cfg := r.cfg
	cfg.Optimized = r.opts.Optimized && r.cycle%2 == 0
	r.exportCalls = 0
	r.logf("GC starts")
	rep, err := lakegc.Collect(r.ctx, r.store.Host(), cfg)
	if err := r.deferred; err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("hosttest: seed %d, cycle %d: %w", r.opts.Seed, r.cycle, err)
	}
	if rep.Sweep != nil {
		r.res.Deleted += rep.Sweep.Deleted
		if rep.Sweep.Failed > 0 {
			return fmt.Errorf("hosttest: seed %d, cycle %d: %d deletes failed", r.opts.Seed, r.cycle, rep.Sweep.Failed)
		}
	}
	r.logf("GC done: cutoff %v, deleted %d", rep.Mark.Summary.CutoffTime.Format(time.DateTime), r.res.Deleted)
	return r.check("after the GC cycle")
}

// progress is Collect's progress hook: after the first call of the export,
// the clock moves and the writers write while the rest of it runs. Only
// the first: how many calls an export takes depends on the sizes of its
// files, which the random parts of addresses change, and the history must
// not.
func (r *run) progress(p lakegc.Progress) {
	if p.Phase != lakegc.PhaseExport {
		return
	}
	if r.exportCalls++; r.exportCalls > 1 {
		return
	}
	step := time.Minute + time.Duration(r.rng.Int64N(int64(4*time.Minute)))
	for range r.rng.IntN(3) {
		r.events.push(event{at: r.now.Add(time.Duration(r.rng.Int64N(int64(step)))), kind: evOp})
	}
	if err := r.until(r.now.Add(step)); err != nil {
		r.deferred = cmp.Or(r.deferred, err)
	}
}
