package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/metarange"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/sweep/s3list"
	"github.com/lakegc/lakegc/uncommitted"
)

// storagePrefix is lakeFS's folder of its own files in a namespace
// (committed.block_storage_prefix), the library's default.
const storagePrefix = lakegc.DefaultStoragePrefix

// Errors of Collect. Every error of lakeFS's API is wrapped with ErrLakeFS
// (and keeps its api sentinel); an invalid option is ErrInvalidInput.
var (
	// ErrLakeFS marks the errors of lakeFS and its API: it refused, could
	// not be reached, or answered what the run cannot use.
	ErrLakeFS = errors.New("host: lakeFS")
	// ErrInvalidInput is an Options that Collect refuses before any
	// call.
	ErrInvalidInput = errors.New("host: invalid input")
	// ErrNoRules is a repository without garbage collection rules, whose
	// commits lakeFS refuses to prepare; it comes wrapped with ErrLakeFS.
	// Set rules with lakectl gc set-config.
	ErrNoRules = errors.New("host: the repository has no garbage collection rules")
)

// IsLakeFS reports whether err is lakeFS's refusal or failure to answer:
// an error of package api's client, or one that wraps ErrLakeFS.
func IsLakeFS(err error) bool { return errors.Is(lakeFSError(err), ErrLakeFS) }

// lakeFSError wraps an error of lakeFS's API with ErrLakeFS.
func lakeFSError(err error) error {
	for _, s := range []error{api.ErrUnauthorized, api.ErrForbidden, api.ErrNotFound, api.ErrTooManyRequests,
		api.ErrServer, api.ErrRequest, api.ErrMalformed, api.ErrTransport, api.ErrTaskFailed, api.ErrOutsideNamespace} {
		if errors.Is(err, s) {
			return fmt.Errorf("%w: %w", ErrLakeFS, err)
		}
	}
	return err
}

// DefaultConcurrency is Options.Concurrency's default.
const DefaultConcurrency = 16

// MaxConcurrency is the largest Options.Concurrency.
const MaxConcurrency = 1024

// Options are the settings of a run of Collect. The zero value of each
// field is its default; only Repository is required.
type Options struct {
	// Repository is the repository's name in lakeFS.
	Repository string
	// BlockstorePath is lakeFS's local blockstore folder
	// (blockstore.local.path), which a repository on the local blockstore
	// needs, spelled as in lakeFS's configuration: lakeFS spells full
	// addresses with it. Default: Blockstore's Local.Path when Blockstore
	// is of the local type, as the command's --lakefs-config gives it.
	BlockstorePath string
	// Blockstore is lakeFS's blockstore settings, with which Collect opens
	// the namespace when it is given no bucket (OpenNamespace); nil: the
	// cloud SDKs' own credentials and defaults.
	Blockstore *blockstore.Config
	// Sweep deletes the garbage; without it, a dry run.
	Sweep bool
	// Quarantine makes the sweep move the garbage into the run's quarantine
	// instead of deleting it (lakegc.Config.Quarantine).
	Quarantine bool
	// Lease, if set, makes the run hold the namespace's lease
	// (lakegc.Config.Lease): a second run on the repository fails, or
	// waits, naming the holder.
	Lease *lease.Options
	// KeepRuns, if positive, prunes the files of old runs after a run that
	// succeeded, keeping the KeepRuns newest of each kind and what the next
	// optimized run or a pending sweep needs (lakegc.Config.KeepRuns).
	KeepRuns int
	// Optimized starts the mark from the repository's latest run
	// (lakegc.Config.Optimized).
	Optimized bool
	// Inventory is the URI of an inventory report's manifest of the
	// repository's namespace, S3 Inventory's
	// ("s3://<bucket>/<path>/manifest.json"), Azure Blob inventory's
	// ("https://<account>.<domain>/<container>/<path>/<rule>-manifest.json")
	// or GCS's ("gs://<bucket>/<path>/<config>_<snapshot>_manifest.json"):
	// the mark takes the older slices from it instead of listing them
	// (lakegc.Config.Inventory; package inventory). Its bucket is opened
	// as the namespace's. Not with Optimized: such a mark is clean.
	Inventory string
	// InitNamespace first writes lakegc's marker naming the namespace as
	// the repository's (lakegc.InitNamespace): for a repository without
	// lakeFS's marker, only once the namespace is known to be its own.
	InitNamespace bool
	// MinAge keeps every object younger than this before the run started
	// (lakegc.Config.MinAge; default, and at least, lakeFS's link TTL).
	MinAge time.Duration
	// MemoryBudget bounds the mark's key buffers (default
	// lakegc.DefaultMemoryBudget); a quarter of it, at least 64 KiB, goes
	// to the re-upload check's filter.
	MemoryBudget int64
	// Include collects objects under these key prefixes of the namespace
	// whatever their names (lakegc.Config.Include).
	Include []string
	// Shard and Shards make the run shard Shard of Shards (sweep.WithShard;
	// the package documentation, "Shards"): it marks, and sweeps, only the
	// slices SliceShard assigns it, shard 0 the rest too. Both 0, or Shards
	// 1, is no sharding. A sharded run is a clean run: not with Optimized;
	// and it takes no Lease, which would keep its shards from running at
	// once, so it prunes nothing (KeepRuns 0).
	Shard, Shards int
	// Concurrency bounds the per-object calls of lakeFS (stats of staged
	// objects), and the checks of candidates against the store, in flight
	// at once (default DefaultConcurrency, at most MaxConcurrency).
	Concurrency int
	// Clock is the time of the run's decisions (default time.Now).
	Clock func() time.Time
	// TempDir is where the run makes its temporary folder, removed when it
	// ends (default os.TempDir()).
	TempDir string
	// Logger receives the run's logs (default: none).
	Logger *slog.Logger
	// Progress, if set, receives the run's progress. It may be called from
	// several goroutines at once, and should return quickly.
	Progress func(Progress)
	// DeleteConcurrency fixes the sweep's delete calls in flight
	// (sweep.WithDeleteConcurrency); 0: the sweep's window, which follows
	// the store.
	DeleteConcurrency int
	// DeleteRate caps the sweep's deletes per second, retries included
	// (sweep.WithDeleteRate); 0: no cap.
	DeleteRate float64
	// SweepSuperseded lets SweepRun sweep a mark that a later mark
	// superseded (lakegc.Config.SweepSuperseded).
	SweepSuperseded bool
	// NoRangeCache reads every kept range from lakeFS's tables, neither
	// reading nor writing the range cache (the package documentation,
	// "The range cache").
	NoRangeCache bool

	resumeMark string // SweepRun's run
}

// ProgressKind tells what a Progress reports.
type ProgressKind int

// The kinds of Progress.
const (
	// ProgressCollect is lakegc.Collect's progress (Progress.Collect).
	ProgressCollect ProgressKind = iota
	// ProgressStaged is the stats of staged objects (Progress.Staged).
	ProgressStaged
	// ProgressRanges is the reading of the kept commits' metaranges and
	// ranges (Progress.Ranges).
	ProgressRanges
)

// Progress is a report of a run's progress, to Options.Progress.
type Progress struct {
	// Kind says which of the fields below is set.
	Kind ProgressKind
	// Collect is lakegc.Collect's progress.
	Collect lakegc.Progress
	// Staged is the staged objects statted so far through the API.
	Staged int64
	// Ranges is the reading of the committed metadata so far.
	Ranges metarange.Stats
}

// Stats are what the host did beside Collect's report.
type Stats struct {
	// LakeFSRequests are the HTTP requests the client sent to lakeFS,
	// retries included, during the run (a client shared with other
	// goroutines counts theirs of that time too).
	LakeFSRequests int64 `json:"lakefs_requests"`
	// StagedStatted are the staged objects statted through the API.
	StagedStatted int64 `json:"staged_statted"`
	// Reuploads is the check of the candidates that may be staged
	// re-uploads lakeFS's listings hide.
	Reuploads ReuploadStats `json:"reuploads"`
	// Rules are the rules the run applied: lakeFS's and lakegc's.
	Rules *RulesStats `json:"rules,omitempty"`
	// RangeCache is what the range cache did; nil before the kept
	// commits were read.
	RangeCache *RangeCacheStats `json:"range_cache,omitempty"`
}

// Result is what a run of Collect did: on an error, as far as it went.
type Result struct {
	// Report is lakegc.Collect's report; nil if the run failed before
	// Collect started.
	Report *lakegc.Report
	// Stats are the host's own counts.
	Stats Stats
}

// Collect runs one cycle of lakegc.Collect over a lakeFS repository:
// lakeFS runs the export of the staged objects and applies the retention
// rules through client, and the host reads the kept commits' objects from
// the repository's storage namespace (see the package documentation).
//
// bucket is the storage namespace, opened at its root — the bucket's key
// "k" is the namespace's "<namespace>/k"; it is not closed. A nil bucket
// has Collect open it with OpenNamespace (o.BlockstorePath, o.Blockstore)
// and close it at the end. On lakeFS's local blockstore the sweep deletes
// the files of the namespace's folder under o.BlockstorePath directly
// (never a "<key>.attrs" beside one), so a given bucket must be that
// folder: Collect writes a probe file into the folder (under the storage
// prefix), reads it back through the bucket and removes it, and refuses
// another folder (ErrInvalidInput); the probe writes nothing through the
// bucket. Any bucket must hold a repository marker
// (lakegc.ErrNoNamespaceMarker; Options.InitNamespace), and the commits
// report lakeFS writes into the namespace during the run is read through
// it before anything is marked, so a bucket rooted at another
// repository's folder fails the run before the mark.
//
// The Result is never nil: on an error it holds what was done until then.
// An error of lakeFS wraps ErrLakeFS; an invalid option ErrInvalidInput
// or lakegc.ErrInvalidInput.
func Collect(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options) (*Result, error) {
	res := &Result{}
	var before int64
	if client != nil {
		before = client.Requests()
	}
	rep, err := collect(ctx, client, bucket, o, &res.Stats)
	res.Report = rep
	if client != nil {
		res.Stats.LakeFSRequests = client.Requests() - before
	}
	return res, err
}

func collect(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options, hs *Stats) (*lakegc.Report, error) {
	switch {
	case client == nil:
		return nil, fmt.Errorf("%w: no lakeFS client", ErrInvalidInput)
	case o.Repository == "":
		return nil, fmt.Errorf("%w: no Repository", ErrInvalidInput)
	case o.Concurrency < 0 || o.Concurrency > MaxConcurrency:
		return nil, fmt.Errorf("%w: Concurrency %d is not between 1 and %d", ErrInvalidInput, o.Concurrency, MaxConcurrency)
	case o.MemoryBudget < 0:
		return nil, fmt.Errorf("%w: negative MemoryBudget %d", ErrInvalidInput, o.MemoryBudget)
	case o.Shards < 0 || o.Shard < 0 || o.Shard > 0 && o.Shard >= o.Shards:
		return nil, fmt.Errorf("%w: shard %d of %d: want 0 <= Shard < Shards", ErrInvalidInput, o.Shard, o.Shards)
	case o.Shards > 1 && o.Optimized:
		return nil, fmt.Errorf("%w: a sharded run is clean, not Optimized", ErrInvalidInput)
	case o.Inventory != "" && o.Optimized:
		return nil, fmt.Errorf("%w: a mark from an inventory is clean, not Optimized", ErrInvalidInput)
	case o.Shards > 1 && o.Lease != nil:
		// The lease admits one run at a time; the shards run at once.
		return nil, fmt.Errorf("%w: a sharded run takes no Lease: its shards run at once", ErrInvalidInput)
	case o.Shards > 1 && o.KeepRuns > 0:
		// Pruning is for a run under the lease; the shards hold none.
		return nil, fmt.Errorf("%w: a sharded run prunes nothing (KeepRuns): it holds no lease", ErrInvalidInput)
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.BlockstorePath == "" && o.Blockstore != nil && o.Blockstore.Type == blockstore.TypeLocal {
		o.BlockstorePath = o.Blockstore.Local.Path
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = lakegc.DefaultMemoryBudget
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	repo, err := client.GetRepository(ctx, o.Repository)
	if err != nil {
		return nil, lakeFSError(err)
	}
	var resolved string
	if bucket != nil {
		resolved, err = resolveNamespace(repo.StorageNamespace, o.BlockstorePath)
		if err == nil {
			err = sameLocalFolder(ctx, bucket, repo.StorageNamespace, o.BlockstorePath)
		}
	} else {
		resolved, bucket, err = openNamespace(ctx, repo.StorageNamespace, o.BlockstorePath, o.Blockstore)
		if err == nil {
			defer bucket.Close()
			if o.Blockstore != nil {
				logger.Info("lakegc: lakeFS's blockstore settings", "blockstore", o.Blockstore)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.TempDir, "lakegc-")
	if err != nil {
		return nil, fmt.Errorf("host: temporary folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	h := &lakeFSHost{client: client, repo: o.Repository, namespace: strings.TrimRight(repo.StorageNamespace, "/"),
		resolved: resolved, bucket: bucket, tempDir: tmp, logger: logger, progress: o.Progress,
		concurrency: o.Concurrency, reuploads: newReuploads(bucket, o.MemoryBudget, o.Concurrency),
		noRangeCache: o.NoRangeCache, cache: &RangeCacheStats{Enabled: !o.NoRangeCache}}
	defer func() { hs.Reuploads = h.reuploads.stats() }()
	if strings.HasPrefix(h.namespace, "local://") {
		root, err := filepath.Abs(o.BlockstorePath)
		if err != nil {
			return nil, err
		}
		h.doubled = "local://" + filepath.ToSlash(root) + strings.TrimPrefix(resolved, "local://")
	}
	cfg := lakegc.Config{
		Bucket:        bucket,
		Namespace:     resolved,
		Repository:    o.Repository,
		StoragePrefix: storagePrefix,
		MinAge:        o.MinAge,
		MemoryBudget:  o.MemoryBudget,
		TempDir:       tmp,
		Logger:        logger,
		Clock:         o.Clock,
		Sweep:         o.Sweep,
		Quarantine:    o.Quarantine,
		Lease:         o.Lease,
		KeepRuns:      o.KeepRuns,
		Optimized:     o.Optimized,
		Include:       o.Include,
		// Staged re-uploads lakeFS's listings hide (package documentation).
		MarkOptions: []sweep.MarkOption{sweep.WithCandidateCheck(h.reuploads.check), sweep.WithShard(o.Shard, o.Shards)},
		// Azure's and GCS's refusals, which gocloud's codes blur.
		ErrorClassifiers: []sweep.ErrorClassifier{azdelete.Classifier{}, gcsdelete.Classifier{}},
		SweepOptions:     o.deleteOptions(),
		ResumeMark:       o.resumeMark,
		SweepSuperseded:  o.SweepSuperseded,
	}
	if o.Progress != nil {
		cfg.Progress = func(p lakegc.Progress) { o.Progress(Progress{Kind: ProgressCollect, Collect: p}) }
	}
	if o.Inventory != "" && o.resumeMark == "" {
		inv, ib, err := openInventory(ctx, o.Inventory, resolved, o, tmp)
		if err != nil {
			return nil, err
		}
		defer ib.Close()
		cfg.Inventory = inv
	}
	if d, err := localDeleter(repo.StorageNamespace, o.BlockstorePath); err != nil {
		return nil, err
	} else if d != nil {
		cfg.BatchDeleter = d
		// fileblob walks a whole folder for each page it lists: the mark
		// reads the namespace's folders itself.
		cfg.MarkOptions = append(cfg.MarkOptions, sweep.WithLocalListing(d.Dir()))
	} else if d, err := s3delete.FromBucket(bucket); err == nil {
		// On S3, DeleteObjects through the bucket's own client: the
		// endpoint and keys it was opened with.
		cfg.BatchDeleter = d
	}
	if l, err := s3list.FromBucket(bucket); err == nil {
		// On S3, list through the bucket's own requests but decode the
		// pages with s3list's reader, about ten times cheaper than the SDK's.
		cfg.MarkOptions = append(cfg.MarkOptions, sweep.WithPageLister(l))
	}
	if o.InitNamespace {
		// A bare repository has no marker of lakeFS's: the operator names
		// the folder as the repository's.
		if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: resolved, StoragePrefix: storagePrefix}); err != nil {
			return nil, err
		}
	}
	logger.Info("lakegc: repository", "repo", o.Repository, "namespace", repo.StorageNamespace, "resolved", resolved, "sweep", o.Sweep, "shard", o.Shard, "shards", o.Shards)
	// With the range cache on, the committed keep set is parts, one a
	// range: an optimized mark reads only the ranges that changed.
	var committed lakegc.Committed = h
	if !o.NoRangeCache {
		committed = partsHost{h}
	}
	rep, err := lakegc.Collect(ctx, lakegc.Host{Export: h, Active: h, Committed: committed}, cfg)
	if h.parts != nil {
		h.rangeStats(h.partsStats())
	}
	hs.StagedStatted = h.staged
	hs.Rules = h.rules
	hs.RangeCache = h.cache // the prune's report is added to it
	if err == nil && o.KeepRuns > 0 && !o.NoRangeCache {
		err = h.pruneRangeCache(ctx)
	}
	return rep, err
}

// lakeFSHost is a lakeFS repository as Collect's host.
type lakeFSHost struct {
	client    *api.Client
	repo      string
	namespace string // as lakeFS's repository says, e.g. "local://repo1"
	resolved  string // as lakeFS spells full addresses, e.g. "local:///var/lakefs/repo1"
	// doubled is how lakeFS's object API spells a linked object's full
	// address on the local blockstore: the blockstore's path twice,
	// "local:///var/lakefs/var/lakefs/repo1"; empty on object stores.
	doubled  string
	bucket   *blob.Bucket
	tempDir  string
	logger   *slog.Logger
	progress func(Progress) // nil: none
	// concurrency bounds the per-object calls of lakeFS in flight.
	concurrency int
	// reuploads keeps the candidates that may be staged re-uploads
	// lakeFS's listings hide.
	reuploads *reuploads
	staged    int64       // staged objects statted
	rules     *RulesStats // the rules applied, once known
	// runID is the run's, once ActiveCommits knows it; noRangeCache is
	// Options.NoRangeCache; cache is the range cache's stats.
	runID        string
	noRangeCache bool
	cache        *RangeCacheStats
	// parts serves the mark's parts, with the cache on; sumStats are the
	// stats of the read of every kept range for the re-upload check.
	parts    *metarange.Cache
	sumStats metarange.Stats
	// cacheMaxBytes, if positive, is the range cache's bound
	// (metarange.WithCacheMaxBytes) with parts; tests set it.
	cacheMaxBytes int64
}

// Export runs lakeFS's uncommitted export (prepare_uncommited) until lakeFS
// returns no continuation token — this loop is ours, so the run is known to
// be complete although stock lakeFS writes no manifest — and then lists
// every branch's staged objects through the API (the package
// documentation: lakeFS's export leaves out staged linked objects on the
// local blockstore).
func (h *lakeFSHost) Export(ctx context.Context) (*lakegc.HostExport, error) {
	exp, err := h.client.PrepareAllUncommitted(ctx, h.repo)
	if err != nil {
		return nil, lakeFSError(err)
	}
	var parts []iter.Seq2[string, error]
	if exp.Files > 0 {
		want := strings.TrimSuffix(namespace.UncommittedFolder(storagePrefix, exp.RunID), "/")
		key, err := api.RelativeKey(h.resolved, exp.Location)
		if root, ok := strings.CutSuffix(strings.TrimSuffix(exp.Location, "/"), "/"+want); ok && err != nil && exp.RunID != "" && api.SameLocalNamespace(root, h.namespace) {
			// lakeFS wrote in the repository's local namespace, which it
			// spells otherwise: a BlockstorePath through a symbolic
			// link, or another folder.
			return nil, namespaceMismatch(root, h.resolved)
		}
		if err == nil && strings.TrimSuffix(key, "/") != want {
			err = fmt.Errorf("uncommitted export at %q, not at %s/%s", exp.Location, h.resolved, want)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLakeFS, err)
		}
		// AllowUnverified: stock lakeFS writes no completion manifest, and
		// PrepareAllUncommitted drove the continuation loop to its end.
		parts = append(parts, uncommitted.Addresses(ctx, h.bucket, storagePrefix, exp.RunID, uncommitted.AllowUnverified()))
	}
	h.logger.Info("lakegc: lakeFS uncommitted export done", "run_id", exp.RunID, "calls", exp.Calls, "files", exp.Files)
	staged, n, err := h.stagedAddresses(ctx)
	if err != nil {
		return nil, err
	}
	h.logger.Info("lakegc: staged objects listed through the API", "objects", n)
	h.staged = n
	parts = append(parts, staged)
	return &lakegc.HostExport{RunID: exp.RunID, Location: exp.Location, Addresses: withUnsigned(concat(parts...))}, nil
}

// namespaceMismatch is the error of a namespace that lakeFS spells as
// lakeFS and Collect as resolved: one folder reached by two paths, or
// two folders. Either way the addresses lakeFS stores could not be matched
// to the listing, so the run stops.
func namespaceMismatch(lakeFS, resolved string) error {
	hint := ""
	if strings.HasPrefix(resolved, "local://") {
		hint = ": give BlockstorePath (the command's --blockstore-path) as lakeFS's blockstore.local.path, spelled as in lakeFS's configuration"
	}
	return fmt.Errorf("%w: lakeFS writes under %q, lakegc reads %q%s", lakegc.ErrNamespaceMismatch, lakeFS, resolved, hint)
}

// stagedAddresses lists the physical address of every staged object of
// every branch that lakeFS's diff shows, hidden branches included: each
// branch's uncommitted changes (its diff), then a stat of each added or
// changed object, up to h.concurrency stats at once (each retried by the
// client; the diffs are read a quarter of that at once); a change of another kind, a common prefix, or a stat without a
// physical address fails the listing rather than leave its objects out. The keys are spilled to a file, so
// memory does not grow with them.
func (h *lakeFSHost) stagedAddresses(ctx context.Context) (iter.Seq2[string, error], int64, error) {
	f, err := os.CreateTemp(h.tempDir, "staged-")
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct{ branch, path string }
	var (
		w           = bufio.NewWriter(f)
		mu          sync.Mutex // guards w, n, first
		n           int64
		first       error
		jobs        = make(chan job)
		wg          sync.WaitGroup
		concurrency = max(h.concurrency, 1)
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	stat := func(j job) error {
		st, err := h.client.StatObject(ctx, h.repo, j.branch, j.path)
		if errors.Is(err, api.ErrNotFound) {
			return nil // unstaged since the diff: no longer the branch's
		}
		if err != nil {
			return lakeFSError(err)
		}
		key, ok := h.relative(st.PhysicalAddress)
		if !ok {
			// No address (the API's decoder refuses it already): where
			// its bytes are is unknown, so fail rather than go on
			// without it. This was counted as "outside the namespace",
			// which relative never reports.
			return fmt.Errorf("%w: branch %s: staged object %q has no physical address", ErrLakeFS, j.branch, j.path)
		}
		if strings.ContainsAny(key, "\n\r") {
			return fmt.Errorf("%w: staged address %q has a line break", ErrLakeFS, st.PhysicalAddress)
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.WriteString(key + "\n"); err != nil {
			return err
		}
		n++
		if h.progress != nil {
			h.progress(Progress{Kind: ProgressStaged, Staged: n})
		}
		return nil
	}
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					continue // drain: the producer stops at the cancel
				}
				if err := stat(j); err != nil {
					fail(err)
				}
			}
		}()
	}
	// Each branch's diff is read by one of a few readers (a quarter of the
	// bound), which hand its changes to the stat workers.
	diff := func(branch string) error {
		for ch, err := range h.client.BranchChanges(ctx, h.repo, branch) {
			if err != nil {
				return lakeFSError(err)
			}
			switch {
			case ch.PathType != "object" && ch.PathType != "":
				// A common prefix stands for objects not statted here.
				return fmt.Errorf("%w: branch %s: change of %q has path type %q, not object", ErrLakeFS, branch, ch.Path, ch.PathType)
			case ch.Type == "removed":
				continue
			case ch.Type != "added" && ch.Type != "changed":
				return fmt.Errorf("%w: branch %s: change of %q has type %q, not added, changed or removed", ErrLakeFS, branch, ch.Path, ch.Type)
			}
			select {
			case jobs <- job{branch, ch.Path}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	var (
		branches = make(chan string)
		readers  sync.WaitGroup
	)
	for range max(concurrency/4, 1) {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for b := range branches {
				if ctx.Err() != nil {
					continue // drain: the listing stops at the cancel
				}
				if err := diff(b); err != nil {
					fail(err)
				}
			}
		}()
	}
list:
	for branch, err := range h.client.ListBranches(ctx, h.repo, true) {
		if err != nil {
			fail(lakeFSError(err))
			break
		}
		select {
		case branches <- branch:
		case <-ctx.Done():
			break list
		}
	}
	close(branches)
	readers.Wait()
	close(jobs)
	wg.Wait()
	if first == nil {
		first = ctx.Err() // the caller's context ended
	}
	if first != nil {
		return nil, 0, first
	}
	if err := w.Flush(); err != nil {
		return nil, 0, err
	}
	if err := f.Close(); err != nil {
		return nil, 0, err
	}
	return fileLines(f.Name()), n, nil
}

// relative makes a staged physical address an address Collect reads: a
// relative one as it is; a full one under one of the spellings lakeFS
// itself uses for the namespace (the repository's, and on the local
// blockstore the object API's doubled path) respelled under the resolved
// namespace; any other full one as it is. Collect applies the one rule of
// full addresses to them all: every key lakeFS could have stored the
// object at kept, another spelling of the namespace an error
// (lakegc.ErrNamespaceMismatch), an import counted.
func (h *lakeFSHost) relative(address string) (string, bool) {
	if !strings.Contains(address, ":") {
		return address, address != ""
	}
	for _, ns := range []string{h.namespace, h.doubled} {
		if ns == "" || ns == h.resolved {
			continue
		}
		if key, ok := uncommitted.CutNamespace(ns, address); ok {
			return h.resolved + "/" + key, true
		}
	}
	return address, true
}

// ActiveCommits runs lakeFS's prepare_commits: lakeFS applies its rules to
// every commit, those of deleted branches included, and writes its commits
// report (commit_id, expired, metarange_id), read back here.
func (h *lakeFSHost) ActiveCommits(ctx context.Context, now time.Time) (*lakegc.HostCommits, error) {
	res, err := h.client.PrepareCommitsAsync(ctx, h.repo)
	if errors.Is(err, api.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w: prepare commits: %w (set rules with lakectl gc set-config)", ErrLakeFS, ErrNoRules, err)
	}
	if err != nil {
		return nil, lakeFSError(err)
	}
	resolved, err := api.ResolveNamespace(h.namespace, res)
	if err == nil && resolved != h.resolved {
		err = namespaceMismatch(resolved, h.resolved)
	}
	if err != nil {
		return nil, lakeFSError(err)
	}
	key, err := api.RelativeKey(resolved, res.CommitsLocation)
	if want := namespace.CommitsKey(storagePrefix, res.RunID); err == nil && key != want {
		// lakeFS keeps its files under another prefix: the metaranges
		// would not be found, and the mark would list lakeFS's own files.
		err = fmt.Errorf("%w: lakeFS writes its commits report at %q, not at %s: is its block_storage_prefix %q?", ErrLakeFS, key, want, storagePrefix)
	}
	if err != nil {
		return nil, lakeFSError(err)
	}
	active, err := readCommitsReport(ctx, h.bucket, key)
	if err != nil {
		return nil, fmt.Errorf("host: commits report %s: %w", key, err)
	}
	h.logger.Info("lakegc: lakeFS kept commits", "run_id", res.RunID, "active", len(active))
	h.runID = res.RunID
	// lakegc's extended rules add to lakeFS's set (rules.go).
	if active, err = h.extendActive(ctx, now, active); err != nil {
		return nil, err
	}
	return &lakegc.HostCommits{RunID: res.RunID, Key: key, Active: active}, nil
}

// readCommitsReport reads lakeFS's commits report
// (retention.ReadCommitsCSV): the commits not expired are kept.
func readCommitsReport(ctx context.Context, bucket *blob.Bucket, key string) ([]retention.ActiveCommit, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return retention.ReadCommitsCSV(r)
}

// concat yields each sequence in turn.
func concat(seqs ...iter.Seq2[string, error]) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, s := range seqs {
			for a, err := range s {
				if !yield(a, err) || err != nil {
					return
				}
			}
		}
	}
}

// withUnsigned yields every address, and after an address whose last
// element carries a signature (lakeFS's linked "data/<slice>/<xid>,<sig>")
// the address without it too: whichever key the object has, it is kept.
func withUnsigned(seq iter.Seq2[string, error]) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for a, err := range seq {
			if !yield(a, err) || err != nil {
				return
			}
			if i := strings.LastIndexByte(a, ','); i > strings.LastIndexByte(a, '/') {
				if !yield(a[:i], nil) {
					return
				}
			}
		}
	}
}

// fileLines yields the lines of a file.
func fileLines(name string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		f, err := os.Open(name)
		if err != nil {
			yield("", err)
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if !yield(sc.Text(), nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield("", err)
		}
	}
}
