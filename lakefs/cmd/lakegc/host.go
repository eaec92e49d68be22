package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/uncommitted"
)

// storagePrefix is lakeFS's folder of its own files in a namespace
// (committed.block_storage_prefix), the library's default.
const storagePrefix = lakegc.DefaultStoragePrefix

// errLakeFS marks the errors of lakeFS's API, for the exit code.
var errLakeFS = errors.New("lakeFS")

// lakeFSError wraps an error of lakeFS's API with errLakeFS.
func lakeFSError(err error) error {
	for _, s := range []error{api.ErrUnauthorized, api.ErrForbidden, api.ErrNotFound, api.ErrTooManyRequests,
		api.ErrServer, api.ErrRequest, api.ErrMalformed, api.ErrTransport, api.ErrTaskFailed, api.ErrOutsideNamespace} {
		if errors.Is(err, s) {
			return fmt.Errorf("%w: %w", errLakeFS, err)
		}
	}
	return err
}

// hostStats are what the command itself did beside Collect's report.
type hostStats struct {
	// LakeFSRequests are the HTTP requests sent to lakeFS, retries
	// included.
	LakeFSRequests int64 `json:"lakefs_requests"`
	// StagedStatted are the staged objects statted through the API.
	StagedStatted int64 `json:"staged_statted"`
	// Reuploads is the check of the candidates that may be staged
	// re-uploads lakeFS's listings hide.
	Reuploads ReuploadStats `json:"reuploads"`

	reuploads *reuploads
}

// final fills in the counts once the run ended.
func (s *hostStats) final(client *api.Client) *hostStats {
	s.LakeFSRequests = client.Requests()
	if s.reuploads != nil {
		s.Reuploads = s.reuploads.stats()
	}
	return s
}

// collect runs one cycle of Collect over the repository: lakeFS runs the
// export and the retention, the command reads the kept commits' objects.
// hs receives the command's own counts.
func collect(ctx context.Context, client *api.Client, o gcOptions, logger *slog.Logger, bar *progress, hs *hostStats) (*lakegc.Report, error) {
	repo, err := client.GetRepository(ctx, o.repo)
	if err != nil {
		return nil, lakeFSError(err)
	}
	resolved, bucket, err := openNamespace(ctx, repo.StorageNamespace, o.blockstorePath, o.store)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	if o.store != nil {
		logger.Info("lakegc: lakeFS's blockstore settings", "blockstore", o.store)
	}
	tmp, err := os.MkdirTemp("", "lakegc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	h := &lakeFSHost{client: client, repo: o.repo, namespace: strings.TrimRight(repo.StorageNamespace, "/"),
		resolved: resolved, bucket: bucket, tempDir: tmp, logger: logger, bar: bar,
		concurrency: o.concurrency, reuploads: newReuploads(bucket, o.memory, o.concurrency)}
	hs.reuploads = h.reuploads
	if strings.HasPrefix(h.namespace, "local://") {
		root, err := filepath.Abs(o.blockstorePath)
		if err != nil {
			return nil, err
		}
		h.doubled = "local://" + filepath.ToSlash(root) + strings.TrimPrefix(resolved, "local://")
	}
	cfg := lakegc.Config{
		Bucket:        bucket,
		Namespace:     resolved,
		Repository:    o.repo,
		StoragePrefix: storagePrefix,
		MinAge:        o.minAge,
		MemoryBudget:  o.memory,
		TempDir:       tmp,
		Logger:        logger,
		Progress:      bar.collect,
		Sweep:         o.sweep,
		Optimized:     o.optimized,
		Include:       o.include,
		// Staged re-uploads lakeFS's listings hide (doc.go).
		MarkOptions: []sweep.MarkOption{sweep.WithCandidateCheck(h.reuploads.check)},
		// Azure's and GCS's refusals, which gocloud's codes blur.
		ErrorClassifiers: []sweep.ErrorClassifier{azdelete.Classifier{}, gcsdelete.Classifier{}},
	}
	if d, err := localDeleter(repo.StorageNamespace, o.blockstorePath); err != nil {
		return nil, err
	} else if d != nil {
		cfg.BatchDeleter = d
	} else if d, err := s3delete.FromBucket(bucket); err == nil {
		// On S3, DeleteObjects through the bucket's own client: the
		// endpoint and keys it was opened with.
		cfg.BatchDeleter = d
	}
	if o.initNamespace {
		// A bare repository has no marker of lakeFS's: the operator names
		// the folder as the repository's.
		if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: resolved, StoragePrefix: storagePrefix}); err != nil {
			return nil, err
		}
	}
	if !o.now.IsZero() {
		offset := time.Until(o.now)
		cfg.Clock = func() time.Time { return time.Now().Add(offset) }
	}
	logger.Info("lakegc: repository", "repo", o.repo, "namespace", repo.StorageNamespace, "resolved", resolved, "sweep", o.sweep)
	rep, err := lakegc.Collect(ctx, lakegc.Host{Export: h, Active: h, Committed: h}, cfg)
	hs.StagedStatted = h.staged
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
	doubled string
	bucket  *blob.Bucket
	tempDir string
	logger  *slog.Logger
	bar     *progress
	// concurrency bounds the per-object calls of lakeFS in flight.
	concurrency int
	// reuploads keeps the candidates that may be staged re-uploads
	// lakeFS's listings hide.
	reuploads *reuploads
	staged    int64 // staged objects statted
}

// Export runs lakeFS's uncommitted export (prepare_uncommited) until lakeFS
// returns no continuation token — this loop is ours, so the run is known to
// be complete although stock lakeFS writes no manifest — and then lists
// every branch's staged objects through the API (see doc.go: lakeFS's
// export leaves out staged linked objects on the local blockstore).
func (h *lakeFSHost) Export(ctx context.Context) (*lakegc.HostExport, error) {
	exp, err := h.client.PrepareAllUncommitted(ctx, h.repo)
	if err != nil {
		return nil, lakeFSError(err)
	}
	var parts []iter.Seq2[string, error]
	if exp.Files > 0 {
		want := storagePrefix + "/retention/gc/uncommitted/" + exp.RunID + "/uncommitted"
		key, err := api.RelativeKey(h.resolved, exp.Location)
		if root, ok := strings.CutSuffix(strings.TrimSuffix(exp.Location, "/"), "/"+want); ok && err != nil && exp.RunID != "" && sameLocalNamespace(root, h.namespace) {
			// lakeFS wrote in the repository's local namespace, which it
			// spells otherwise: a --blockstore-path through a symbolic
			// link, or another folder.
			return nil, namespaceMismatch(root, h.resolved)
		}
		if err == nil && strings.TrimSuffix(key, "/") != want {
			err = fmt.Errorf("uncommitted export at %q, not at %s/%s", exp.Location, h.resolved, want)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errLakeFS, err)
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

// sameLocalNamespace reports whether root, where lakeFS says it wrote a
// file of the repository, is lakeFS's absolute spelling of the local
// namespace ns ("local:///<its blockstore folder>/<ns's path>").
func sameLocalNamespace(root, ns string) bool {
	nsPath, ok := strings.CutPrefix(strings.TrimRight(ns, "/"), "local://")
	nsPath = strings.TrimLeft(nsPath, "/")
	return ok && nsPath != "" && strings.HasPrefix(root, "local:///") && strings.HasSuffix(root, "/"+nsPath)
}

// namespaceMismatch is the error of a namespace that lakeFS spells as
// lakeFS and the command as resolved: one folder reached by two paths, or
// two folders. Either way the addresses lakeFS stores could not be matched
// to the listing, so the run stops.
func namespaceMismatch(lakeFS, resolved string) error {
	hint := ""
	if strings.HasPrefix(resolved, "local://") {
		hint = ": give --blockstore-path as lakeFS's blockstore.local.path, spelled as in lakeFS's configuration"
	}
	return fmt.Errorf("%w: lakeFS writes under %q, the command reads %q%s", lakegc.ErrNamespaceMismatch, lakeFS, resolved, hint)
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
			return fmt.Errorf("%w: branch %s: staged object %q has no physical address", errLakeFS, j.branch, j.path)
		}
		if strings.ContainsAny(key, "\n\r") {
			return fmt.Errorf("%w: staged address %q has a line break", errLakeFS, st.PhysicalAddress)
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.WriteString(key + "\n"); err != nil {
			return err
		}
		n++
		h.bar.staged(n)
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
				return fmt.Errorf("%w: branch %s: change of %q has path type %q, not object", errLakeFS, branch, ch.Path, ch.PathType)
			case ch.Type == "removed":
				continue
			case ch.Type != "added" && ch.Type != "changed":
				return fmt.Errorf("%w: branch %s: change of %q has type %q, not added, changed or removed", errLakeFS, branch, ch.Path, ch.Type)
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
func (h *lakeFSHost) ActiveCommits(ctx context.Context, _ time.Time) (*lakegc.HostCommits, error) {
	res, err := h.client.PrepareCommitsAsync(ctx, h.repo)
	if errors.Is(err, api.ErrNotFound) {
		return nil, fmt.Errorf("%w: prepare commits: %w (a repository without GC rules keeps every commit: set rules with lakectl gc set-config)", errLakeFS, err)
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
	if want := storagePrefix + "/retention/gc/commits/run_id=" + res.RunID + "/commits.csv"; err == nil && key != want {
		// lakeFS keeps its files under another prefix: the metaranges
		// would not be found, and the mark would list lakeFS's own files.
		err = fmt.Errorf("lakeFS writes its commits report at %q, not at %s: is its block_storage_prefix %q?", key, want, storagePrefix)
	}
	if err != nil {
		return nil, lakeFSError(err)
	}
	active, err := readCommitsReport(ctx, h.bucket, key)
	if err != nil {
		return nil, fmt.Errorf("commits report %s: %w", key, err)
	}
	h.logger.Info("lakegc: lakeFS kept commits", "run_id", res.RunID, "active", len(active))
	return &lakegc.HostCommits{RunID: res.RunID, Key: key, Active: active}, nil
}

// readCommitsReport reads lakeFS's commits report: a header
// commit_id,expired,metarange_id, then a row per commit. The commits not
// expired are kept; any other row is an error.
func readCommitsReport(ctx context.Context, bucket *blob.Bucket, key string) ([]retention.ActiveCommit, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return parseCommitsReport(r)
}

func parseCommitsReport(r io.Reader) ([]retention.ActiveCommit, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if head[0] != "commit_id" || head[1] != "expired" || head[2] != "metarange_id" {
		return nil, fmt.Errorf("header %q, want commit_id,expired,metarange_id", head)
	}
	var active []retention.ActiveCommit
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return active, nil
		}
		if err != nil {
			return nil, err
		}
		if rec[0] == "" {
			return nil, errors.New("a row without a commit ID")
		}
		switch rec[1] {
		case "false":
			active = append(active, retention.ActiveCommit{CommitID: rec[0], MetaRangeID: rec[2]})
		case "true":
		default:
			return nil, fmt.Errorf("commit %s: expired is %q, not true or false", rec[0], rec[1])
		}
	}
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
