package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/sweep"
)

// deleteOptions are the sweep's options that o's delete fields say.
func (o Options) deleteOptions() []sweep.SweepOption {
	var opts []sweep.SweepOption
	if o.DeleteConcurrency != 0 {
		opts = append(opts, sweep.WithDeleteConcurrency(o.DeleteConcurrency))
	}
	if o.DeleteRate != 0 {
		opts = append(opts, sweep.WithDeleteRate(o.DeleteRate))
	}
	return opts
}

// SweepRun deletes the candidates of runID, a finished mark of the
// repository (Result.Report.RunID of a dry run of Collect), and nothing
// else: lakegc.SweepRun through the repository's namespace, with the
// deleter Collect's sweep uses (S3's DeleteObjects, the local blockstore's
// files). It asks lakeFS for the repository's namespace only; o's
// Repository, BlockstorePath, Blockstore, DeleteConcurrency, DeleteRate,
// Quarantine, Lease, KeepRuns, Include, MinAge, Clock, TempDir, Logger and
// Progress apply. A mark that a
// later mark of the repository superseded is refused, with an error
// wrapping lakegc.ErrSuperseded that names the later run, unless
// o.SweepSuperseded: an object it found garbage may have become live since.
// bucket is as Collect's.
func SweepRun(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options, runID string) (*Result, error) {
	if runID == "" {
		return &Result{}, fmt.Errorf("%w: no run ID to sweep", ErrInvalidInput)
	}
	o.Sweep, o.Optimized, o.InitNamespace, o.resumeMark = true, false, false, runID
	return Collect(ctx, client, bucket, o)
}

// repoRun is a repository's namespace, opened for reading a run.
type repoRun struct {
	cfg   lakegc.Config
	host  *lakeFSHost
	close func()
}

// openRun opens the repository's namespace as Collect does, for reading
// the runs it left.
func openRun(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options) (*repoRun, error) {
	switch {
	case client == nil:
		return nil, fmt.Errorf("%w: no lakeFS client", ErrInvalidInput)
	case o.Repository == "":
		return nil, fmt.Errorf("%w: no Repository", ErrInvalidInput)
	}
	repo, err := client.GetRepository(ctx, o.Repository)
	if err != nil {
		return nil, lakeFSError(err)
	}
	r := &repoRun{close: func() {}}
	var resolved string
	if bucket != nil {
		resolved, err = resolveNamespace(repo.StorageNamespace, o.BlockstorePath)
	} else {
		resolved, bucket, err = openNamespace(ctx, repo.StorageNamespace, o.BlockstorePath, o.Blockstore)
		if err == nil {
			r.close = func() { bucket.Close() }
		}
	}
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r.host = &lakeFSHost{client: client, repo: o.Repository, namespace: strings.TrimRight(repo.StorageNamespace, "/"),
		resolved: resolved, bucket: bucket, logger: logger, concurrency: max(o.Concurrency, 1), noRangeCache: o.NoRangeCache}
	if strings.HasPrefix(r.host.namespace, "local://") {
		root, err := filepath.Abs(o.BlockstorePath)
		if err != nil {
			r.close()
			return nil, err
		}
		r.host.doubled = "local://" + filepath.ToSlash(root) + strings.TrimPrefix(resolved, "local://")
	}
	r.cfg = lakegc.Config{Bucket: bucket, Namespace: resolved, Repository: o.Repository, StoragePrefix: storagePrefix,
		MinAge: o.MinAge, Include: o.Include, Logger: o.Logger, Clock: o.Clock}
	return r, nil
}

// Candidates yields the candidates of runID, a finished mark of the
// repository (lakegc.Candidates): each with its size, modification time,
// slice and a reason told from its key, in the order of the run's report.
// bucket is as Collect's; nil: the namespace is opened from o
// (BlockstorePath, Blockstore) and closed when the sequence ends.
func Candidates(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options, runID string) iter.Seq2[lakegc.Candidate, error] {
	return func(yield func(lakegc.Candidate, error) bool) {
		r, err := openRun(ctx, client, bucket, o)
		if err != nil {
			yield(lakegc.Candidate{}, err)
			return
		}
		defer r.close()
		for c, err := range lakegc.Candidates(ctx, r.cfg, runID) {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// CandidatePage returns a page of the candidates of runID
// (lakegc.CandidatePage): at most limit (0: all) from the offset-th, and
// the offset of the next page, 0 after the last. bucket is as Candidates'.
func CandidatePage(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options, runID string, offset, limit int) ([]lakegc.Candidate, int, error) {
	r, err := openRun(ctx, client, bucket, o)
	if err != nil {
		return nil, 0, err
	}
	defer r.close()
	return lakegc.CandidatePage(ctx, r.cfg, runID, offset, limit)
}

// Explain says why runID, a finished mark of the repository, marked or kept
// each of queries (lakegc.Explain), reading the run's kept commits' ranges
// again one commit at a time. A query is a key relative to the namespace, a
// full address, or a lakeFS path "lakefs://<repository>/<ref>/<path>" of
// this repository (read as lakeFS reads one: %XX escapes decoded; a '?' or
// '#' in a path must be escaped), which lakeFS resolves to the object's
// physical address now (a path staged since the run names its new
// object). bucket is as Collect's.
func Explain(ctx context.Context, client *api.Client, bucket *blob.Bucket, o Options, runID string, queries []string) ([]lakegc.Explanation, error) {
	r, err := openRun(ctx, client, bucket, o)
	if err != nil {
		return nil, err
	}
	defer r.close()
	addrs := make([]string, len(queries))
	for i, q := range queries {
		if !strings.HasPrefix(q, "lakefs://") {
			// The repository's own spellings of the namespace, as lakeFS
			// prints addresses, respelled as the run read them.
			addrs[i], _ = r.host.relative(q)
			continue
		}
		ref, path, err := splitLakeFSPath(q, o.Repository)
		if err != nil {
			return nil, err
		}
		st, err := client.StatObject(ctx, o.Repository, ref, path)
		if err != nil {
			return nil, fmt.Errorf("host: explain %s: %w", q, lakeFSError(err))
		}
		if st.PhysicalAddress == "" {
			return nil, fmt.Errorf("%w: explain %s: no physical address", ErrLakeFS, q)
		}
		addrs[i], _ = r.host.relative(st.PhysicalAddress)
	}
	out, err := lakegc.Explain(ctx, lakegc.Host{Committed: r.host}, r.cfg, runID, addrs)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if strings.HasPrefix(queries[i], "lakefs://") {
			out[i].Reason = "its object is " + addrs[i] + ": " + out[i].Reason
		}
		out[i].Query = queries[i]
	}
	return out, nil
}

// errBadPath is a lakeFS path Explain cannot read.
var errBadPath = errors.New("not a path lakefs://<repository>/<ref>/<path> of the repository")

// splitLakeFSPath splits a lakeFS path of repo into its ref and path, as
// lakeFS's own parser reads a lakefs:// URI (a URL: %XX escapes decoded). A
// query or fragment is refused, not dropped: a '?' or '#' in an object's
// path must be escaped (%3F, %23), or another object would be explained.
func splitLakeFSPath(q, repo string) (ref, path string, err error) {
	u, err := url.Parse(q)
	switch {
	case err != nil:
	case u.Host != repo || u.User != nil:
		err = errBadPath
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		err = errors.New("a '?' or '#' in a path is written %3F or %23")
	}
	if err == nil {
		var ok bool
		ref, path, ok = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		if !ok || ref == "" || path == "" {
			err = errBadPath
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: %q: %w", ErrInvalidInput, q, err)
	}
	return ref, path, nil
}
