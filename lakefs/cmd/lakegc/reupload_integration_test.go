package main

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// reuploadRepo is a repository on a real lakeFS with staged re-uploads of
// committed bytes, which lakeFS's diff and uncommitted export hide.
type reuploadRepo struct {
	s    *lakefstest.Server
	repo string
	now  time.Time
}

func (r *reuploadRepo) path() string { return "/repositories/" + url.PathEscape(r.repo) }

// upload stages data at path on branch and returns its physical address.
func (r *reuploadRepo) upload(t *testing.T, branch, path, data string) string {
	t.Helper()
	got := r.s.Raw(t, http.MethodPost, r.path()+"/branches/"+url.PathEscape(branch)+"/objects",
		url.Values{"path": {path}}, "application/octet-stream", strings.NewReader(data))
	if got.Status != http.StatusCreated {
		t.Fatalf("upload %s/%s: %d %s", branch, path, got.Status, got.Body)
	}
	var st struct {
		PhysicalAddress string `json:"physical_address"`
		Checksum        string `json:"checksum"`
	}
	if err := json.Unmarshal(got.Body, &st); err != nil {
		t.Fatal(err)
	}
	// lakeFS's local adapter records the MD5 of the bytes, in hex: the
	// checksum the check compares with.
	if sum := md5.Sum([]byte(data)); st.Checksum != hex.EncodeToString(sum[:]) {
		t.Fatalf("upload %s/%s: checksum %q, not the MD5 of the bytes", branch, path, st.Checksum)
	}
	return st.PhysicalAddress
}

// link stages data at path on branch as clients that write to the store
// themselves do — an address from lakeFS, the bytes written there, a link
// with the client's checksum — and returns the address.
func (r *reuploadRepo) link(t *testing.T, branch, path, data, checksum string) string {
	t.Helper()
	var loc struct {
		PhysicalAddress string `json:"physical_address"`
	}
	backing := r.path() + "/branches/" + url.PathEscape(branch) + "/staging/backing"
	r.s.Do(t, http.MethodGet, backing, url.Values{"path": {path}}, nil, http.StatusOK, &loc)
	file, err := r.s.LocalPath(loc.PhysicalAddress)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	r.s.Do(t, http.MethodPut, backing, url.Values{"path": {path}}, map[string]any{
		"staging": map[string]any{"physical_address": loc.PhysicalAddress}, "checksum": checksum, "size_bytes": len(data),
	}, http.StatusOK, nil)
	return loc.PhysicalAddress
}

func (r *reuploadRepo) commit(t *testing.T, branch string, daysAgo int) string {
	t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	r.s.Do(t, http.MethodPost, r.path()+"/branches/"+url.PathEscape(branch)+"/commits", nil, map[string]any{
		"message": "c", "date": r.now.Add(-time.Duration(daysAgo) * 24 * time.Hour).Unix(),
	}, http.StatusCreated, &c)
	return c.ID
}

func (r *reuploadRepo) branch(t *testing.T, name, from string) {
	t.Helper()
	r.s.Do(t, http.MethodPost, r.path()+"/branches", nil, map[string]any{"name": name, "source": from}, http.StatusCreated, nil)
}

// changes lists branch's uncommitted changes as lakeFS's diff shows them.
func (r *reuploadRepo) changes(t *testing.T, branch string) []string {
	t.Helper()
	var page struct {
		Results []struct {
			Path string `json:"path"`
		} `json:"results"`
	}
	r.s.Do(t, http.MethodGet, r.path()+"/branches/"+url.PathEscape(branch)+"/diff", nil, nil, http.StatusOK, &page)
	var paths []string
	for _, c := range page.Results {
		paths = append(paths, c.Path)
	}
	return paths
}

// stat returns the physical address lakeFS reads path at ref from.
func (r *reuploadRepo) stat(t *testing.T, ref, path string) string {
	t.Helper()
	var st struct {
		PhysicalAddress string `json:"physical_address"`
	}
	r.s.Do(t, http.MethodGet, r.path()+"/refs/"+url.PathEscape(ref)+"/objects/stat", url.Values{"path": {path}}, nil, http.StatusOK, &st)
	return st.PhysicalAddress
}

// read checks that path at ref reads back as want.
func (r *reuploadRepo) read(t *testing.T, ref, path, want string) {
	t.Helper()
	got := r.s.ReadObject(t, r.repo, ref, path)
	if got.Status != http.StatusOK || !bytes.Equal(got.Body, []byte(want)) {
		t.Errorf("GET %s/%s: %d %q, want 200 %q", ref, path, got.Status, got.Body, want)
	}
}

// gone checks that the object at a physical address is no longer stored.
func (r *reuploadRepo) gone(t *testing.T, address string) bool {
	t.Helper()
	o := lakefstest.Object{Name: address, PhysicalAddress: address}
	stored, known := r.s.Stored(t, o)
	return known && !stored
}

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
	r := &reuploadRepo{s: s, repo: "reupload", now: time.Now().UTC()}
	s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{
		"name": r.repo, "storage_namespace": "local://" + r.repo, "default_branch": "main",
	}, http.StatusCreated, nil)
	s.Do(t, http.MethodPut, r.path()+"/settings/gc_rules", nil, map[string]any{"default_retention_days": 7, "branches": []any{}}, http.StatusNoContent, nil)

	const same = "same bytes\n"
	x1 := r.upload(t, "main", "x", "X1")
	r.commit(t, "main", 50) // expired: x=X1 is garbage
	committedA := r.upload(t, "main", "a.txt", same)
	committedX := r.upload(t, "main", "x", "X2")
	// Linked objects: one with the MD5 as its checksum, as lakeFS's
	// clients send, one with a checksum of the client's own.
	const linked, odd, oddSum = "linked bytes\n", "odd checksum bytes!!", "client-sum-1"
	linkedSum := md5.Sum([]byte(linked))
	r.link(t, "main", "linked.bin", linked, hex.EncodeToString(linkedSum[:]))
	r.link(t, "main", "odd.bin", odd, oddSum)
	head := r.commit(t, "main", 40) // main's HEAD, kept
	r.branch(t, "b1", "main")
	r.branch(t, "only", "main")

	// The re-uploads: the same bytes again, staged at new addresses.
	hidden := map[string]string{ // branch/path → address
		"main/a.txt": r.upload(t, "main", "a.txt", same),
		"b1/a.txt":   r.upload(t, "b1", "a.txt", same),
		"only/x":     r.upload(t, "only", "x", "X2"),
	}
	// Linked again, the same bytes with the same checksums: hidden too.
	hiddenLinked := map[string]string{
		"b1/linked.bin": r.link(t, "b1", "linked.bin", linked, hex.EncodeToString(linkedSum[:])),
		"b1/odd.bin":    r.link(t, "b1", "odd.bin", odd, oddSum),
	}
	visible := r.upload(t, "b1", "new.txt", "new on b1")
	// Staged, then overwritten while staged: garbage, but byte-identical
	// to a committed object, so kept (the leak the rule accepts).
	dup := r.upload(t, "main", "dup", same)
	r.upload(t, "main", "dup", "dup final")
	// Staged, then overwritten while staged, bytes of no committed object:
	// garbage, deleted.
	over := r.upload(t, "b1", "over", "first")
	r.upload(t, "b1", "over", "second")

	for key, addr := range hidden {
		branch, path, _ := strings.Cut(key, "/")
		if addr == committedA || addr == committedX {
			t.Fatalf("%s: lakeFS staged the re-upload at the committed address %s", key, addr)
		}
		if got := r.stat(t, branch, path); got != addr {
			t.Fatalf("%s: lakeFS reads %s, the re-upload is at %s", key, got, addr)
		}
	}
	// lakeFS's diff hides them: what the command's staged input is made of.
	if got := r.changes(t, "main"); strings.Join(got, ",") != "dup" {
		t.Errorf("main's diff: %q, want only dup (a.txt hidden)", got)
	}
	if got := r.changes(t, "b1"); strings.Join(got, ",") != "new.txt,over" {
		t.Errorf("b1's diff: %q, want new.txt and over (a.txt hidden)", got)
	}
	if got := r.changes(t, "only"); len(got) != 0 {
		t.Errorf("only's diff: %q, want nothing (x hidden)", got)
	}

	env := map[string]string{
		api.EnvEndpointURL: s.Endpoint, api.EnvAccessKeyID: s.AccessKeyID, api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath: s.BlockstorePath, envNow: r.now.Add(3 * 24 * time.Hour).Format(time.RFC3339),
	}
	type output struct {
		lakegc.Report
		Host host.Stats `json:"host"`
	}
	gcRun := func(args ...string) output {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"gc", "--repo", r.repo, "--json"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
		if code != exitOK {
			t.Fatalf("gc %v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
		var out output
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("report: %v\n%s", err, stdout.String())
		}
		return out
	}
	verify := func(when string) {
		t.Helper()
		r.read(t, "main", "a.txt", same)
		r.read(t, "b1", "a.txt", same)
		r.read(t, "only", "x", "X2")
		r.read(t, "b1", "new.txt", "new on b1")
		r.read(t, head, "a.txt", same)
		r.read(t, head, "x", "X2")
		r.read(t, "b1", "linked.bin", linked)
		r.read(t, "b1", "odd.bin", odd)
		for _, m := range []map[string]string{hidden, hiddenLinked} {
			for key, addr := range m {
				if r.gone(t, addr) {
					t.Errorf("%s: the staged re-upload %s was deleted", when, key)
				}
			}
		}
		if r.gone(t, visible) || r.gone(t, dup) {
			t.Errorf("%s: a staged object or the committed bytes' duplicate was deleted", when)
		}
		if !r.gone(t, x1) || !r.gone(t, over) {
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
