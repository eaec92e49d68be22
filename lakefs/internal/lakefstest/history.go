package lakefstest

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Retention rules of the history: commits are kept for DefaultRetentionDays,
// those of branch "feature" for FeatureRetentionDays.
const (
	DefaultRetentionDays = 7
	FeatureRetentionDays = 3
)

const day = 24 * time.Hour

// History is the repository BuildHistory made and what a correct GC of it
// keeps, as lakeFS decides with the history's rules at Built (commit dates are
// set in the past, so the decision holds for weeks after).
type History struct {
	Repo string
	// Namespace is the repository's storage namespace, e.g. "local://history".
	Namespace string
	// AddressNamespace prefixes the full addresses lakeFS returns: Namespace,
	// except on a started lakeFS's local blockstore, where lakeFS spells them
	// with the blockstore's absolute path: "local:///tmp/…/blockstore/history".
	AddressNamespace string
	// Built is when the history was made; commit dates count back from it.
	Built time.Time
	// Commits maps the history's commit names (m1, m2, …) to lakeFS commit IDs.
	Commits map[string]string
	// KeptCommits and ExpiredCommits name the commits lakeFS's retention keeps
	// and expires.
	KeptCommits, ExpiredCommits []string
	// Objects are every object the history wrote to the storage namespace.
	Objects []Object
}

// Object is one stored object (one physical address) of the history.
type Object struct {
	// Name labels the object in messages, e.g. "X1 gone/x@m1".
	Name string
	// Ref and Path read it back through lakeFS: a commit ID or a branch. Ref is
	// empty for an object no ref shows (overwritten while staged, never linked).
	Ref, Path string
	Content   []byte
	// PhysicalAddress is the address lakeFS's API gave: a full URI.
	PhysicalAddress string
	// Key is PhysicalAddress relative to AddressNamespace.
	Key string
	// Kept says a correct GC keeps the object; Why says why, either way.
	Kept bool
	Why  string
}

// Kept returns the objects a correct GC keeps.
func (h *History) Kept() []Object { return h.filter(true) }

// Garbage returns the objects a correct GC deletes.
func (h *History) Garbage() []Object { return h.filter(false) }

func (h *History) filter(kept bool) []Object {
	var out []Object
	for _, o := range h.Objects {
		if o.Kept == kept {
			out = append(out, o)
		}
	}
	return out
}

// BuildHistory creates repository repo (with a random suffix on an external
// lakeFS: History.Repo has the name) on s and fills it (all commit dates
// relative to now):
//
//	rules: default 7 days, branch feature 3 days
//	main:     m1 (-30d) keep/a=A1 gone/x=X1
//	          m2 (-20d) gone/x=X2 gone/y=Y1
//	          m3 (-2d)  rm gone/x, gone/y=Y2 keep/b=B1          HEAD
//	          staged: staged/s=S1, staged/over=S3a then S3b, rm keep/b,
//	                  linked/staged=L2 (get address, upload, link),
//	                  an upload to an address never linked (U1)
//	feature:  from m2; f1 (-15d) feat/f=F1; f2 (-5d) feat/f=F2 linked/committed=L1   HEAD
//	          staged: staged/feat=S2
//	tmp:      from m3; t1 (-3d) tmp/t=T1; branch deleted
//	old:      from m1; o1 (-40d) old/o=O1; branch deleted
//	hidden-work (hidden): from m3; h1 (-1d) hidden/c=HC1  HEAD; staged: hidden/h=H1
//
// lakeFS keeps m3 and m2 (m3 is younger than 7 days), f2 (HEAD), t1 (a
// deleted branch's dangling commit younger than 7 days) and h1; it expires
// the repository's first commit ("init"), m1, f1 (feature's 3 days: f2 is 5
// days old; with the default 7 days f1 would be kept) and o1 (dangling, 40
// days). The garbage: X1 (only in m1 and o1), F1, O1, S3a and U1.
func BuildHistory(t testing.TB, s *Server, repo string) *History {
	t.Helper()
	if s.External { // a lakeFS others use: never reuse a name or a namespace
		repo += "-" + randomHex(t)[:8]
	}
	ns := s.NamespacePrefix
	if !strings.HasSuffix(ns, "://") {
		ns = strings.TrimRight(ns, "/") + "/"
	}
	return BuildHistoryIn(t, s, repo, ns+repo)
}

// BuildHistoryIn is BuildHistory with the storage namespace ns given as is
// (e.g. a folder under another repository's, "local://outer/data/inner") and
// repo used as is.
func BuildHistoryIn(t testing.TB, s *Server, repo, ns string) *History {
	t.Helper()
	now := time.Now().UTC()
	h := &History{Repo: repo, Namespace: ns, AddressNamespace: ns, Built: now, Commits: map[string]string{}}
	if nsPath, ok := strings.CutPrefix(ns, "local://"); ok {
		if s.BlockstorePath == "" {
			t.Fatalf("lakefstest: namespace %s is on lakeFS's local blockstore: set %s to its blockstore.local.path", ns, EnvBlockstorePath)
		}
		h.AddressNamespace = "local://" + filepath.ToSlash(filepath.Join(s.BlockstorePath, nsPath))
	}
	b := &builder{t: t, s: s, h: h, now: now,
		staged: map[string]map[string]int{}, committed: map[string]map[string]int{}, heads: map[string]string{}}

	s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{
		"name": repo, "storage_namespace": ns, "default_branch": "main",
	}, http.StatusCreated, nil)
	var head struct {
		CommitID string `json:"commit_id"`
	}
	s.Do(t, http.MethodGet, "/repositories/"+esc(repo)+"/branches/main", nil, nil, http.StatusOK, &head)
	h.Commits["init"] = head.CommitID
	b.committed["init"] = map[string]int{}
	b.heads["main"] = "init"
	s.Do(t, http.MethodPut, "/repositories/"+esc(repo)+"/settings/gc_rules", nil, map[string]any{
		"default_retention_days": DefaultRetentionDays,
		"branches":               []map[string]any{{"branch_id": "feature", "retention_days": FeatureRetentionDays}},
	}, http.StatusNoContent, nil)

	b.upload("main", "keep/a", "A1")
	b.upload("main", "gone/x", "X1")
	b.commit("main", "m1", 30)
	b.branch("old", "m1", false)
	b.upload("main", "gone/x", "X2")
	b.upload("main", "gone/y", "Y1")
	b.commit("main", "m2", 20)
	b.branch("feature", "m2", false)
	b.remove("main", "gone/x")
	b.upload("main", "gone/y", "Y2")
	b.upload("main", "keep/b", "B1")
	b.commit("main", "m3", 2)

	b.upload("feature", "feat/f", "F1")
	b.commit("feature", "f1", 15)
	b.upload("feature", "feat/f", "F2")
	b.link("feature", "linked/committed", "L1")
	b.commit("feature", "f2", 5)
	b.upload("feature", "staged/feat", "S2")

	b.branch("tmp", "m3", false)
	b.upload("tmp", "tmp/t", "T1")
	b.commit("tmp", "t1", 3)
	b.deleteBranch("tmp")

	b.upload("old", "old/o", "O1")
	b.commit("old", "o1", 40)
	b.deleteBranch("old")

	b.branch("hidden-work", "m3", true)
	b.upload("hidden-work", "hidden/c", "HC1")
	b.commit("hidden-work", "h1", 1)
	b.upload("hidden-work", "hidden/h", "H1")

	b.upload("main", "staged/s", "S1")
	b.upload("main", "staged/over", "S3a")
	b.upload("main", "staged/over", "S3b")
	b.remove("main", "keep/b")
	b.link("main", "linked/staged", "L2")
	b.abandonedUpload("main", "linked/abandoned", "U1")

	b.settle()
	return h
}

// builder records what BuildHistory writes. Each object is first placed where
// it was written; settle then resolves the refs and which are kept.
type builder struct {
	t   testing.TB
	s   *Server
	h   *History
	now time.Time
	// staged maps branch → path → index in h.Objects of the staged version.
	staged map[string]map[string]int
	// committed maps a commit name to its objects (path → index), as of the commit.
	committed map[string]map[string]int
	// heads maps branch → its last commit name.
	heads map[string]string
}

func (b *builder) repoPath() string { return "/repositories/" + esc(b.h.Repo) }

func (b *builder) stage(branch, path string, obj Object) {
	if b.staged[branch] == nil {
		b.staged[branch] = map[string]int{}
	}
	b.h.Objects = append(b.h.Objects, obj)
	b.staged[branch][path] = len(b.h.Objects) - 1
}

func content(label string) []byte { return []byte("lakegc history object " + label + "\n") }

func (b *builder) upload(branch, path, label string) {
	b.t.Helper()
	data := content(label)
	got := b.s.Raw(b.t, http.MethodPost, b.repoPath()+"/branches/"+esc(branch)+"/objects",
		url.Values{"path": {path}}, "application/octet-stream", bytes.NewReader(data))
	if got.Status != http.StatusCreated {
		b.t.Fatalf("lakefstest: upload %s to %s: status %d: %s", path, branch, got.Status, got.Body)
	}
	var stats struct {
		PhysicalAddress string `json:"physical_address"`
	}
	decode(b.t, got.Body, &stats)
	b.stage(branch, path, b.object(label, path, data, stats.PhysicalAddress))
}

func (b *builder) object(label, path string, data []byte, address string) Object {
	b.t.Helper()
	key, ok := strings.CutPrefix(address, b.h.AddressNamespace+"/")
	if !ok {
		b.t.Fatalf("lakefstest: %s: physical address %q is not under %q", label, address, b.h.AddressNamespace)
	}
	return Object{Name: label + " " + path, Path: path, Content: data, PhysicalAddress: address, Key: key}
}

func (b *builder) remove(branch, path string) {
	b.t.Helper()
	b.s.Do(b.t, http.MethodDelete, b.repoPath()+"/branches/"+esc(branch)+"/objects",
		url.Values{"path": {path}}, nil, http.StatusNoContent, nil)
	if b.staged[branch] == nil {
		b.staged[branch] = map[string]int{}
	}
	b.staged[branch][path] = -1 // a tombstone
}

// link stages an object the way clients that write to the store themselves
// do: ask lakeFS for an address, write the data there, link it.
func (b *builder) link(branch, path, label string) {
	b.t.Helper()
	data, loc := b.writeToAddress(branch, path, label)
	sum := md5.Sum(data)
	var stats struct {
		PhysicalAddress string `json:"physical_address"`
	}
	b.s.Do(b.t, http.MethodPut, b.repoPath()+"/branches/"+esc(branch)+"/staging/backing",
		url.Values{"path": {path}}, map[string]any{
			"staging":    map[string]any{"physical_address": loc},
			"checksum":   hex.EncodeToString(sum[:]),
			"size_bytes": len(data),
		}, http.StatusOK, &stats)
	if stats.PhysicalAddress != loc {
		b.t.Fatalf("lakefstest: link %s: lakeFS answered address %q, linked %q", path, stats.PhysicalAddress, loc)
	}
	b.stage(branch, path, b.object(label, path, data, loc))
}

// abandonedUpload writes data to an address lakeFS handed out and never links
// it, as a client that died between the two would.
func (b *builder) abandonedUpload(branch, path, label string) {
	b.t.Helper()
	data, loc := b.writeToAddress(branch, path, label)
	obj := b.object(label, path, data, loc)
	obj.Why = "uploaded to an address lakeFS handed out, never linked"
	b.h.Objects = append(b.h.Objects, obj)
}

func (b *builder) writeToAddress(branch, path, label string) ([]byte, string) {
	b.t.Helper()
	data := content(label)
	var loc struct {
		PhysicalAddress string  `json:"physical_address"`
		PresignedURL    *string `json:"presigned_url"`
	}
	q := url.Values{"path": {path}}
	if b.s.BlockstorePath == "" {
		q.Set("presign", "true")
	}
	b.s.Do(b.t, http.MethodGet, b.repoPath()+"/branches/"+esc(branch)+"/staging/backing", q, nil, http.StatusOK, &loc)
	switch {
	case b.s.BlockstorePath != "":
		p, err := b.s.LocalPath(loc.PhysicalAddress)
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.t.Fatal(err)
		}
	case loc.PresignedURL != nil && *loc.PresignedURL != "":
		putPresigned(b.t, *loc.PresignedURL, data)
	default:
		b.t.Fatalf("lakefstest: cannot write to %s: no local blockstore and no pre-signed URL", loc.PhysicalAddress)
	}
	return data, loc.PhysicalAddress
}

func putPresigned(t testing.TB, u string, data []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, u, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("lakefstest: upload to pre-signed URL: %v", err)
	}
	_ = res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("lakefstest: upload to pre-signed URL: %s", res.Status)
	}
}

// commit commits branch with a date daysAgo days before the history's time.
func (b *builder) commit(branch, name string, daysAgo int) {
	b.t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	b.s.Do(b.t, http.MethodPost, b.repoPath()+"/branches/"+esc(branch)+"/commits", nil, map[string]any{
		"message": name, "date": b.now.Add(-time.Duration(daysAgo) * day).Unix(),
	}, http.StatusCreated, &c)
	if c.ID == "" {
		b.t.Fatalf("lakefstest: commit %s: no ID", name)
	}
	b.h.Commits[name] = c.ID
	tree := maps.Clone(b.committed[b.heads[branch]])
	if tree == nil {
		b.t.Fatalf("lakefstest: commit %s: branch %s has no known head", name, branch)
	}
	for p, i := range b.staged[branch] {
		if i < 0 {
			delete(tree, p)
		} else {
			tree[p] = i
		}
	}
	delete(b.staged, branch)
	b.committed[name] = tree
	b.heads[branch] = name
}

func (b *builder) branch(name, from string, hidden bool) {
	b.t.Helper()
	b.s.Do(b.t, http.MethodPost, b.repoPath()+"/branches", nil, map[string]any{
		"name": name, "source": b.h.Commits[from], "hidden": hidden,
	}, http.StatusCreated, nil)
	b.heads[name] = from
}

func (b *builder) deleteBranch(name string) {
	b.t.Helper()
	b.s.Do(b.t, http.MethodDelete, b.repoPath()+"/branches/"+esc(name), nil, nil, http.StatusNoContent, nil)
	delete(b.heads, name)
	delete(b.staged, name)
}

// keptCommits are the commits lakeFS keeps under the history's rules; see
// BuildHistory for why.
var keptCommits = []string{"m2", "m3", "f2", "t1", "h1"}

// settle marks each object kept or garbage and gives it a ref to read it at.
func (b *builder) settle() {
	h := b.h
	for name := range h.Commits {
		if slices.Contains(keptCommits, name) {
			h.KeptCommits = append(h.KeptCommits, name)
		} else {
			h.ExpiredCommits = append(h.ExpiredCommits, name)
		}
	}
	slices.Sort(h.KeptCommits)
	slices.Sort(h.ExpiredCommits)
	// Expired commits first, so a kept commit's ref wins for a shared object.
	expiredIn := map[int][]string{}
	for _, names := range [][]string{h.ExpiredCommits, h.KeptCommits} {
		for _, name := range names {
			kept := slices.Contains(keptCommits, name)
			for _, i := range b.committed[name] {
				o := &h.Objects[i]
				o.Ref = h.Commits[name]
				switch {
				case kept:
					o.Kept, o.Why = true, "in kept commit "+name
				case !o.Kept:
					expiredIn[i] = append(expiredIn[i], name)
					o.Why = "only in expired commits " + strings.Join(expiredIn[i], ", ")
				}
			}
		}
	}
	for branch, paths := range b.staged {
		for _, i := range paths {
			if i < 0 {
				continue
			}
			o := &h.Objects[i]
			o.Ref, o.Kept, o.Why = branch, true, "staged on "+branch
		}
	}
	for i := range h.Objects {
		o := &h.Objects[i]
		if o.Why == "" {
			o.Why = "overwritten while staged"
		}
	}
}

// LocalPath returns the file of a physical address on a started lakeFS's
// local blockstore.
func (s *Server) LocalPath(physicalAddress string) (string, error) {
	if s.BlockstorePath == "" {
		return "", fmt.Errorf("lakefstest: no local blockstore (external lakeFS)")
	}
	rest, ok := strings.CutPrefix(physicalAddress, "local://")
	if !ok {
		return "", fmt.Errorf("lakefstest: %q is not a local blockstore address", physicalAddress)
	}
	if filepath.IsAbs(rest) {
		return filepath.Clean(rest), nil
	}
	return filepath.Join(s.BlockstorePath, filepath.FromSlash(rest)), nil
}
