package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/internal/s3loop"
	"github.com/lakegc/lakegc/lease"
)

// opsRepo is a repository "r" whose lakeFS (opsAPI) keeps one empty commit:
// its old lakeFS-shaped objects are garbage, and nothing else is. Its
// namespace is a folder of lakeFS's local blockstore, or, with store, a
// prefix of a bucket on an S3-protocol server, opened through lakeFS's
// blockstore settings (--lakefs-config, keys from LAKEFS_BLOCKSTORE_*).
type opsRepo struct {
	t         *testing.T
	root, dir string            // the blockstore's folder, the namespace's
	garbage   map[string]string // key → content
	kept      []string
	now       time.Time
	ns        string         // the namespace, as lakeFS names it
	store     *s3loop.Server // the S3-protocol server, or nil for the local blockstore
	config    string         // lakeFS's configuration file, with store
}

const (
	opsSlice = "ft01b59ksdue7ngg4om0"
	opsRun1  = "ft0gcrunksdue7ngg4o00"
	opsRun2  = "ft0gcrunksdue7ngg4p00"
	// opsBucket and opsPrefix place an S3 opsRepo's namespace; opsOutside
	// are objects of the bucket outside it (a sibling namespace whose
	// name starts with the repository's, and a stray object), which no
	// command may touch.
	opsBucket = "lakes"
	opsPrefix = "repo1/"
)

var opsOutside = []string{"repo10/data/" + opsSlice + "/dc7eqrpksdue7ngg4ong", "outside"}

// opsKinds are the kinds of namespace the operator's workflows run on.
var opsKinds = []string{"local", "s3"}

// newOpsRepo plants the repository on lakeFS's local blockstore.
func newOpsRepo(t *testing.T) *opsRepo { return newOpsRepoOn(t, "local") }

// newOpsRepoOn plants the repository on a namespace of the kind ("local"
// or "s3").
func newOpsRepoOn(t *testing.T, kind string) *opsRepo {
	r := &opsRepo{t: t, root: t.TempDir(), garbage: map[string]string{}, now: time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)}
	r.dir = filepath.Join(r.root, "repo1")
	r.ns = "local://repo1"
	if kind == "s3" {
		r.store = s3loop.Start(t, opsBucket)
		r.ns = "s3://" + opsBucket + "/" + strings.TrimSuffix(opsPrefix, "/")
		r.config = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(r.config, []byte(`
blockstore:
  type: s3
  s3:
    endpoint: "`+r.store.URL+`"
    force_path_style: true
    discover_bucket_region: false
    region: eu-west-1
`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := r.now.Add(-10 * 24 * time.Hour)
	r.write("_lakefs/dummy", "this is dummy data - created by lakeFS to check accessibility", old)
	for _, run := range []string{opsRun1, opsRun2} {
		r.write("_lakefs/retention/gc/commits/run_id="+run+"/commits.csv", "commit_id,expired,metarange_id\nc1,false,\n", old)
	}
	for _, k := range []string{"data/" + opsSlice + "/dc7eqrpksdue7ngg4ong", "data/" + opsSlice + "/dc7eqrpksdue7ngg4oo0"} {
		r.garbage[k] = "old data of " + k
		r.write(k, r.garbage[k], old)
	}
	r.write("tenant/report.csv", "another tenant's", old)
	r.write("data/tenant.csv", "another tenant's", old)
	r.write("data/"+opsSlice+"/dc7eqrpksdue7ngg4op0", "young", r.now)
	r.kept = []string{"data/tenant.csv", "data/" + opsSlice + "/dc7eqrpksdue7ngg4op0", "_lakefs/dummy", "tenant/report.csv"}
	if r.store != nil {
		for _, k := range opsOutside {
			r.store.PutAt(t, opsBucket, k, "not the repository's garbage", old)
		}
		r.store.Reset()
	}
	return r
}

func (r *opsRepo) write(key, data string, at time.Time) {
	if r.store != nil {
		r.store.PutAt(r.t, opsBucket, opsPrefix+key, data, at)
		return
	}
	p := filepath.Join(r.dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		r.t.Fatal(err)
	}
}

func (r *opsRepo) exists(key string) bool {
	if r.store != nil {
		return r.store.Exists(r.t, opsBucket, opsPrefix+key)
	}
	_, err := os.Stat(filepath.Join(r.dir, filepath.FromSlash(key)))
	return err == nil
}

// env is the environment of a run against the lakeFS at url, as of at.
func (r *opsRepo) env(url string, at time.Time) map[string]string {
	env := map[string]string{
		"LAKECTL_SERVER_ENDPOINT_URL":           url,
		"LAKECTL_CREDENTIALS_ACCESS_KEY_ID":     "a",
		"LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "b",
		envBlockstorePath:                       r.root,
		envNow:                                  at.Format(time.RFC3339),
	}
	if r.store != nil {
		env["LAKEFS_BLOCKSTORE_S3_CREDENTIALS_ACCESS_KEY_ID"] = envKeyID
		env["LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SECRET_ACCESS_KEY"] = envSecret
	}
	return env
}

// api is the repository's lakeFS, naming run ID runID.
func (r *opsRepo) api(runID string) *httptest.Server {
	if r.store != nil {
		return opsAPI(r.t, r.ns, r.ns, runID)
	}
	return opsAPI(r.t, r.ns, "local://"+filepath.ToSlash(r.dir), runID)
}

// run runs lakegc against the lakeFS that names run ID runID, as of at.
func (r *opsRepo) run(runID string, at time.Time, args ...string) (int, string, string) {
	r.t.Helper()
	flags := []string{"--repo", "r"}
	if r.config != "" {
		flags = append(flags, "--lakefs-config", r.config)
	}
	var stdout, stderr bytes.Buffer
	code := run(r.t.Context(), append(args[:1:1], append(flags, args[1:]...)...), envOf(r.env(r.api(runID).URL, at)), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// bucket opens the repository's namespace as the commands do.
func (r *opsRepo) bucket() *blob.Bucket {
	r.t.Helper()
	n := nsFlags{repo: "r"}
	if r.config != "" {
		n.lakeFSConfig = r.config
	}
	if err := n.finish(envOf(r.env(r.api(opsRun1).URL, r.now))); err != nil {
		r.t.Fatal(err)
	}
	b, _, _, err := n.open(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = b.Close() })
	return b
}

// The operator's workflow end to end on lakeFS's local blockstore and on an
// S3-protocol bucket: a dry run prints its run ID and what a sweep would
// free; candidates lists exactly the garbage, paged; explain names the
// reasons; a run a later run superseded is refused unless forced; sweep
// --run deletes exactly the candidates.
func TestOperatorWorkflow(t *testing.T) {
	for _, kind := range opsKinds {
		t.Run(kind, func(t *testing.T) { testOperatorWorkflow(t, newOpsRepoOn(t, kind)) })
	}
}

func testOperatorWorkflow(t *testing.T, r *opsRepo) {
	code, out, logs := r.run(opsRun1, r.now, "gc", "--json")
	if code != exitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, logs)
	}
	var dry struct {
		lakegc.Report
		Estimate *costEstimate `json:"estimate"`
	}
	if err := json.Unmarshal([]byte(out), &dry); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, v := range r.garbage {
		want += int64(len(v))
	}
	e := dry.Estimate
	if dry.RunID != opsRun1 || e == nil || e.Candidates != 2 || e.Statted != 2 || e.Bytes != want || len(e.Clouds) != 3 || e.Clouds[0].Requests != 1 || e.Clouds[1].Requests != 2 {
		t.Fatalf("dry run %s, estimate %+v; want 2 candidates, %d bytes", dry.RunID, e, want)
	}

	// candidates, paged.
	var got []string
	for offset, next := 0, -1; next != 0; offset = next {
		code, out, logs := r.run(opsRun1, r.now, "candidates", "--run", opsRun1, "--limit", "1", "--offset", itoa(offset), "--json")
		var page candidatesPage
		if code != exitOK || json.Unmarshal([]byte(out), &page) != nil || len(page.Candidates) != 1 {
			t.Fatalf("candidates from %d: exit %d\n%s%s", offset, code, out, logs)
		}
		c := page.Candidates[0]
		if v, ok := r.garbage[c.Address]; !ok || c.Size != int64(len(v)) || c.Slice != opsSlice || !strings.Contains(c.Reason, "in slice "+opsSlice) || c.ModTime.IsZero() {
			t.Errorf("candidate %+v", c)
		}
		got = append(got, c.Address)
		next = page.NextOffset
		if len(got) > 2 {
			t.Fatal("more than 2 pages")
		}
	}
	if slices.Sort(got); len(got) != 2 || r.garbage[got[0]] == "" || r.garbage[got[1]] == "" || got[0] == got[1] {
		t.Errorf("candidates %q", got)
	}
	if code, out, _ := r.run(opsRun1, r.now, "candidates", "--run", opsRun1); code != exitOK || !strings.Contains(out, "2 candidates from 0") {
		t.Errorf("candidates as text: exit %d\n%s", code, out)
	}

	// explain.
	code, out, logs = r.run(opsRun1, r.now, "explain", "--run", opsRun1, "--json", got[0], "data/tenant.csv", r.kept[1], r.ns+"/"+got[1])
	var exp struct {
		Explanations []lakegc.Explanation `json:"explanations"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Explanations) != 4 {
		t.Fatalf("explain: exit %d\n%s%s", code, out, logs)
	}
	for i, w := range []struct{ verdict, reason string }{
		{lakegc.VerdictMarked, "in slice"}, {lakegc.VerdictKept, "unrecognized"}, {lakegc.VerdictKept, "young"}, {lakegc.VerdictMarked, "in slice"},
	} {
		if x := exp.Explanations[i]; x.Verdict != w.verdict || !strings.Contains(x.Reason, w.reason) {
			t.Errorf("explain %s: %+v, want %s (%s)", x.Query, x, w.verdict, w.reason)
		}
	}

	// A later dry run supersedes the first: its sweep is refused.
	later := r.now.Add(time.Minute)
	if code, out, logs := r.run(opsRun2, later, "gc", "--json"); code != exitOK {
		t.Fatalf("second dry run: exit %d\n%s%s", code, out, logs)
	}
	code, out, logs = r.run(opsRun2, later, "sweep", "--run", opsRun1, "--json")
	if code != exitRefused || !strings.Contains(logs, opsRun2) || !strings.Contains(logs, "live again") || !strings.Contains(out, `"error"`) {
		t.Fatalf("sweep of a superseded run: exit %d, want %d\n%s%s", code, exitRefused, out, logs)
	}
	for k := range r.garbage {
		if !r.exists(k) {
			t.Fatalf("a refused sweep deleted %s", k)
		}
	}
	// The latest run sweeps exactly its candidates.
	code, out, logs = r.run(opsRun2, later, "sweep", "--run", opsRun2, "--json")
	var swept lakegc.Report
	if code != exitOK || json.Unmarshal([]byte(out), &swept) != nil || swept.Sweep == nil || swept.Sweep.Deleted != 2 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, logs)
	}
	for k := range r.garbage {
		if r.exists(k) {
			t.Errorf("garbage %s not deleted", k)
		}
	}
	for _, k := range r.kept {
		if !r.exists(k) {
			t.Errorf("%s deleted", k)
		}
	}
	r.checkOutside()
	// Forced, the superseded run sweeps what is left of it: nothing (S3's
	// DeleteObjects answers a key already gone as deleted).
	if code, out, logs := r.run(opsRun2, later, "sweep", "--run", opsRun1, "--force"); code != exitOK || !strings.Contains(out, "0 failed, 0 refused") ||
		(r.store == nil && !strings.Contains(out, "0 deleted")) {
		t.Errorf("forced sweep: exit %d\n%s%s", code, out, logs)
	}
	for _, k := range r.kept {
		if !r.exists(k) {
			t.Errorf("%s deleted by the forced sweep", k)
		}
	}
	r.checkOutside()
	// An unknown run is refused too.
	if code, _, logs := r.run(opsRun2, later, "sweep", "--run", "g0ootg1ksdudqv37g7d0"); code != exitRefused {
		t.Errorf("sweep of an unknown run: exit %d\n%s", code, logs)
	}
}

// opsAPI is a lakeFS that keeps one empty commit, of repository "r" in
// namespace ns, which lakeFS spells resolved in the addresses it returns, as
// on its local blockstore.
func opsAPI(t *testing.T, ns, resolved, runID string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := strings.TrimPrefix(r.URL.Path, "/api/v1/repositories/r")
		switch {
		case r.Method == http.MethodGet && p == "":
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": ns, "default_branch": "main", "creation_date": 1})
		case r.Method == http.MethodPost && p == "/gc/prepare_uncommited":
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"run_id": "u-" + runID, "gc_uncommitted_location": "", "continuation_token": nil})
		case r.Method == http.MethodGet && (p == "/branches" || p == "/tags"): // no tags: the extended rules add nothing
			_ = json.NewEncoder(w).Encode(map[string]any{"pagination": map[string]any{"has_more": false, "next_offset": ""}, "results": []any{}})
		case r.Method == http.MethodGet && p == "/settings/gc_rules":
			_ = json.NewEncoder(w).Encode(map[string]any{"default_retention_days": 7, "branches": nil})
		case r.Method == http.MethodPost && p == "/gc/prepare_commits/async" && runID == "norules":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"no retention rules"}`))
		case r.Method == http.MethodPost && p == "/gc/prepare_commits/async":
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(map[string]string{"id": "task-" + runID})
		case r.Method == http.MethodGet && p == "/gc/prepare_commits/status":
			_ = json.NewEncoder(w).Encode(map[string]any{"task_id": r.URL.Query().Get("id"), "completed": true, "result": map[string]string{
				"run_id":                runID,
				"gc_commits_location":   resolved + "/_lakefs/retention/gc/commits/run_id=" + runID + "/commits.csv",
				"gc_addresses_location": resolved + "/_lakefs/retention/gc/addresses/",
			}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"no such route in the test's lakeFS"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The dry run's text summary names the run, what a sweep frees and costs,
// and the next commands; a repository without rules is told how to set them.
func TestDryRunSummary(t *testing.T) {
	r := newOpsRepo(t)
	code, out, logs := r.run(opsRun1, r.now, "gc")
	if code != exitOK || !strings.Contains(out, "lakegc sweep --repo r --run "+opsRun1) || !strings.Contains(out, "a sweep would delete 2 objects") ||
		!strings.Contains(out, "S3 1 DeleteObjects requests under $0.0001") {
		t.Errorf("dry run summary: exit %d\n%s%s", code, out, logs)
	}
	t.Logf("summary:\n%s", out)
	_, cands, _ := r.run(opsRun1, r.now, "candidates", "--run", opsRun1)
	_, expl, _ := r.run(opsRun1, r.now, "explain", "--run", opsRun1, "tenant/report.csv", "data/"+opsSlice+"/dc7eqrpksdue7ngg4ong")
	t.Logf("candidates:\n%s\nexplain:\n%s", cands, expl)
	// Without rules, lakeFS refuses to prepare the commits (404).
	code, out, logs = r.run("norules", r.now, "gc")
	if code != exitLakeFS || !strings.Contains(logs, "lakectl gc set-config lakefs://r -f rules.json") {
		t.Errorf("without rules: exit %d, want %d, and a hint to set them:\n%s%s", code, exitLakeFS, out, logs)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestOpsUsage(t *testing.T) {
	creds := map[string]string{"LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:1", "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "a", "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "b"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", "--help"}, exitOK, "superseded"},
		{[]string{"sweep", "--repo", "r"}, exitUsage, "--run is required"},
		{[]string{"sweep", "--repo", "r", "--run", "x", "--delete-rate", "-1"}, exitUsage, "--delete-rate"},
		{[]string{"sweep", "--repo", "r", "--run", "x", "--delete-concurrency", "5000"}, exitUsage, "--delete-concurrency"},
		{[]string{"candidates", "--repo", "r", "--run", "x", "--limit", "-1"}, exitUsage, "negative"},
		{[]string{"explain", "--repo", "r", "--run", "x"}, exitUsage, "at least one"},
		{[]string{"explain", "--run", "x", "a"}, exitUsage, "--repo is required"},
		{[]string{"gc", "--repo", "r", "--log-level", "loud"}, exitUsage, "log-level"},
		{[]string{"gc", "--repo", "r", "--api-timeout", "0s"}, exitUsage, "--api-timeout"},
		{[]string{"sweep", "--repo", "r", "--run", "x"}, exitLakeFS, "transport"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), tc.args, envOf(creds), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d; output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, stdout.String(), stderr.String())
		}
	}
}

// The price of a sweep follows each cloud's request: 1000 keys a
// DeleteObjects, one an objects.delete, 256 a Blob Batch.
func TestEstimateCost(t *testing.T) {
	for _, tc := range []struct {
		n              int64
		s3, gcs, azure int64
		s3USD          float64
	}{
		{0, 0, 0, 0, 0}, {1, 1, 1, 1, 0.000005}, {1000, 1, 1000, 4, 0.000005}, {1001, 2, 1001, 4, 0.00001}, {2_000_000, 2000, 2_000_000, 7813, 0.01},
	} {
		c := estimateCost(tc.n)
		if c[0].Requests != tc.s3 || c[1].Requests != tc.gcs || c[2].Requests != tc.azure || c[1].USD != 0 || c[2].USD != 0 ||
			c[0].USD < tc.s3USD*0.999 || c[0].USD > tc.s3USD*1.001 {
			t.Errorf("%d candidates: %+v", tc.n, c)
		}
	}
	if got := humanBytes(3 << 30); got != "3.0 GiB" {
		t.Errorf("humanBytes: %s", got)
	}
}

// A run made with --include-prefix is swept, listed and explained with it;
// a sweep without it refuses those candidates rather than delete them.
func TestSweepRunIncludePrefix(t *testing.T) {
	r := newOpsRepo(t)
	r.write("data/legacy/old.bin", "legacy", r.now.Add(-10*24*time.Hour))
	if code, out, logs := r.run(opsRun1, r.now, "gc", "--include-prefix", "data/legacy/"); code != exitOK || !strings.Contains(out, "a sweep would delete 3 objects") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, logs)
	}
	code, out, _ := r.run(opsRun1, r.now, "explain", "--run", opsRun1, "--include-prefix", "data/legacy/", "data/legacy/old.bin")
	if code != exitOK || !strings.Contains(out, "marked — under the include prefix data/legacy/") {
		t.Errorf("explain: exit %d\n%s", code, out)
	}
	code, out, logs := r.run(opsRun1, r.now, "sweep", "--run", opsRun1)
	if code != exitFailed || !strings.Contains(out, "1 refused") || !r.exists("data/legacy/old.bin") {
		t.Fatalf("sweep without the include prefix: exit %d\n%s%s", code, out, logs)
	}
	code, out, logs = r.run(opsRun1, r.now, "sweep", "--run", opsRun1, "--include-prefix", "data/legacy/")
	if code != exitOK || r.exists("data/legacy/old.bin") || !r.exists("data/tenant.csv") {
		t.Fatalf("sweep with it: exit %d\n%s%s", code, out, logs)
	}
}

// The estimate says how its bytes were had: exact, extrapolated from a
// sample (and says so), or unknown when the candidates could not be
// statted (never "0 B").
func TestPrintCostLabelsTheBytes(t *testing.T) {
	for _, tc := range []struct {
		e    costEstimate
		want string
	}{
		{costEstimate{Candidates: 2, Bytes: 2048, Statted: 2, BytesFrom: bytesExact}, "2.0 KiB (exact)"},
		{costEstimate{Candidates: 20000, Bytes: 20 << 20, Statted: 10000, BytesFrom: bytesExtrapolated}, "about 20.0 MiB (extrapolated from the sizes of the first 10000)"},
		{costEstimate{Candidates: 5, BytesFrom: bytesUnknown}, "of unknown size"},
	} {
		var b bytes.Buffer
		printCost(&b, &tc.e)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%+v: %q, want %q", tc.e, b.String(), tc.want)
		}
	}
}

// --limit 0 streams every candidate, as a table or as the page's JSON, and
// a listing that fails still prints whole JSON, with the error.
func TestCandidatesStreamed(t *testing.T) {
	r := newOpsRepo(t)
	if code, out, logs := r.run(opsRun1, r.now, "gc"); code != exitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, logs)
	}
	code, out, logs := r.run(opsRun1, r.now, "candidates", "--run", opsRun1, "--limit", "0", "--json")
	var page candidatesPage
	if err := json.Unmarshal([]byte(out), &page); code != exitOK || err != nil || page.RunID != opsRun1 || len(page.Candidates) != 2 || page.Error != "" || page.NextOffset != 0 {
		t.Fatalf("candidates --limit 0 --json: exit %d, %v\n%s%s", code, err, out, logs)
	}
	var want int64
	for _, c := range page.Candidates {
		if v, ok := r.garbage[c.Address]; !ok || c.Size != int64(len(v)) {
			t.Errorf("candidate %+v", c)
		}
		want += c.Size
	}
	if page.Bytes != want {
		t.Errorf("bytes %d, want %d", page.Bytes, want)
	}
	if code, out, _ := r.run(opsRun1, r.now, "candidates", "--run", opsRun1, "--limit", "0", "--offset", "1"); code != exitOK ||
		!strings.Contains(out, "1 candidates from 1") || !strings.Contains(out, "ADDRESS") {
		t.Errorf("candidates --limit 0 --offset 1: exit %d\n%s", code, out)
	}
	const unknown = "g0ootg1ksdudqv37g7d0"
	code, out, _ = r.run(opsRun1, r.now, "candidates", "--run", unknown, "--limit", "0", "--json")
	page = candidatesPage{}
	if err := json.Unmarshal([]byte(out), &page); code != exitRefused || err != nil || !strings.Contains(page.Error, "no such run") || len(page.Candidates) != 0 {
		t.Errorf("candidates of an unknown run, streamed: exit %d, %v\n%s", code, err, out)
	}
}

// The operator's safety net end to end, on lakeFS's local blockstore and on
// an S3-protocol bucket: a dry run, its exact candidates swept into the
// quarantine (sweep --run --quarantine; on S3 the originals deleted in
// DeleteObjects batches), one restored to its place, and the quarantine
// purged once old enough; the kept objects never move. While another run
// holds the repository's lease, gc and sweep exit 5 and touch nothing.
func TestOperatorQuarantineWorkflow(t *testing.T) {
	for _, kind := range opsKinds {
		t.Run(kind, func(t *testing.T) { testOperatorQuarantineWorkflow(t, newOpsRepoOn(t, kind)) })
	}
}

func testOperatorQuarantineWorkflow(t *testing.T, r *opsRepo) {
	if code, out, logs := r.run(opsRun1, r.now, "gc", "--json"); code != exitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, logs)
	}
	// Another run holds the lease: the dry run and the sweep are refused.
	held, err := lease.Acquire(t.Context(), r.bucket(), layout.LeaseFolder(lakegc.DefaultStoragePrefix), lease.Options{Holder: "the-other-gc", Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	if code, out, logs := r.run(opsRun2, r.now, "gc", "--json"); code != exitBusy || !strings.Contains(logs, "the-other-gc") {
		t.Errorf("gc under another's lease: exit %d, want %d\n%s%s", code, exitBusy, out, logs)
	}
	if code, out, logs := r.run(opsRun1, r.now, "sweep", "--run", opsRun1, "--quarantine", "--json"); code != exitBusy {
		t.Errorf("sweep under another's lease: exit %d, want %d\n%s%s", code, exitBusy, out, logs)
	}
	for k := range r.garbage {
		if !r.exists(k) || r.exists(layout.QuarantineKey(lakegc.DefaultStoragePrefix, opsRun1, k)) {
			t.Fatalf("%s moved under another's lease", k)
		}
	}
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	if r.store != nil {
		r.store.Reset()
	}
	code, out, logs := r.run(opsRun1, r.now, "sweep", "--run", opsRun1, "--quarantine", "--json")
	var swept lakegc.Report
	if code != exitOK || json.Unmarshal([]byte(out), &swept) != nil || swept.Sweep == nil || swept.Sweep.Deleted != int64(len(r.garbage)) || swept.Sweep.Quarantine == "" {
		t.Fatalf("sweep into the quarantine: exit %d\n%s%s", code, out, logs)
	}
	var garbage []string
	for k := range r.garbage {
		garbage = append(garbage, k)
		if r.exists(k) {
			t.Errorf("%s still at its place", k)
		}
		if !r.exists(layout.QuarantineKey(lakegc.DefaultStoragePrefix, opsRun1, k)) {
			t.Errorf("%s not in the quarantine", k)
		}
	}
	slices.Sort(garbage)
	for _, k := range r.kept {
		if !r.exists(k) {
			t.Errorf("kept %s moved", k)
		}
	}
	r.checkOutside()
	if r.store != nil {
		r.checkBatchDeletes(garbage)
	}
	// One object back; the other stays in the quarantine.
	code, out, logs = r.run(opsRun1, r.now, "restore", "--run", opsRun1, "--address", garbage[0], "--json")
	if code != exitOK || !strings.Contains(out, `"restored": 1`) {
		t.Fatalf("restore: exit %d\n%s%s", code, out, logs)
	}
	if !r.exists(garbage[0]) || r.exists(garbage[1]) {
		t.Errorf("after restoring %s: at their places %v, %v", garbage[0], r.exists(garbage[0]), r.exists(garbage[1]))
	}
	// A purge of quarantines older than a week leaves a fresh one; a week
	// later it deletes it.
	if code, out, logs := r.run(opsRun1, r.now, "purge", "--older-than", "168h", "--json"); code != exitOK || !r.exists(layout.QuarantineKey(lakegc.DefaultStoragePrefix, opsRun1, garbage[1])) {
		t.Fatalf("early purge: exit %d\n%s%s", code, out, logs)
	}
	weekLater := r.now.Add(8 * 24 * time.Hour)
	if code, out, logs := r.run(opsRun1, weekLater, "purge", "--older-than", "168h", "--json"); code != exitOK || r.exists(layout.QuarantineKey(lakegc.DefaultStoragePrefix, opsRun1, garbage[1])) {
		t.Fatalf("purge: exit %d\n%s%s", code, out, logs)
	}
	if !r.exists(garbage[0]) {
		t.Errorf("the purge removed the restored %s", garbage[0])
	}
	for _, k := range r.kept {
		if !r.exists(k) {
			t.Errorf("kept %s gone after the purge", k)
		}
	}
	r.checkOutside()
}

// checkOutside checks that the bucket's objects outside an S3 namespace
// are still there.
func (r *opsRepo) checkOutside() {
	r.t.Helper()
	for _, k := range opsOutside {
		if r.store != nil && !r.store.Exists(r.t, opsBucket, k) {
			r.t.Errorf("%s, outside the namespace, deleted", k)
		}
	}
}

// checkBatchDeletes checks, from the S3 server's requests since its last
// Reset, that the sweep deleted the originals of the swept keys in
// DeleteObjects batches (POST /bucket?delete), not one DELETE each.
func (r *opsRepo) checkBatchDeletes(swept []string) {
	r.t.Helper()
	var batches int
	for _, q := range r.store.Requests() {
		switch {
		case q.Method == http.MethodPost && q.Path == "/"+opsBucket:
			batches++
		case q.Method == http.MethodDelete:
			for _, k := range swept {
				if q.Path == "/"+opsBucket+"/"+opsPrefix+k {
					r.t.Errorf("%s deleted by a single DELETE, not a batch", k)
				}
			}
		}
	}
	if batches == 0 {
		r.t.Errorf("no DeleteObjects batch among the sweep's requests: %+v", r.store.Requests())
	}
}
