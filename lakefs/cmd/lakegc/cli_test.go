package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/sweep"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRunExitCodes(t *testing.T) {
	creds := map[string]string{api.EnvEndpointURL: "http://127.0.0.1:1", api.EnvAccessKeyID: "AKIA", api.EnvSecretAccessKey: "s"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string // in stdout+stderr
	}{
		{"no command", nil, nil, exitUsage, "Usage:"},
		{"help", []string{"--help"}, nil, exitOK, "Example:"},
		{"gc help", []string{"gc", "--help"}, nil, exitOK, "--sweep"},
		{"version", []string{"version"}, nil, exitOK, "lakegc"},
		{"unknown command", []string{"collect"}, nil, exitUsage, `unknown command "collect"`},
		{"unknown flag", []string{"gc", "--repo", "r", "--swep"}, creds, exitUsage, "flag provided but not defined"},
		{"no repo", []string{"gc"}, creds, exitUsage, "--repo is required"},
		{"no endpoint", []string{"gc", "--repo", "r"}, map[string]string{api.EnvAccessKeyID: "a", api.EnvSecretAccessKey: "s"}, exitUsage, "--endpoint"},
		{"no secret", []string{"gc", "--repo", "r", "--endpoint", "http://x", "--access-key-id", "a"}, nil, exitUsage, "access key pair"},
		{"bad memory", []string{"gc", "--repo", "r", "--memory", "lots"}, creds, exitUsage, "--memory"},
		{"negative min age", []string{"gc", "--repo", "r", "--min-age", "-1h"}, creds, exitUsage, "negative"},
		{"min age below the link TTL", []string{"gc", "--repo", "r", "--min-age", "6h"}, creds, exitUsage, "24h"},
		{"gc help names the link TTL", []string{"gc", "-h"}, nil, exitOK, "lakeFS's link TTL, 24h"},
		{"memory below the mark's minimum", []string{"gc", "--repo", "r", "--memory", "1KiB"}, creds, exitUsage, "--memory"},
		{"no concurrency", []string{"gc", "--repo", "r", "--lakefs-concurrency", "0"}, creds, exitUsage, "--lakefs-concurrency"},
		{"extra argument", []string{"gc", "--repo", "r", "now"}, creds, exitUsage, `unexpected argument "now"`},
		{"bad clock", []string{"gc", "--repo", "r"}, merge(creds, map[string]string{envNow: "tomorrow"}), exitUsage, envNow},
		{"bad endpoint", []string{"gc", "--repo", "r", "--endpoint", "ftp://x"}, creds, exitUsage, "not an http(s) URL"},
		{"quarantine without sweep", []string{"gc", "--repo", "r", "--quarantine"}, creds, exitUsage, "--quarantine without --sweep"},
		{"lakeFS unreachable", []string{"gc", "--repo", "r"}, creds, exitLakeFS, "transport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tc.args, envOf(tc.env), &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, tc.code, tc.want, stdout.String(), stderr.String())
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Credentials come from lakectl's variables; flags win over them.
func TestParseGCFlagsAndEnv(t *testing.T) {
	env := envOf(map[string]string{api.EnvEndpointURL: "http://env", api.EnvAccessKeyID: "env-key", api.EnvSecretAccessKey: "env-secret",
		envBlockstorePath: "/var/lakefs", envNow: "2026-06-01T12:00:00Z"})
	var stderr bytes.Buffer
	o, code := parseGC([]string{"--repo", "r", "--endpoint", "http://flag", "--sweep", "--optimized", "--memory", "64MiB", "--min-age", "48h",
		"--include-prefix", "data/imports/", "--include-prefix", "legacy-"}, env, &stderr, &stderr)
	if code != -1 {
		t.Fatalf("code %d: %s", code, stderr.String())
	}
	if o.endpoint != "http://flag" || o.accessKeyID != "env-key" || o.secretAccessKey != "env-secret" || !o.sweep || !o.optimized ||
		o.memory != 64<<20 || o.minAge.Hours() != 48 || o.blockstorePath != "/var/lakefs" || !o.now.Equal(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)) || o.json || o.progress ||
		!slices.Equal(o.include, []string{"data/imports/", "legacy-"}) {
		t.Errorf("options %+v", o)
	}
}

// An access key pair lakeFS refuses is exit code 3, and nothing else is called.
func TestGCUnauthorizedIsALakeFSError(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"error authenticating request"}`))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--repo", "r", "--sweep", "--endpoint", srv.URL, "--access-key-id", "a", "--secret-access-key", "b"},
		envOf(nil), &stdout, &stderr)
	if code != exitLakeFS || !strings.Contains(stderr.String(), "401") || stdout.Len() > 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if !slices.Equal(paths, []string{"/api/v1/repositories/r"}) {
		t.Errorf("calls %q", paths)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"256MiB": 256 << 20, "4096": 4096, "1GiB": 1 << 30, "10KB": 10000, "5 MiB": 5 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "MiB", "1TiB", "9999999999GiB", "1.5GiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

func Example() {
	run(context.Background(), []string{"version"}, os.Getenv, os.Stdout, os.Stderr)
	// Output: lakegc (devel)
}

// "gc --help" goes to stdout, as "lakegc --help" does, and never shows the
// secret key or any other value read from the environment.
func TestGCHelp(t *testing.T) {
	env := envOf(map[string]string{api.EnvEndpointURL: "http://env-endpoint", api.EnvAccessKeyID: "env-key-id",
		api.EnvSecretAccessKey: "env-secret-value", envBlockstorePath: "/env/blockstore"})
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--help"}, env, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "--sweep") || !strings.Contains(stdout.String(), "Exit codes") || stderr.Len() > 0 {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, v := range []string{"env-secret-value", "env-key-id", "env-endpoint", "/env/blockstore"} {
		if strings.Contains(stdout.String()+stderr.String(), v) {
			t.Errorf("help shows %q", v)
		}
	}
	// A wrong flag still prints the usage on stderr, stdout untouched.
	stdout.Reset()
	stderr.Reset()
	if code := run(t.Context(), []string{"gc", "--swep"}, env, &stdout, &stderr); code != exitUsage || stdout.Len() > 0 ||
		!strings.Contains(stderr.String(), "--sweep") || strings.Contains(stderr.String(), "env-secret-value") {
		t.Errorf("wrong flag: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// With --json a failed run still prints one JSON object on stdout, with the
// error and the report of what was done, so that a script reads both.
func TestGCJSONOnFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"insufficient permissions"}`))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--repo", "r", "--json", "--endpoint", srv.URL, "--access-key-id", "a", "--secret-access-key", "b"},
		envOf(nil), &stdout, &stderr)
	var out struct {
		Error string `json:"error"`
		Host  struct {
			LakeFSRequests int64 `json:"lakefs_requests"`
		} `json:"host"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || code != exitLakeFS || !strings.Contains(out.Error, "403") {
		t.Errorf("exit %d, %v; stdout %q, stderr %q", code, err, stdout.String(), stderr.String())
	}
	// One request, the repository's, refused and not repeated.
	if out.Host.LakeFSRequests != 1 {
		t.Errorf("%d lakeFS requests counted, want 1", out.Host.LakeFSRequests)
	}
}

// The command run as a program ignores LAKEGC_NOW: only tests move its
// clock, through run's getenv.
func TestProcessEnvHidesNow(t *testing.T) {
	t.Setenv(envNow, "2099-01-01T00:00:00Z")
	t.Setenv(api.EnvEndpointURL, "http://lakefs")
	if v := processEnv(envNow); v != "" {
		t.Errorf("processEnv(%s) = %q", envNow, v)
	}
	if v := processEnv(api.EnvEndpointURL); v != "http://lakefs" {
		t.Errorf("processEnv(%s) = %q", api.EnvEndpointURL, v)
	}
}

// A run interrupted (SIGINT, SIGTERM: its context ends) during a call to
// lakeFS is exit 1, as the doc says, not 3: lakeFS neither refused nor was
// unreachable.
func TestGCInterruptedIsNotALakeFSError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"gc", "--repo", "r", "--endpoint", srv.URL, "--access-key-id", "a", "--secret-access-key", "b"},
		envOf(nil), &stdout, &stderr)
	if code != exitFailed || !strings.Contains(stderr.String(), context.Canceled.Error()) {
		t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, stderr.String())
	}
}

// A repository on lakeFS's local blockstore needs --blockstore-path: without
// it the run is a usage error, exit 2, and nothing is asked of lakeFS after
// the repository.
func TestGCLocalNamespaceWithoutBlockstorePathIsUsage(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"r","storage_namespace":"local://r","default_branch":"main","creation_date":1}`))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"gc", "--repo", "r", "--endpoint", srv.URL, "--access-key-id", "a", "--secret-access-key", "b"},
		envOf(nil), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--blockstore-path") || !slices.Equal(paths, []string{"/api/v1/repositories/r"}) {
		t.Errorf("exit %d, want %d; calls %q; stderr %q", code, exitUsage, paths, stderr.String())
	}
}

// The summary says what the mark did not recognize, and other repositories'
// folders.
func TestSummarizeUnrecognized(t *testing.T) {
	var out bytes.Buffer
	summarize(&out, "r", &lakegc.Report{Commits: &lakegc.CommitsReport{}, Mark: &lakegc.MarkReport{Report: "_lakefs/retention/gc/unified/x/", Summary: &sweep.Summary{
		NumUnrecognizedObjects: 4, UnrecognizedBytes: 40, UnrecognizedSample: []string{"README.txt", "a", "b", "c"},
		NumWalledObjects: 2, Walls: []string{"data/inner/"},
	}}}, &host.Stats{})
	for _, want := range []string{
		"never collected: 4 objects, 40 bytes (e.g. README.txt, a, b); all under _lakefs/retention/gc/unified/x/unrecognized/",
		"other repositories' folders, never collected: 2 objects under data/inner/",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary %q lacks %q", out.String(), want)
		}
	}
}

// The version is the module's, with the commit the build stamped.
func TestFormatVersion(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abc"}}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{debug.BuildInfo{}, "(devel)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "(devel) (0123abc)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "(devel) (0123abc-dirty)"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})}, "v0.1.0 (0123abc)"},
	} {
		if got := formatVersion(&tc.bi); got != tc.want {
			t.Errorf("formatVersion(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}
