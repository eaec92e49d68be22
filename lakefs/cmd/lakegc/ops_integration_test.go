package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// opsIn runs "lakegc <command> --repo repo args…" against s as of now.
func opsIn(t *testing.T, s *lakefstest.Server, repo string, now time.Time, command string, args ...string) (int, string, string) {
	t.Helper()
	env := map[string]string{
		api.EnvEndpointURL:     s.Endpoint,
		api.EnvAccessKeyID:     s.AccessKeyID,
		api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath:      s.BlockstorePath,
		envNow:                 now.Format(time.RFC3339),
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{command, "--repo", repo}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestIntegrationOperatorWorkflow: against a real lakeFS (LAKEFS_BIN, or
// LAKEFS_ENDPOINT with a key pair), a dry run's candidates are exactly the
// history's garbage; explain names why objects were marked or kept (a kept
// commit, staging); a run a later dry run superseded is refused; sweep
// --run of the latest deletes exactly the candidates, and every kept object
// reads back.
func TestIntegrationOperatorWorkflow(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-ops")
	now := h.Built.Add(3 * 24 * time.Hour)
	first := gcAt(t, s, h.Repo, now)
	h.VerifyBeforeGC(t, s)

	code, out, logs := opsIn(t, s, h.Repo, now, "candidates", "--run", first.RunID, "--limit", "0", "--json")
	var page candidatesPage
	if code != exitOK || json.Unmarshal([]byte(out), &page) != nil {
		t.Fatalf("candidates: exit %d\n%s%s", code, out, logs)
	}
	var got, want []string
	for _, c := range page.Candidates {
		got = append(got, c.Address)
		if c.Gone || c.Size <= 0 || c.Reason == "" {
			t.Errorf("candidate %+v", c)
		}
	}
	for _, o := range h.Garbage() {
		want = append(want, o.Key)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("candidates %q, want the garbage %q", got, want)
	}
	if page.NextOffset != 0 || page.Bytes <= 0 {
		t.Errorf("one page of %d bytes, next %d", page.Bytes, page.NextOffset)
	}

	// explain: every object of the history, by address, and two by path.
	kept := map[string]bool{}
	for _, name := range h.KeptCommits {
		kept[h.Commits[name]] = true
	}
	var queries []string
	for _, o := range h.Objects {
		queries = append(queries, o.Key)
	}
	queries = append(queries, "lakefs://"+h.Repo+"/main/staged/s", "lakefs://"+h.Repo+"/main/keep/a")
	code, out, logs = opsIn(t, s, h.Repo, now, "explain", append([]string{"--run", first.RunID, "--json"}, queries...)...)
	var exp struct {
		Explanations []lakegc.Explanation `json:"explanations"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Explanations) != len(queries) {
		t.Fatalf("explain: exit %d\n%s%s", code, out, logs)
	}
	for i, o := range h.Objects {
		e := exp.Explanations[i]
		switch {
		case !o.Kept && e.Verdict != lakegc.VerdictMarked:
			t.Errorf("garbage %s (%s): %+v", o.Name, o.Why, e)
		case o.Kept && e.Verdict != lakegc.VerdictKept:
			t.Errorf("kept %s (%s): %+v", o.Name, o.Why, e)
		case e.Commit != "" && !kept[e.Commit]:
			t.Errorf("%s: kept by commit %s, which lakeFS expires", o.Name, e.Commit)
		}
		t.Logf("%s (%s): %s — %s", o.Name, o.Why, e.Verdict, e.Reason)
	}
	if e := exp.Explanations[len(h.Objects)]; e.Verdict != lakegc.VerdictKept || !strings.Contains(e.Reason, "staged") || e.Commit != "" {
		t.Errorf("staged path: %+v", e)
	}
	if e := exp.Explanations[len(h.Objects)+1]; e.Verdict != lakegc.VerdictKept || !kept[e.Commit] {
		t.Errorf("committed path: %+v", e)
	}

	// A later dry run supersedes the first.
	second := gcAt(t, s, h.Repo, now.Add(time.Minute))
	code, out, logs = opsIn(t, s, h.Repo, now.Add(time.Minute), "sweep", "--run", first.RunID)
	if code != exitRefused || !strings.Contains(logs, second.RunID) || !strings.Contains(logs, "live again") {
		t.Fatalf("sweep of a superseded run: exit %d, want %d\n%s%s", code, exitRefused, out, logs)
	}
	h.VerifyBeforeGC(t, s)

	code, out, logs = opsIn(t, s, h.Repo, now.Add(time.Minute), "sweep", "--run", second.RunID, "--json", "--delete-concurrency", "4")
	var swept gcOutput
	if code != exitOK || json.Unmarshal([]byte(out), &swept) != nil || swept.Sweep == nil {
		t.Fatalf("sweep --run: exit %d\n%s%s", code, out, logs)
	}
	if swept.Sweep.Deleted != int64(len(want)) || swept.Sweep.Failed+swept.Sweep.Refused != 0 {
		t.Errorf("sweep %+v, want %d deleted", swept.Sweep, len(want))
	}
	h.VerifyAfterGC(t, s)
}
