package host_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/namespace"
)

// TestIntegrationExample runs Example's code against a real lakeFS
// (LAKEFS_BIN, or LAKEFS_ENDPOINT with a key pair; skipped otherwise) as of
// three days after lakefstest's history was built: the dry run finds
// exactly the history's garbage and deletes nothing; then a sweep through
// a bucket the caller opened (host.OpenNamespace) deletes exactly it, and
// every kept object still reads back.
func TestIntegrationExample(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-host-example")
	client, err := api.New(s.Endpoint, s.AccessKeyID, s.SecretAccessKey)
	if err != nil {
		t.Fatal(err)
	}
	now := h.Built.Add(3 * 24 * time.Hour)
	clock := func() time.Time { return now }

	var out bytes.Buffer
	if err := dryRun(t.Context(), client, h.Repo, s.BlockstorePath, clock, &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run:\n%s", out.String())
	if want := fmt.Sprintf(" %d garbage, listed under ", len(h.Garbage())); !strings.Contains(out.String(), want) {
		t.Errorf("dry run printed %q, want %q", out.String(), want)
	}
	if want := fmt.Sprintf("%d kept commits; ", len(h.KeptCommits)); !strings.Contains(out.String(), want) {
		t.Errorf("dry run printed %q, want %q", out.String(), want)
	}
	h.VerifyBeforeGC(t, s)

	bucket, err := host.OpenNamespace(t.Context(), h.Namespace, s.BlockstorePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	res, err := host.Collect(t.Context(), client, bucket, host.Options{Repository: h.Repo, BlockstorePath: s.BlockstorePath, Clock: clock, Sweep: true})
	if err != nil {
		t.Fatal(err)
	}
	if sw := res.Report.Sweep; sw == nil || sw.Deleted != int64(len(h.Garbage())) || sw.Failed+sw.Refused != 0 {
		t.Errorf("sweep %+v, want %d deleted", sw, len(h.Garbage()))
	}
	if res.Stats.LakeFSRequests == 0 || res.Stats.Reuploads.CommittedEntries == 0 {
		t.Errorf("host stats %+v: no requests or no committed entries counted", res.Stats)
	}
	h.VerifyAfterGC(t, s)
	// The caller's bucket is still open.
	if _, err := bucket.List(nil).Next(t.Context()); err != nil {
		t.Errorf("the caller's bucket after Collect: %v", err)
	}
}

// Options Collect refuses fail before any call to lakeFS.
func TestCollectInvalidOptions(t *testing.T) {
	client, err := api.New("http://127.0.0.1:1", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]host.Options{
		"no repository":        {},
		"negative concurrency": {Repository: "r", Concurrency: -1},
		"too much concurrency": {Repository: "r", Concurrency: host.MaxConcurrency + 1},
		"negative memory":      {Repository: "r", MemoryBudget: -1},
		"shard of 0":           {Repository: "r", Shard: 1},
		"shard past the count": {Repository: "r", Shard: 3, Shards: 2},
		"negative shard":       {Repository: "r", Shard: -1, Shards: 2},
		"negative shards":      {Repository: "r", Shards: -2},
		"sharded optimized":    {Repository: "r", Shard: 0, Shards: 2, Optimized: true},
		"sharded with a lease": {Repository: "r", Shard: 1, Shards: 2, Lease: &lease.Options{}},
		"sharded pruning":      {Repository: "r", Shard: 1, Shards: 2, KeepRuns: 3},
	} {
		res, err := host.Collect(t.Context(), client, nil, o)
		if !errors.Is(err, host.ErrInvalidInput) || !strings.HasPrefix(err.Error(), "host: ") || res == nil || res.Report != nil || res.Stats.LakeFSRequests != 0 {
			t.Errorf("%s: %+v, %v; want ErrInvalidInput before any request", name, res, err)
		}
	}
	if _, err := host.Collect(t.Context(), nil, nil, host.Options{Repository: "r"}); !errors.Is(err, host.ErrInvalidInput) {
		t.Errorf("no client: %v", err)
	}
}

// A local namespace without BlockstorePath is namespace.ErrNoLocalRoot,
// whether Collect opens the bucket or is given one: lakeFS's spelling of
// its full addresses is unknown without it.
func TestOpenNamespaceLocalNeedsBlockstorePath(t *testing.T) {
	if _, err := host.OpenNamespace(t.Context(), "local://repo1", "", nil); !errors.Is(err, namespace.ErrNoLocalRoot) {
		t.Errorf("OpenNamespace without a blockstore path: %v", err)
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "repo1"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := host.OpenNamespace(t.Context(), "local://repo1", root, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	// Given a bucket: the repository is read from lakeFS first.
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": "local://repo1", "default_branch": "main", "creation_date": 1})
	}))
	defer srv.Close()
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	if _, err := host.Collect(t.Context(), client, bucket, host.Options{Repository: "r"}); !errors.Is(err, namespace.ErrNoLocalRoot) || !slices.Equal(paths, []string{"/api/v1/repositories/r"}) {
		t.Errorf("Collect of a local repository without BlockstorePath: %v after %q", err, paths)
	}
}

// A bucket given for a local namespace must be the namespace's folder under
// BlockstorePath, where the sweep deletes files by the keys it listed
// through the bucket: another folder is refused before anything is marked,
// and the probe leaves no file behind.
func TestCollectRefusesAnotherLocalFolder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/repositories/r" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": "local://repo1", "default_branch": "main", "creation_date": 1})
	}))
	defer srv.Close()
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	root, elsewhere := t.TempDir(), t.TempDir()
	// lakeFS's marker in the repository's folder, and in another
	// repository's folder (so the marker check alone would pass it).
	for _, dir := range []string{filepath.Join(root, "repo1"), elsewhere} {
		if err := os.MkdirAll(filepath.Join(dir, "_lakefs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "_lakefs", "dummy"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other, err := fileblob.OpenBucket(elsewhere, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = host.Collect(t.Context(), client, other, host.Options{Repository: "r", BlockstorePath: root})
	if !errors.Is(err, host.ErrInvalidInput) || !strings.Contains(err.Error(), "not the folder") {
		t.Errorf("a bucket of another folder: %v, want ErrInvalidInput", err)
	}
	// The namespace's own folder passes the probe, and goes on to ask
	// lakeFS for its export (which this server does not have).
	own, err := host.OpenNamespace(t.Context(), "local://repo1", root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	_, err = host.Collect(t.Context(), client, own, host.Options{Repository: "r", BlockstorePath: root})
	if !errors.Is(err, host.ErrLakeFS) || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("the namespace's own folder: %v, want lakeFS's 404 of the export", err)
	}
	for _, dir := range []string{root, elsewhere} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), "probe") {
				t.Errorf("left behind: %s", p)
			}
			return err
		})
	}
	// Nothing is written through a bucket not yet known to be the
	// repository's: an empty folder (a shared parent, say) stays empty.
	empty := t.TempDir()
	stranger, err := fileblob.OpenBucket(empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	_, err = host.Collect(t.Context(), client, stranger, host.Options{Repository: "r", BlockstorePath: root})
	if !errors.Is(err, host.ErrInvalidInput) {
		t.Errorf("a bucket of an empty folder: %v, want ErrInvalidInput", err)
	}
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
		t.Errorf("the probe wrote into the given bucket's folder: %v, %v", ents, err)
	}
	// A namespace's folder without lakeFS's folder (a repository created
	// bare) passes the probe, which leaves no folder of its own behind.
	if err := os.Mkdir(filepath.Join(root, "repo2"), 0o755); err != nil {
		t.Fatal(err)
	}
	bare, err := host.OpenNamespace(t.Context(), "local://repo2", root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/repositories/r" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": "local://repo2", "default_branch": "main", "creation_date": 1})
	}))
	defer srv2.Close()
	client2, err := api.New(srv2.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	_, err = host.Collect(t.Context(), client2, bare, host.Options{Repository: "r", BlockstorePath: root})
	if !errors.Is(err, lakegc.ErrNoNamespaceMarker) {
		t.Errorf("a bare namespace's own folder: %v, want the marker check's refusal", err)
	}
	if ents, err := os.ReadDir(filepath.Join(root, "repo2")); err != nil || len(ents) != 0 {
		t.Errorf("the probe left %v behind in a bare namespace's folder (%v)", ents, err)
	}
}

// Given lakeFS's blockstore settings of the local type and no
// BlockstorePath, Collect takes the blockstore's folder from them, as the
// command's --lakefs-config does: the namespace opens there, and the run
// goes on to ask lakeFS for its export (which this server does not have).
func TestCollectLocalBlockstorePathFromSettings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/repositories/r" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": "local://repo1", "default_branch": "main", "creation_date": 1})
	}))
	defer srv.Close()
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "repo1", "_lakefs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "repo1", "_lakefs", "dummy"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	store := &blockstore.Config{Type: blockstore.TypeLocal, Local: blockstore.Local{Path: root}}
	first, err := host.Collect(t.Context(), client, nil, host.Options{Repository: "r", Blockstore: store})
	if !errors.Is(err, host.ErrLakeFS) || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a local repository with lakeFS's local blockstore settings: %v, want lakeFS's 404 of the export", err)
	}
	// A given bucket of the namespace's folder passes the probe the same way.
	own, err := host.OpenNamespace(t.Context(), "local://repo1", root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	second, err := host.Collect(t.Context(), client, own, host.Options{Repository: "r", Blockstore: store})
	if !errors.Is(err, host.ErrLakeFS) || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a given bucket with lakeFS's local blockstore settings: %v, want lakeFS's 404 of the export", err)
	}
	// Each Result counts its own run's requests, the client reused.
	if n := first.Stats.LakeFSRequests; n == 0 || second.Stats.LakeFSRequests != n {
		t.Errorf("requests of two like runs on one client: %d then %d", n, second.Stats.LakeFSRequests)
	}
}
