package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// runCmd runs "lakegc <cmd> --repo repo --json args…" against s as of now
// and decodes its JSON output into out; it returns the exit code.
func runCmd(t *testing.T, s *lakefstest.Server, cmd, repo string, now time.Time, out any, args ...string) int {
	t.Helper()
	env := map[string]string{
		api.EnvEndpointURL:     s.Endpoint,
		api.EnvAccessKeyID:     s.AccessKeyID,
		api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath:      s.BlockstorePath,
		envNow:                 now.Format(time.RFC3339),
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{cmd, "--repo", repo, "--json"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("lakegc %s %v: exit %d, output: %v\n%s\n%s", cmd, args, code, err, stdout.String(), stderr.String())
	}
	return code
}

// TestIntegrationQuarantineRestore: on a real lakeFS, a sweep with
// --quarantine moves exactly the garbage (lakeFS no longer reads it), a
// restore of one address and then of the rest brings every object back
// (lakeFS reads each again), and a purge past its days deletes a
// quarantine and nothing else.
func TestIntegrationQuarantineRestore(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-quarantine")
	now := h.Built.Add(3 * 24 * time.Hour)
	garbage := h.Garbage()
	if len(garbage) < 2 {
		t.Fatalf("history with %d garbage objects", len(garbage))
	}

	rep := gcAt(t, s, h.Repo, now, "--sweep", "--quarantine")
	if rep.Sweep.Quarantine == "" || rep.Sweep.Deleted != int64(len(garbage)) {
		t.Fatalf("sweep %+v, want %d moved into a quarantine", rep.Sweep, len(garbage))
	}
	h.VerifyAfterGC(t, s)

	var one restoreOutput
	if code := runCmd(t, s, "restore", h.Repo, now, &one, "--run", rep.RunID, "--address", garbage[0].PhysicalAddress); code != exitOK || one.Restored != 1 {
		t.Fatalf("restore of %s: exit %d, %+v", garbage[0].PhysicalAddress, code, one)
	}
	var rest restoreOutput
	if code := runCmd(t, s, "restore", h.Repo, now, &rest, "--run", rep.RunID); code != exitOK || rest.Restored != int64(len(garbage)-1) {
		t.Fatalf("restore: exit %d, %+v", code, rest)
	}
	h.VerifyBeforeGC(t, s)
	var none restoreOutput
	if code := runCmd(t, s, "restore", h.Repo, now, &none, "--run", rep.RunID, "--address", "data/nothing"); code != exitFailed || len(none.Missing) != 1 {
		t.Errorf("restore of an address not in the quarantine: exit %d, %+v", code, none)
	}

	// Another run holds the repository's lease: gc and restore exit 5,
	// naming it.
	n := nsFlags{endpoint: s.Endpoint, accessKeyID: s.AccessKeyID, secretAccessKey: s.SecretAccessKey, repo: h.Repo, blockstorePath: s.BlockstorePath}
	bucket, _, _, err := n.open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	held, err := lease.Acquire(t.Context(), bucket, layout.LeaseFolder(lakegc.DefaultStoragePrefix), lease.Options{Holder: "the-other-gc", Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gcIn(t, s, s.BlockstorePath, h.Repo, now, "--sweep"); code != exitBusy || !strings.Contains(stderr.String(), "the-other-gc") {
		t.Errorf("gc under another's lease: exit %d\n%s", code, stderr)
	}
	var busy restoreOutput
	if code := runCmd(t, s, "restore", h.Repo, now, &busy, "--run", rep.RunID); code != exitBusy || !strings.Contains(busy.Error, "the-other-gc") {
		t.Errorf("restore under another's lease: exit %d, %+v", code, busy)
	}
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	_ = bucket.Close()

	// Into the quarantine again; a purge 6 days later keeps it, 8 days
	// later deletes it.
	rep = gcAt(t, s, h.Repo, now, "--sweep", "--quarantine")
	var kept, purged purgeOutput
	if code := runCmd(t, s, "purge", h.Repo, now.Add(6*24*time.Hour), &kept, "--older-than", "7d"); code != exitOK || len(kept.Purged) != 0 {
		t.Fatalf("purge before its days: exit %d, %+v", code, kept)
	}
	if code := runCmd(t, s, "purge", h.Repo, now.Add(8*24*time.Hour), &purged, "--older-than", "7d"); code != exitOK || len(purged.Purged) == 0 || purged.Bytes <= 0 {
		t.Fatalf("purge: exit %d, %+v", code, purged)
	}
	var objects int64
	for _, p := range purged.Purged {
		objects += p.Objects
	}
	if objects != int64(len(garbage)) {
		t.Errorf("purged %d objects, want the %d garbage objects (%+v)", objects, len(garbage), purged)
	}
	h.VerifyAfterGC(t, s)
	var gone restoreOutput
	if code := runCmd(t, s, "restore", h.Repo, now, &gone, "--run", rep.RunID); code == exitOK {
		t.Errorf("restore of a purged quarantine: exit %d, %+v", code, gone)
	}
	t.Logf("quarantined %d, restored 1 + %d, purged %d runs, %d bytes", len(garbage), rest.Restored, len(purged.Purged), purged.Bytes)
}
