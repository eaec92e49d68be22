package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/lakefs/api"
)

// Bad rules are refused with a clear message before lakeFS is called (the
// endpoint here answers nothing).
func TestRulesCommandRefusesBadRules(t *testing.T) {
	env := map[string]string{api.EnvEndpointURL: "http://127.0.0.1:1", api.EnvAccessKeyID: "k", api.EnvSecretAccessKey: "s"}
	dir := t.TempDir()
	n := 0
	file := func(content string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("rules-%d.json", n))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "Usage"},
		{[]string{"list"}, "Usage"},
		{[]string{"show"}, "--repo is required"},
		{[]string{"show", "--repo", "r", "--keep-last", "main=1"}, "show takes no rules"},
		{[]string{"set", "--repo", "r", "--file", file(`{"version":1,"keep_tag":true}`)}, `unknown field "keep_tag"`},
		{[]string{"set", "--repo", "r", "--file", file(`{"version":1,"branches":[{"branch":"x","retention_days":-1}]}`)}, "negative retention_days"},
		{[]string{"set", "--repo", "r", "--keep-last-pattern", "feature/(=3"}, "does not compile"},
		{[]string{"set", "--repo", "r", "--keep-last", "main=-1"}, "negative keep_last"},
		{[]string{"set", "--repo", "r", "--keep-last", "main"}, "not NAME=NUMBER"},
		{[]string{"set", "--repo", "r", "--stale-branch-days", "-2"}, "negative"},
		{[]string{"set", "--repo", "r", "--stale-branch-days", "4294967297"}, "too large"}, // not 1 day, as int32 would read it
		{[]string{"set", "--repo", "r", "--file", file(`{"version":1}`), "--keep-last", "main=1"}, "not both"},
		{[]string{"set", "--repo", "r", "--file", filepath.Join(dir, "missing.json")}, "no such file"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"rules"}, tc.args...), func(k string) string { return env[k] }, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("rules %q: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
	var stdout bytes.Buffer
	if code := run(t.Context(), []string{"rules", "--help"}, func(string) string { return "" }, &stdout, &stdout); code != exitOK || !strings.Contains(stdout.String(), "--stale-branch-days") {
		t.Errorf("rules --help: exit %d\n%s", code, stdout.String())
	}
}
