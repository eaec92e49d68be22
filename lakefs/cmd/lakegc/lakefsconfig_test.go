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

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
	"github.com/lakegc/lakegc/lakefs/internal/s3loop"
)

// Secrets of the S3 blockstore in TestIntegrationLakeFSConfigS3: the file's,
// which lakeFS runs with, and the environment's, which lakegc's run adds.
const (
	fileKeyID     = "AKIALAKEFSFILE"
	fileSecret    = "lakefs-file-secret-do-not-print"
	envKeyID      = "AKIALAKEGCENV"
	envSecret     = "lakegc-env-secret-do-not-print"
	envToken      = "lakegc-env-token-do-not-print"
	wrongAWSKeyID = "AKIAFROMAWSCHAIN"
)

// TestIntegrationLakeFSConfigS3 runs a real lakeFS (LAKEFS_BIN; skipped
// otherwise) whose blockstore is an S3-protocol server on loopback, reached
// at a custom endpoint, path-style, with static keys; then "lakegc gc
// --lakefs-config" with lakeFS's own configuration file, plus
// LAKEFS_BLOCKSTORE_S3_CREDENTIALS_* variables that override the file's keys.
// lakegc must read lakeFS's reports and ranges and delete exactly the
// garbage through that server, signing with the variables' keys (not the
// file's, not the AWS SDK's environment), and print no secret.
func TestIntegrationLakeFSConfigS3(t *testing.T) {
	bin := os.Getenv(lakefstest.EnvBin)
	if bin == "" {
		t.Skipf("no lakeFS: set %s=/path/to/lakefs", lakefstest.EnvBin)
	}
	// The AWS SDK's own chain names another key: the configuration wins.
	t.Setenv("AWS_ACCESS_KEY_ID", wrongAWSKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-chain-secret")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	store := s3loop.Start(t, "lakes")
	s := lakefstest.StartBinaryS3(t, bin, lakefstest.S3Blockstore{Endpoint: store.URL, AccessKeyID: fileKeyID,
		SecretAccessKey: fileSecret, NamespacePrefix: "s3://lakes/tests"})
	h := lakefstest.BuildHistory(t, s, "lakegc-s3")
	h.VerifyBeforeGC(t, s)
	prefix := strings.TrimPrefix(h.AddressNamespace, "s3://lakes/") + "/"
	for _, o := range h.Objects {
		if !store.Exists(t, "lakes", prefix+o.Key) {
			t.Fatalf("%s not on the S3 server at %s", o.Name, prefix+o.Key)
		}
	}

	env := map[string]string{
		api.EnvEndpointURL:     s.Endpoint,
		api.EnvAccessKeyID:     s.AccessKeyID,
		api.EnvSecretAccessKey: s.SecretAccessKey,
		envNow:                 h.Built.Add(3 * 24 * time.Hour).Format(time.RFC3339),
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_ACCESS_KEY_ID":     envKeyID,
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SECRET_ACCESS_KEY": envSecret,
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SESSION_TOKEN":     envToken,
	}
	var output bytes.Buffer
	gcRun := func(args ...string) *lakegc.Report {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"gc", "--repo", h.Repo, "--json", "--lakefs-config", s.ConfigPath}, args...),
			func(k string) string { return env[k] }, &stdout, &stderr)
		output.Write(stdout.Bytes())
		output.Write(stderr.Bytes())
		if code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		var rep lakegc.Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("report: %v\n%s", err, stdout.String())
		}
		return &rep
	}

	store.Reset()
	rep := gcRun()
	h.VerifyBeforeGC(t, s)
	if got, want := rep.Mark.Summary.NumDeletedObjects, int64(len(h.Garbage())); got != want || rep.Commits.Active != len(h.KeptCommits) {
		t.Errorf("dry run: %d candidates, %d kept commits; the history has %d garbage objects, %d kept commits",
			got, rep.Commits.Active, want, len(h.KeptCommits))
	}
	rep = gcRun("--sweep")
	if rep.Sweep == nil || rep.Sweep.Deleted != int64(len(h.Garbage())) || rep.Sweep.Failed+rep.Sweep.Refused != 0 {
		t.Fatalf("sweep report %+v; the history has %d garbage objects", rep.Sweep, len(h.Garbage()))
	}
	requests := store.Requests()
	h.VerifyAfterGC(t, s)
	for _, o := range h.Objects {
		if got := store.Exists(t, "lakes", prefix+o.Key); got != o.Kept {
			t.Errorf("%s (%s): on the server %t, kept %t (%s)", o.Name, o.Key, got, o.Kept, o.Why)
		}
	}

	// lakegc's requests are signed with the environment's keys and token,
	// path-style; lakeFS's with its file's. Nothing else reached the server.
	var reads, lists, batches int
	for _, r := range requests {
		if !strings.HasPrefix(r.Path, "/lakes") {
			t.Errorf("request %+v is not path-style", r)
		}
		switch r.KeyID {
		case envKeyID:
			if !r.Token {
				t.Errorf("request %+v without the session token", r)
			}
			switch {
			case r.Method == http.MethodGet && strings.Count(r.Path, "/") > 1:
				reads++
			case r.Method == http.MethodGet:
				lists++
			case r.Method == http.MethodPost:
				batches++
			}
		case fileKeyID:
		default:
			t.Errorf("request %+v signed with neither the file's nor the environment's key", r)
		}
	}
	if reads == 0 || lists == 0 || batches == 0 {
		t.Errorf("lakegc's requests: %d reads, %d listings, %d DeleteObjects; want some of each", reads, lists, batches)
	}
	for _, secret := range []string{fileSecret, envSecret, envToken} {
		if strings.Contains(output.String(), secret) {
			t.Errorf("the output shows %q:\n%s", secret, output.String())
		}
	}
	t.Logf("lakegc: %d reads, %d listings, %d DeleteObjects through the configured client; %d deleted", reads, lists, batches, rep.Sweep.Deleted)
}

// --lakefs-config errors are usage errors (exit 2) that name the problem,
// never a secret; a namespace not on the configured blockstore is refused
// before anything is read or deleted.
func TestGCLakeFSConfigUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	creds := map[string]string{api.EnvEndpointURL: "http://127.0.0.1:1", api.EnvAccessKeyID: "a", api.EnvSecretAccessKey: "b"}
	for name, tc := range map[string]struct {
		file, want string
		env        map[string]string
	}{
		"missing":        {filepath.Join(dir, "nope.yaml"), "nope.yaml", nil},
		"wrong type":     {write("bad.yaml", "blockstore:\n  type: s3\n  s3:\n    credentials:\n      secret_access_key: [top-secret-value]\n"), "secret_access_key", nil},
		"bad env":        {write("ok.yaml", "blockstore:\n  type: s3\n"), "force_path_style", map[string]string{"LAKEFS_BLOCKSTORE_S3_FORCE_PATH_STYLE": "top-secret-value"}},
		"multi-storage":  {write("multi.yaml", "blockstores:\n  stores:\n    - id: a\n"), "blockstores", nil},
		"no type at all": {write("empty.yaml", "listen_address: x\n"), "blockstore.type", nil},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"gc", "--repo", "r", "--lakefs-config", tc.file}, envOf(merge(creds, tc.env)), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), "--lakefs-config") || !strings.Contains(stderr.String(), tc.want) ||
				strings.Contains(stderr.String(), "top-secret-value") {
				t.Errorf("exit %d; stderr %q", code, stderr.String())
			}
		})
	}

	// An s3:// repository with a local blockstore configuration.
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"r","storage_namespace":"s3://bucket/r","default_branch":"main","creation_date":1}`))
	}))
	defer srv.Close()
	local := write("local.yaml", "blockstore:\n  type: local\n  local:\n    path: "+dir+"\n")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--repo", "r", "--endpoint", srv.URL, "--lakefs-config", local}, envOf(map[string]string{
		api.EnvAccessKeyID: "a", api.EnvSecretAccessKey: "b"}), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), `blockstore.type "local"`) || !slices.Equal(paths, []string{"/api/v1/repositories/r"}) {
		t.Errorf("s3 namespace on a local blockstore: exit %d, calls %q, stderr %q", code, paths, stderr.String())
	}
}

// A local blockstore's path comes from the configuration when
// --blockstore-path is not given; the flag wins over it.
func TestParseGCLakeFSConfigLocalPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("blockstore:\n  type: local\n  local:\n    path: /var/lakefs/data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := map[string]string{api.EnvEndpointURL: "http://x", api.EnvAccessKeyID: "a", api.EnvSecretAccessKey: "b"}
	var stderr bytes.Buffer
	o, code := parseGC([]string{"--repo", "r", "--lakefs-config", p}, envOf(creds), &stderr, &stderr)
	if code != -1 || o.blockstorePath != "/var/lakefs/data" || o.store == nil {
		t.Errorf("code %d, blockstore path %q: %s", code, o.blockstorePath, stderr.String())
	}
	o, code = parseGC([]string{"--repo", "r", "--lakefs-config", p, "--blockstore-path", "/elsewhere"}, envOf(creds), &stderr, &stderr)
	if code != -1 || o.blockstorePath != "/elsewhere" {
		t.Errorf("code %d, blockstore path %q: %s", code, o.blockstorePath, stderr.String())
	}
	o, code = parseGC([]string{"--repo", "r", "--lakefs-config", p}, envOf(merge(creds, map[string]string{"LAKEFS_BLOCKSTORE_LOCAL_PATH": "/from/env"})), &stderr, &stderr)
	if code != -1 || o.blockstorePath != "/from/env" {
		t.Errorf("code %d, blockstore path %q: %s", code, o.blockstorePath, stderr.String())
	}
}

// TestGCLakeFSConfigOpensS3 runs "lakegc gc --lakefs-config" with a lakeFS
// YAML file whose blockstore is an S3-protocol server on loopback (a custom
// endpoint at a host name, path style, static keys), the file's keys
// overridden by LAKEFS_BLOCKSTORE_* variables, against a lakeFS API that
// keeps no commit: lakeFS's report is read, the namespace listed and its
// old lakeFS-shaped objects deleted through the server, every request
// signed with the variables' key and token, the AWS SDK's own environment
// ignored, and no secret printed. Objects outside the namespace (a sibling
// namespace sharing its prefix included) and lakeFS's own files stay.
func TestGCLakeFSConfigOpensS3(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", wrongAWSKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-chain-secret")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	store := s3loop.Start(t, "lakes")
	const runID = "ft0gcrunksdue7ngg4o00"
	garbage := []string{"repo1/data/ft01b59ksdue7ngg4om0/dc7eqrpksdue7ngg4ong", "repo1/data/ft01b59ksdue7ngg4om0/dc7eqrpksdue7ngg4oo0"}
	kept := []string{"repo10/data/ft01b59ksdue7ngg4om0/dc7eqrpksdue7ngg4ong", "outside",
		"repo1/_lakefs/retention/gc/commits/run_id=" + runID + "/commits.csv",
		"repo1/_lakefs/dummy"} // lakeFS's marker of the repository's namespace
	for _, k := range garbage {
		store.Put(t, "lakes", k, "old data")
	}
	for _, k := range kept[:2] {
		store.Put(t, "lakes", k, "not the repository's garbage")
	}
	// lakeFS's first commit, empty (no metarange), kept; another expired.
	store.Put(t, "lakes", kept[2], "commit_id,expired,metarange_id\nc1,false,\nc0,true,mr0\n")
	store.Put(t, "lakes", kept[3], "this is dummy data - created by lakeFS to check accessibility")
	store.Reset()
	api := opsAPI(t, "s3://lakes/repo1", "s3://lakes/repo1", runID)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(`
listen_address: 0.0.0.0:8000
database: {type: postgres}
blockstore:
  type: s3
  s3:
    endpoint: "`+strings.Replace(store.URL, "127.0.0.1", "localhost", 1)+`"
    force_path_style: true
    discover_bucket_region: false
    region: eu-west-1
    credentials:
      access_key_id: `+fileKeyID+`
      secret_access_key: `+fileSecret+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"LAKECTL_SERVER_ENDPOINT_URL":                        api.URL,
		"LAKECTL_CREDENTIALS_ACCESS_KEY_ID":                  "a",
		"LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY":              "b",
		envNow:                                               time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339),
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_ACCESS_KEY_ID":     envKeyID,
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SECRET_ACCESS_KEY": envSecret,
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SESSION_TOKEN":     envToken,
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--repo", "r", "--json", "--sweep", "--lakefs-config", cfg}, envOf(env), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	var rep lakegc.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Sweep == nil || rep.Sweep.Deleted != int64(len(garbage)) || rep.Mark.Summary.NumDeletedObjects != int64(len(garbage)) {
		t.Errorf("mark %+v, sweep %+v; want %d deleted", rep.Mark.Summary, rep.Sweep, len(garbage))
	}
	requests := store.Requests()
	for _, k := range garbage {
		if store.Exists(t, "lakes", k) {
			t.Errorf("garbage %s not deleted", k)
		}
	}
	for _, k := range kept {
		if !store.Exists(t, "lakes", k) {
			t.Errorf("%s deleted", k)
		}
	}
	var reads, lists, batches int
	for _, r := range requests {
		if r.KeyID != envKeyID || !r.Token || !strings.HasPrefix(r.Path, "/lakes") {
			t.Errorf("request %+v: not path-style, or not signed with the environment's key and token", r)
		}
		switch {
		case r.Method == http.MethodGet && r.Path == "/lakes":
			lists++
		case r.Method == http.MethodGet:
			reads++
		case r.Method == http.MethodPost:
			batches++
		}
	}
	if reads == 0 || lists == 0 || batches == 0 {
		t.Errorf("%d reads, %d listings, %d DeleteObjects; want some of each: %+v", reads, lists, batches, requests)
	}
	for _, secret := range []string{fileSecret, envSecret, envToken} {
		if strings.Contains(stdout.String()+stderr.String(), secret) {
			t.Errorf("the output shows %q:\n%s%s", secret, stdout.String(), stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "[SECRET]") && !strings.Contains(stderr.String(), "static keys true") {
		t.Errorf("the run does not log its blockstore settings:\n%s", stderr.String())
	}
}
