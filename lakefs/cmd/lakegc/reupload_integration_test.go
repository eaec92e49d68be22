package main

import (
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIntegrationHiddenReuploads reproduces, on a real lakeFS, the staged
// re-uploads lakeFS's diff and uncommitted export hide — the same bytes
// uploaded again to a committed path, staged at a new address — and checks
// that "lakegc gc --sweep", then an optimized sweep, keep every one of them
// (on several branches, one of which has nothing else staged) while still
// deleting the repository's garbage.
func TestIntegrationHiddenReuploads(t *testing.T) {
	// Reads the local blockstore to see deletions: gone is false for an
	// object it cannot see, which would pass the keep checks unseen.
	s := startLocal(t)
	now := time.Now().UTC()
	r := repoAPI{t: t, s: s, repo: "reupload", built: now}
	s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{
		"name": r.repo, "storage_namespace": "local://" + r.repo, "default_branch": "main",
	}, http.StatusCreated, nil)
	s.Do(t, http.MethodPut, r.path("/settings/gc_rules"), nil, map[string]any{"default_retention_days": 7, "branches": []any{}}, http.StatusNoContent, nil)

	const same = "same bytes\n"
	x1 := r.upload("main", "x", "X1")
	r.commit("main", 50) // expired: x=X1 is garbage
	committedA := r.upload("main", "a.txt", same)
	committedX := r.upload("main", "x", "X2")
	// Linked objects: one with the MD5 as its checksum, as lakeFS's
	// clients send, one with a checksum of the client's own.
	const linked, odd, oddSum = "linked bytes\n", "odd checksum bytes!!", "client-sum-1"
	linkedSum := md5.Sum([]byte(linked))
	r.stage("main", "linked.bin", []byte(linked), hex.EncodeToString(linkedSum[:]))
	r.stage("main", "odd.bin", []byte(odd), oddSum)
	head := r.commit("main", 40) // main's HEAD, kept
	r.branch("b1", "main")
	r.branch("only", "main")

	// The re-uploads: the same bytes again, staged at new addresses.
	hidden := map[string]string{ // branch/path → address
		"main/a.txt": r.upload("main", "a.txt", same),
		"b1/a.txt":   r.upload("b1", "a.txt", same),
		"only/x":     r.upload("only", "x", "X2"),
	}
	// Linked again, the same bytes with the same checksums: hidden too.
	hiddenLinked := map[string]string{
		"b1/linked.bin": r.stage("b1", "linked.bin", []byte(linked), hex.EncodeToString(linkedSum[:])),
		"b1/odd.bin":    r.stage("b1", "odd.bin", []byte(odd), oddSum),
	}
	visible := r.upload("b1", "new.txt", "new on b1")
	// Staged, then overwritten while staged: garbage, but byte-identical
	// to a committed object, so kept (the leak the rule accepts).
	dup := r.upload("main", "dup", same)
	r.upload("main", "dup", "dup final")
	// Staged, then overwritten while staged, bytes of no committed object:
	// garbage, deleted.
	over := r.upload("b1", "over", "first")
	r.upload("b1", "over", "second")

	for key, addr := range hidden {
		branch, path, _ := strings.Cut(key, "/")
		if addr == committedA || addr == committedX {
			t.Fatalf("%s: lakeFS staged the re-upload at the committed address %s", key, addr)
		}
		if got := r.stat(branch, path); got != addr {
			t.Fatalf("%s: lakeFS reads %s, the re-upload is at %s", key, got, addr)
		}
	}
	// lakeFS's diff hides them: what the command's staged input is made of.
	if got := r.changes("main"); strings.Join(got, ",") != "dup" {
		t.Errorf("main's diff: %q, want only dup (a.txt hidden)", got)
	}
	if got := r.changes("b1"); strings.Join(got, ",") != "new.txt,over" {
		t.Errorf("b1's diff: %q, want new.txt and over (a.txt hidden)", got)
	}
	if got := r.changes("only"); len(got) != 0 {
		t.Errorf("only's diff: %q, want nothing (x hidden)", got)
	}

	gcRun := func(args ...string) *gcOutput {
		t.Helper()
		return gcAt(t, s, r.repo, now.Add(3*24*time.Hour), args...)
	}
	verify := func(when string) {
		t.Helper()
		r.read("main", "a.txt", same)
		r.read("b1", "a.txt", same)
		r.read("only", "x", "X2")
		r.read("b1", "new.txt", "new on b1")
		r.read(head, "a.txt", same)
		r.read(head, "x", "X2")
		r.read("b1", "linked.bin", linked)
		r.read("b1", "odd.bin", odd)
		for _, m := range []map[string]string{hidden, hiddenLinked} {
			for key, addr := range m {
				if r.gone(addr) {
					t.Errorf("%s: the staged re-upload %s was deleted", when, key)
				}
			}
		}
		if r.gone(visible) || r.gone(dup) {
			t.Errorf("%s: a staged object or the committed bytes' duplicate was deleted", when)
		}
		if !r.gone(x1) || !r.gone(over) {
			t.Errorf("%s: the garbage (X1, b1/over's first upload) is still there", when)
		}
	}

	out := gcRun("--sweep")
	if out.Sweep == nil || out.Sweep.Deleted != 2 {
		t.Errorf("sweep: %+v, want 2 deleted (X1, over)", out.Sweep)
	}
	// Five hidden re-uploads and the duplicate; odd.bin by its size alone.
	if rs := out.Host.Reuploads; rs.Kept != 6 || rs.KeptBySize != 1 || rs.Hashed == 0 || rs.CommittedEntries != 4 {
		t.Errorf("re-upload check %+v: want 6 kept, 1 by size alone, of the HEAD commit's 4 entries", rs)
	}
	if out.Host.LakeFSRequests == 0 {
		t.Errorf("no lakeFS requests counted")
	}
	verify("sweep")
	t.Logf("sweep: %+v; host %+v", out.Sweep, out.Host)

	// An optimized run starts from that one, and keeps them too.
	first := out.RunID
	out = gcRun("--sweep", "--optimized")
	if s := out.Mark.Summary; s.RunKind != "optimized" || s.PreviousRunID != first {
		t.Errorf("optimized run: %s after %s (%s), want optimized after %s", s.RunKind, s.PreviousRunID, s.CleanReason, first)
	}
	if out.Sweep == nil || out.Sweep.Deleted != 0 || out.Host.Reuploads.Kept != 6 {
		t.Errorf("optimized sweep: %+v, re-uploads %+v; want nothing deleted, 6 kept", out.Sweep, out.Host.Reuploads)
	}
	verify("optimized sweep")
}
