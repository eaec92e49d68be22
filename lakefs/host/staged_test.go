package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
)

// fakeStaging is a lakeFS that answers the calls stagedAddresses makes:
// branches, their diffs, and object stats.
type fakeStaging struct {
	branches []string
	hidden   map[string]bool                // listed only with show_hidden=true, as lakeFS does
	diffs    map[string][]map[string]string // branch → diff results
	stats    map[string]string              // branch/path → physical address; absent: 404
	// refuse answers 403 to the requests whose path ends so, and broken
	// a page that is not JSON.
	refuse, broken string
	// delay holds each stat, whose calls in flight are counted.
	delay                 time.Duration
	inFlight, maxInFlight atomic.Int64
}

func (f *fakeStaging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	page := func(results any) {
		_ = json.NewEncoder(w).Encode(map[string]any{"pagination": map[string]any{"has_more": false, "next_offset": ""}, "results": results})
	}
	p := strings.TrimPrefix(r.URL.Path, "/api/v1/repositories/r/")
	switch {
	case f.refuse != "" && strings.HasSuffix(r.URL.Path, f.refuse):
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"insufficient permissions"}`))
	case f.broken != "" && strings.HasSuffix(r.URL.Path, f.broken):
		_, _ = w.Write([]byte(`{"pagination":`))
	case p == "branches":
		var res []map[string]string
		for _, b := range f.branches {
			if !f.hidden[b] || r.URL.Query().Get("show_hidden") == "true" {
				res = append(res, map[string]string{"id": b})
			}
		}
		page(res)
	case strings.HasPrefix(p, "branches/") && strings.HasSuffix(p, "/diff"):
		page(f.diffs[strings.TrimSuffix(strings.TrimPrefix(p, "branches/"), "/diff")])
	case strings.HasPrefix(p, "refs/") && strings.HasSuffix(p, "/objects/stat"):
		branch := strings.TrimSuffix(strings.TrimPrefix(p, "refs/"), "/objects/stat")
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for m := f.maxInFlight.Load(); n > m && !f.maxInFlight.CompareAndSwap(m, n); m = f.maxInFlight.Load() {
		}
		time.Sleep(f.delay)
		addr, ok := f.stats[branch+"/"+r.URL.Query().Get("path")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"not found"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Query().Get("path"), "physical_address": addr})
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"no such route"}`))
	}
}

func stagedOf(t *testing.T, f *fakeStaging) ([]string, error) {
	t.Helper()
	return stagedIn(t.Context(), t, f)
}

// stagedIn is stagedOf under ctx.
func stagedIn(ctx context.Context, t *testing.T, f *fakeStaging) ([]string, error) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	h := &lakeFSHost{client: client, repo: "r", namespace: "s3://b/repo1", resolved: "s3://b/repo1", concurrency: 4,
		tempDir: t.TempDir(), logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	seq, _, err := h.stagedAddresses(ctx)
	if err != nil {
		return nil, err
	}
	var got []string
	for a, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, a)
	}
	return got, nil
}

// Every added or changed object of every branch is statted; a removed one
// is not, and one unstaged since the diff (404) is left out.
func TestStagedAddresses(t *testing.T) {
	f := &fakeStaging{
		branches: []string{"main", "_hidden"},
		hidden:   map[string]bool{"_hidden": true},
		diffs: map[string][]map[string]string{
			"main": {
				{"type": "added", "path": "a", "path_type": "object"},
				{"type": "changed", "path": "b", "path_type": "object"},
				{"type": "removed", "path": "c", "path_type": "object"},
				{"type": "added", "path": "gone", "path_type": "object"},
				{"type": "added", "path": "spelled", "path_type": "object"},
			},
			"_hidden": {{"type": "added", "path": "h", "path_type": "object"}},
		},
		// Full addresses go to Collect as they are: it keeps every key
		// their objects may have (a scheme and host in capitals name the
		// namespace's object), and refuses another spelling.
		stats: map[string]string{"main/a": "s3://b/repo1/data/a", "main/b": "data/b", "main/spelled": "S3://B/repo1/data/s",
			"_hidden/h": "s3://b/repo1/data/h,sig"},
	}
	got, err := stagedOf(t, f)
	slices.Sort(got) // the stats answer in any order
	if want := []string{"S3://B/repo1/data/s", "data/b", "s3://b/repo1/data/a", "s3://b/repo1/data/h,sig"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("staged %q, %v; want %q", got, err, want)
	}
}

// The spellings lakeFS itself uses for a local namespace — the
// repository's local://repo1 and the object API's doubled path — are
// respelled under the resolved namespace, which Collect knows; any other
// full address is passed on as it is, for Collect to judge.
func TestRelativeRespellsLakeFSSpellings(t *testing.T) {
	h := &lakeFSHost{namespace: "local://repo1", resolved: "local:///bs/repo1", doubled: "local:///bs/bs/repo1"}
	for in, want := range map[string]string{
		"data/x":                       "data/x",
		"local://repo1/data/x":         "local:///bs/repo1/data/x",
		"local:///bs/bs/repo1/data/x":  "local:///bs/repo1/data/x",
		"local:///bs/repo1/data/x":     "local:///bs/repo1/data/x",
		"local:///elsewhere/data/x":    "local:///elsewhere/data/x",
		"file:///bs/repo1/data/x":      "file:///bs/repo1/data/x",
		"local://repo1/data/k%3Dv,sig": "local:///bs/repo1/data/k%3Dv,sig",
	} {
		if got, ok := h.relative(in); !ok || got != want {
			t.Errorf("relative(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// A change the command does not know — a common prefix standing for
// objects it would not stat, a type lakeFS may add — fails the export
// instead of leaving its objects out.
func TestStagedAddressesRefusesUnknownChanges(t *testing.T) {
	for name, ch := range map[string]map[string]string{
		"common prefix":     {"type": "added", "path": "dir/", "path_type": "common_prefix"},
		"prefix changed":    {"type": "prefix_changed", "path": "dir/", "path_type": "common_prefix"},
		"conflict":          {"type": "conflict", "path": "x", "path_type": "object"},
		"unknown type":      {"type": "renamed", "path": "x", "path_type": "object"},
		"unknown path type": {"type": "added", "path": "x", "path_type": "link"},
	} {
		f := &fakeStaging{branches: []string{"main"}, diffs: map[string][]map[string]string{"main": {ch}},
			stats: map[string]string{"main/x": "data/x", "main/dir/": "data/d"}}
		if got, err := stagedOf(t, f); err == nil {
			t.Errorf("%s: accepted, staged %q", name, got)
		}
	}
}

// A staged object lakeFS states without a physical address fails the
// listing as an error of lakeFS: its bytes could be anywhere, and going on
// without it would leave them unprotected. (The API's decoder refuses it
// first; stagedAddresses refuses it again should that change.)
func TestStagedAddressesRefusesNoAddress(t *testing.T) {
	f := &fakeStaging{branches: []string{"main"},
		diffs: map[string][]map[string]string{"main": {{"type": "added", "path": "a", "path_type": "object"},
			{"type": "added", "path": "x", "path_type": "object"}}},
		stats: map[string]string{"main/a": "data/a", "main/x": ""}}
	if got, err := stagedOf(t, f); !errors.Is(err, ErrLakeFS) {
		t.Errorf("staged %q, %v; want an error of lakeFS", got, err)
	}
}

// The commits report must be where lakeFS writes it under the storage
// prefix the command reads metaranges from and keeps out of the mark: a
// report under another prefix (lakeFS configured with another
// block_storage_prefix) is refused, since the mark would then list lakeFS's
// own files as data.
func TestActiveCommitsRefusesAnotherStoragePrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{"_lakefs": true, "_meta": false} {
		dir := t.TempDir()
		bucket, err := fileblob.OpenBucket(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bucket.Close()
		key := prefix + "/retention/gc/commits/run_id=run1/commits.csv"
		if err := bucket.WriteAll(t.Context(), key, []byte("commit_id,expired,metarange_id\nc1,false,m1\n"), nil); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/api/v1/repositories/r/gc/prepare_commits/async":
				w.WriteHeader(http.StatusAccepted)
				_, _ = w.Write([]byte(`{"id":"t1"}`))
			case "/api/v1/repositories/r/gc/prepare_commits/status":
				_ = json.NewEncoder(w).Encode(map[string]any{"task_id": "t1", "completed": true, "result": map[string]string{
					"run_id": "run1", "gc_commits_location": "s3://b/repo1/" + key, "gc_addresses_location": "s3://b/repo1/" + prefix + "/retention/gc/addresses/"}})
			case "/api/v1/repositories/r/tags": // no tags: the extended rules add nothing
				_ = json.NewEncoder(w).Encode(map[string]any{"pagination": map[string]any{"has_more": false, "next_offset": ""}, "results": []any{}})
			case "/api/v1/repositories/r/settings/gc_rules":
				_ = json.NewEncoder(w).Encode(map[string]any{"default_retention_days": 7, "branches": nil})
			default:
				w.WriteHeader(http.StatusNotFound)
			}
		}))
		defer srv.Close()
		client, err := api.New(srv.URL, "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		h := &lakeFSHost{client: client, repo: "r", namespace: "s3://b/repo1", resolved: "s3://b/repo1", bucket: bucket,
			tempDir: t.TempDir(), logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		hc, err := h.ActiveCommits(t.Context(), time.Now())
		if ok != (err == nil) {
			t.Errorf("prefix %s: %+v, %v", prefix, hc, err)
		}
		if !ok && (!errors.Is(err, ErrLakeFS) || !strings.HasPrefix(err.Error(), "host: ")) {
			t.Errorf("prefix %s: %v, want an error of lakeFS naming the package", prefix, err)
		}
	}
}

// Any call of the listing that fails — the branches, a branch's diff, a
// stat other than 404, a page that is not JSON — fails the export: a
// listing that went on without it would leave staged objects unprotected.
func TestStagedAddressesFailsWithAnyCall(t *testing.T) {
	for _, tc := range []struct{ refuse, broken string }{
		{refuse: "/branches"},
		{refuse: "/branches/feat/diff"},
		{refuse: "/refs/feat/objects/stat"},
		{broken: "/branches"},
		{broken: "/branches/feat/diff"},
		{broken: "/refs/feat/objects/stat"},
	} {
		f := &fakeStaging{branches: []string{"main", "feat"},
			diffs: map[string][]map[string]string{"main": {{"type": "added", "path": "a", "path_type": "object"}},
				"feat": {{"type": "added", "path": "b", "path_type": "object"}}},
			stats:  map[string]string{"main/a": "data/a", "feat/b": "data/b"},
			refuse: tc.refuse, broken: tc.broken}
		if got, err := stagedOf(t, f); !errors.Is(err, ErrLakeFS) {
			t.Errorf("%+v: staged %q, %v; want an error of lakeFS", tc, got, err)
		}
	}
}

// An uncommitted export lakeFS says it wrote anywhere but under the
// namespace's _lakefs/retention/gc/uncommitted/<run_id>/ is refused as an
// error of lakeFS, with its cause.
func TestExportRefusesAnotherLocation(t *testing.T) {
	for loc, cause := range map[string]error{
		"s3://other/repo1/_lakefs/retention/gc/uncommitted/u1/uncommitted/": api.ErrOutsideNamespace,
		"s3://b/repo1/_meta/retention/gc/uncommitted/u1/uncommitted/":       nil,
		"s3://b/repo1/_lakefs/retention/gc/uncommitted/u2/uncommitted/":     nil,
	} {
		err := exportAt(t, loc, "s3://b/repo1", "s3://b/repo1")
		if !errors.Is(err, ErrLakeFS) || cause != nil && !errors.Is(err, cause) || err != nil && strings.Contains(err.Error(), "<nil>") {
			t.Errorf("export at %s: %v; want an error of lakeFS wrapping %v", loc, err, cause)
		}
	}
}

// exportAt runs Export of a repository whose storage namespace is
// namespace, read as resolved, against a lakeFS that says it wrote its
// uncommitted export (run u1, some files) at loc; it returns Export's error.
func exportAt(t *testing.T, loc, namespace, resolved string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"run_id": "u1", "gc_uncommitted_location": loc})
	}))
	defer srv.Close()
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	h := &lakeFSHost{client: client, repo: "r", namespace: namespace, resolved: resolved,
		tempDir: t.TempDir(), logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, err = h.Export(t.Context())
	return err
}

// The stats are made up to the bound at once (4 in stagedOf), never more,
// and every staged object of every branch is listed, whatever order the
// stats answer in.
func TestStagedAddressesConcurrent(t *testing.T) {
	f := &fakeStaging{branches: []string{"a", "b", "c"}, diffs: map[string][]map[string]string{},
		stats: map[string]string{}, delay: 5 * time.Millisecond}
	var want []string
	for _, b := range f.branches {
		for i := range 20 {
			p := fmt.Sprintf("p%02d", i)
			f.diffs[b] = append(f.diffs[b], map[string]string{"type": "added", "path": p, "path_type": "object"})
			f.stats[b+"/"+p] = "data/" + b + "/" + p
			want = append(want, "data/"+b+"/"+p)
		}
	}
	got, err := stagedOf(t, f)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("staged %q, %v; want %q", got, err, want)
	}
	if m := f.maxInFlight.Load(); m < 2 || m > 4 {
		t.Errorf("%d stats in flight at most, want 2 to 4", m)
	}
}

// A listing whose context ends while stats are in flight fails with the
// context's error instead of returning the stats made so far.
func TestStagedAddressesCancelled(t *testing.T) {
	f := &fakeStaging{branches: []string{"a", "b"}, diffs: map[string][]map[string]string{},
		stats: map[string]string{}, delay: 20 * time.Millisecond}
	for _, b := range f.branches {
		for i := range 20 {
			p := fmt.Sprintf("p%02d", i)
			f.diffs[b] = append(f.diffs[b], map[string]string{"type": "added", "path": p, "path_type": "object"})
			f.stats[b+"/"+p] = "data/" + b + "/" + p
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for f.inFlight.Load() == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	got, err := stagedIn(ctx, t, f)
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Errorf("staged %q, %v; want nothing and context.Canceled", got, err)
	}
}

// An uncommitted export lakeFS wrote in a local repository's namespace
// spelled from another blockstore folder than the command's (the same one
// through a symbolic link, or another) fails the run as a namespace
// mismatch naming both spellings, not as an error of lakeFS; an export in
// another namespace is still lakeFS's error.
func TestExportInLocalNamespaceSpelledOtherwise(t *testing.T) {
	const tail = "/_lakefs/retention/gc/uncommitted/u1/uncommitted/"
	for loc, mismatch := range map[string]bool{
		"local:///srv/lakefs-real/repo1" + tail:   true,
		"local:///srv/other/data/repo1" + tail:    true,
		"local:///srv/lakefs-real/repo2" + tail:   false,
		"local://repo1" + tail:                    false,
		"s3://b/repo1" + tail:                     false,
		"local:///srv/lakefs-link/repo1/x" + tail: false,
	} {
		err := exportAt(t, loc, "local://repo1", "local:///srv/lakefs-link/repo1")
		switch {
		case mismatch && (!errors.Is(err, lakegc.ErrNamespaceMismatch) || errors.Is(err, ErrLakeFS) ||
			!strings.Contains(err.Error(), strings.TrimSuffix(loc, tail)) || !strings.Contains(err.Error(), "--blockstore-path")):
			t.Errorf("export at %s: %v; want a namespace mismatch naming lakeFS's spelling and --blockstore-path", loc, err)
		case !mismatch && (!errors.Is(err, ErrLakeFS) || errors.Is(err, lakegc.ErrNamespaceMismatch)):
			t.Errorf("export at %s: %v; want an error of lakeFS", loc, err)
		}
	}
}
