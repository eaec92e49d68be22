package main

// Integration tests against a real lakeFS of what a storage namespace may
// hold besides the repository's own objects: another repository
// nested in its data folder, files imported from inside the namespace,
// foreign files never imported, and linked objects at escaped and unicode
// paths. Each builds lakefstest's history, adds its case, runs "lakegc gc
// --sweep" as of three days later, and checks through lakeFS and on disk
// that everything live or foreign survives and that exactly the
// repository's own garbage is gone. They need a lakeFS of their own on the
// local blockstore (LAKEFS_BIN), since they write files into it.

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
	"github.com/lakegc/lakegc/pathprovider"
)

const layoutDay = 24 * time.Hour

// startLocal starts a lakeFS of the test's own on the local blockstore, or
// skips.
func startLocal(t *testing.T) *lakefstest.Server {
	t.Helper()
	s := lakefstest.Start(t)
	if s.External || s.BlockstorePath == "" {
		t.Skip("needs a lakeFS of this test's own on the local blockstore (LAKEFS_BIN)")
	}
	return s
}

// gcOutput is what "lakegc gc --json" prints: Collect's report and the
// host's counts.
type gcOutput struct {
	lakegc.Report
	Host host.Stats `json:"host"`
	logs string     // stderr
}

// gcAt runs "lakegc gc --repo repo --json args…" against s as of now, and
// fails the test unless it succeeded (a sweep: without a failed or refused
// delete).
func gcAt(t *testing.T, s *lakefstest.Server, repo string, now time.Time, args ...string) *gcOutput {
	t.Helper()
	code, stdout, stderr := gcIn(t, s, s.BlockstorePath, repo, now, args...)
	if code != exitOK {
		t.Fatalf("lakegc gc --repo %s %v: exit %d\n%s\n%s", repo, args, code, stdout.String(), stderr.String())
	}
	rep := gcOutput{logs: stderr.String()}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Mark == nil || rep.Mark.Summary == nil || rep.Commits == nil {
		t.Fatalf("report without mark or commits: %s", stdout.String())
	}
	if slices.Contains(args, "--sweep") && (rep.Sweep == nil || rep.Sweep.Failed+rep.Sweep.Refused != 0) {
		t.Fatalf("sweep report %+v", rep.Sweep)
	}
	t.Logf("gc %s %v: listed %d, recognized %d, unrecognized %d (%d bytes), walled %d, walls %v, foreign %d, candidates %d, kept commits %d, sweep %+v\nunrecognized sample %v",
		repo, args, rep.Mark.Listed, rep.Mark.Recognized, rep.Mark.Unrecognized, rep.Mark.UnrecognizedBytes, rep.Mark.Walled,
		rep.Mark.Summary.Walls, rep.Mark.Foreign, rep.Mark.Summary.NumDeletedObjects, rep.Commits.Active, rep.Sweep, rep.Mark.Summary.UnrecognizedSample)
	return &rep
}

// gcIn runs "lakegc gc --repo repo --json args…" against s as of now, with
// blockstore as lakeFS's blockstore folder, and returns its exit code and
// output.
func gcIn(t *testing.T, s *lakefstest.Server, blockstore, repo string, now time.Time, args ...string) (code int, stdout, stderr *bytes.Buffer) {
	t.Helper()
	env := map[string]string{
		api.EnvEndpointURL:     s.Endpoint,
		api.EnvAccessKeyID:     s.AccessKeyID,
		api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath:      blockstore,
		envNow:                 now.Format(time.RFC3339),
	}
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	code = run(t.Context(), append([]string{"gc", "--repo", repo, "--json"}, args...), func(k string) string { return env[k] }, stdout, stderr)
	return code, stdout, stderr
}

// sweepAndVerify runs a dry run and a sweep of h's repository as of three
// days after it was built, and checks that the sweep deleted exactly the
// history's garbage, that every kept object reads back, and that lakeFS kept
// wantCommits commits.
func sweepAndVerify(t *testing.T, s *lakefstest.Server, h *lakefstest.History, wantCommits int) *gcOutput {
	t.Helper()
	now := h.Built.Add(3 * layoutDay)
	gcAt(t, s, h.Repo, now)
	h.VerifyBeforeGC(t, s)
	rep := gcAt(t, s, h.Repo, now, "--sweep")
	h.VerifyAfterGC(t, s)
	if got, want := rep.Sweep.Deleted, int64(len(h.Garbage())); got != want {
		t.Errorf("%s: deleted %d objects, the history has %d garbage objects", h.Repo, got, want)
	}
	if rep.Commits.Active != wantCommits {
		t.Errorf("%s: %d kept commits, want %d", h.Repo, rep.Commits.Active, wantCommits)
	}
	return rep
}

// localFolder is the folder of h's namespace on the local blockstore.
func localFolder(t *testing.T, h *lakefstest.History) string {
	t.Helper()
	folder, ok := strings.CutPrefix(h.AddressNamespace, "local://")
	if !ok {
		t.Fatalf("namespace %s is not local", h.AddressNamespace)
	}
	return filepath.FromSlash(folder)
}

// snapshot maps every file under dir (relative, slash-separated) to the
// hash of its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles reports every file of before that is gone or changed in after.
func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch got, ok := after[k]; {
		case !ok:
			t.Errorf("%s: %s deleted", what, k)
		case got != before[k]:
			t.Errorf("%s: %s changed", what, k)
		}
	}
}

// writeOld writes data to the file p (and its folders) and dates it age ago.
func writeOld(t *testing.T, p string, data []byte, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// repoAPI drives a repository of a real lakeFS through its API, for what
// lakefstest's history does not do: uploads and links at chosen paths,
// imports, commits dated as the test needs, and reads of what lakeFS
// shows. With a history (historyAPI), objects it links are appended to it,
// so that its VerifyBeforeGC and VerifyAfterGC check them too.
type repoAPI struct {
	t    *testing.T
	s    *lakefstest.Server
	repo string
	// built is the time commits are dated back from.
	built time.Time
	h     *lakefstest.History // nil: none
}

// historyAPI is the repoAPI of h's repository.
func historyAPI(t *testing.T, s *lakefstest.Server, h *lakefstest.History) repoAPI {
	return repoAPI{t: t, s: s, repo: h.Repo, built: h.Built, h: h}
}

func (r repoAPI) path(rest string) string { return "/repositories/" + url.PathEscape(r.repo) + rest }

func (r repoAPI) branch(name, from string) {
	r.t.Helper()
	r.s.Do(r.t, http.MethodPost, r.path("/branches"), nil, map[string]any{"name": name, "source": from}, http.StatusCreated, nil)
}

func (r repoAPI) deleteBranch(name string) {
	r.t.Helper()
	r.s.Do(r.t, http.MethodDelete, r.path("/branches/"+url.PathEscape(name)), nil, nil, http.StatusNoContent, nil)
}

func (r repoAPI) remove(branch, path string) {
	r.t.Helper()
	r.s.Do(r.t, http.MethodDelete, r.path("/branches/"+url.PathEscape(branch)+"/objects"), url.Values{"path": {path}}, nil, http.StatusNoContent, nil)
}

// commit commits branch dated daysAgo days before r.built and returns the
// commit's ID.
func (r repoAPI) commit(branch string, daysAgo int) string {
	r.t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	r.s.Do(r.t, http.MethodPost, r.path("/branches/"+url.PathEscape(branch)+"/commits"), nil, map[string]any{
		"message": "lakegc test", "date": r.built.Add(-time.Duration(daysAgo) * layoutDay).Unix(),
	}, http.StatusCreated, &c)
	if c.ID == "" {
		r.t.Fatal("commit without an ID")
	}
	return c.ID
}

// stage stages data at path on branch as clients that write to the store
// themselves do — an address from lakeFS (get-physical-address), the bytes
// written there, a link with the client's checksum — and returns the
// address.
func (r repoAPI) stage(branch, path string, data []byte, checksum string) string {
	r.t.Helper()
	var loc struct {
		PhysicalAddress string `json:"physical_address"`
	}
	backing := r.path("/branches/" + url.PathEscape(branch) + "/staging/backing")
	r.s.Do(r.t, http.MethodGet, backing, url.Values{"path": {path}}, nil, http.StatusOK, &loc)
	p, err := r.s.LocalPath(loc.PhysicalAddress)
	if err != nil {
		r.t.Fatal(err)
	}
	writeOld(r.t, p, data, 0)
	r.s.Do(r.t, http.MethodPut, backing, url.Values{"path": {path}}, map[string]any{
		"staging":    map[string]any{"physical_address": loc.PhysicalAddress},
		"checksum":   checksum,
		"size_bytes": len(data),
	}, http.StatusOK, nil)
	return loc.PhysicalAddress
}

// link stages an object of its own at path on branch (stage, with the MD5
// as its checksum) and appends it to the history. It returns the object,
// not yet settled (no ref, not kept), and its index in the history.
func (r repoAPI) link(branch, path, label string) int {
	r.t.Helper()
	data := []byte("lakegc layout object " + label + "\n")
	sum := md5.Sum(data)
	addr := r.stage(branch, path, data, hex.EncodeToString(sum[:]))
	key, ok := strings.CutPrefix(addr, r.h.AddressNamespace+"/")
	if !ok {
		r.t.Fatalf("link %s: address %q is not under %q", path, addr, r.h.AddressNamespace)
	}
	r.h.Objects = append(r.h.Objects, lakefstest.Object{Name: label + " " + path, Path: path, Content: data,
		PhysicalAddress: addr, Key: key})
	return len(r.h.Objects) - 1
}

// upload stages data at path on branch through lakeFS and returns its
// physical address.
func (r repoAPI) upload(branch, path, data string) string {
	r.t.Helper()
	got := r.s.Raw(r.t, http.MethodPost, r.path("/branches/"+url.PathEscape(branch)+"/objects"),
		url.Values{"path": {path}}, "application/octet-stream", strings.NewReader(data))
	if got.Status != http.StatusCreated {
		r.t.Fatalf("upload %s/%s: %d %s", branch, path, got.Status, got.Body)
	}
	var st struct {
		PhysicalAddress string `json:"physical_address"`
		Checksum        string `json:"checksum"`
	}
	if err := json.Unmarshal(got.Body, &st); err != nil {
		r.t.Fatal(err)
	}
	// lakeFS's local adapter records the MD5 of the bytes, in hex: the
	// checksum the re-upload check compares with.
	if sum := md5.Sum([]byte(data)); st.Checksum != hex.EncodeToString(sum[:]) {
		r.t.Fatalf("upload %s/%s: checksum %q, not the MD5 of the bytes", branch, path, st.Checksum)
	}
	return st.PhysicalAddress
}

// changes lists branch's uncommitted changes as lakeFS's diff shows them.
func (r repoAPI) changes(branch string) []string {
	r.t.Helper()
	var page struct {
		Results []struct {
			Path string `json:"path"`
		} `json:"results"`
	}
	r.s.Do(r.t, http.MethodGet, r.path("/branches/"+url.PathEscape(branch)+"/diff"), nil, nil, http.StatusOK, &page)
	var paths []string
	for _, c := range page.Results {
		paths = append(paths, c.Path)
	}
	return paths
}

// stat returns the physical address lakeFS reads path at ref from.
func (r repoAPI) stat(ref, path string) string {
	r.t.Helper()
	var st struct {
		PhysicalAddress string `json:"physical_address"`
	}
	r.s.Do(r.t, http.MethodGet, r.path("/refs/"+url.PathEscape(ref)+"/objects/stat"), url.Values{"path": {path}}, nil, http.StatusOK, &st)
	return st.PhysicalAddress
}

// read checks that path at ref reads back as want.
func (r repoAPI) read(ref, path, want string) {
	r.t.Helper()
	got := r.s.ReadObject(r.t, r.repo, ref, path)
	if got.Status != http.StatusOK || !bytes.Equal(got.Body, []byte(want)) {
		r.t.Errorf("GET %s/%s: %d %q, want 200 %q", ref, path, got.Status, got.Body, want)
	}
}

// gone checks that the object at a physical address is no longer stored.
func (r repoAPI) gone(address string) bool {
	r.t.Helper()
	o := lakefstest.Object{Name: address, PhysicalAddress: address}
	stored, known := r.s.Stored(r.t, o)
	return known && !stored
}

// settle says where object i reads and whether a correct GC keeps it.
func (r repoAPI) settle(i int, ref string, kept bool, why string) {
	o := &r.h.Objects[i]
	o.Ref, o.Kept, o.Why = ref, kept, why
}

// importLocation is one source of an import: a file or a folder of the
// local blockstore, and where it goes on the branch.
type importLocation struct {
	Type        string `json:"type"` // "object" or "common_prefix"
	Path        string `json:"path"`
	Destination string `json:"destination"`
}

// importInto imports paths into branch with lakeFS's import API, waits for
// it to finish, and returns the import's commit and its metarange. lakeFS
// dates an import's commit now, whatever the request's commit date says.
func (r repoAPI) importInto(branch string, paths ...importLocation) (commit, metarange string) {
	r.t.Helper()
	var started struct {
		ID string `json:"id"`
	}
	at := r.path("/branches/" + url.PathEscape(branch) + "/import")
	r.s.Do(r.t, http.MethodPost, at, nil, map[string]any{
		"paths": paths, "commit": map[string]any{"message": "import"},
	}, http.StatusAccepted, &started)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Completed bool `json:"completed"`
			Commit    *struct {
				ID          string `json:"id"`
				MetaRangeID string `json:"meta_range_id"`
			} `json:"commit"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		r.s.Do(r.t, http.MethodGet, at, url.Values{"id": {started.ID}}, nil, http.StatusOK, &st)
		switch {
		case st.Error != nil:
			r.t.Fatalf("import %v: %s", paths, st.Error.Message)
		case st.Completed && st.Commit != nil:
			return st.Commit.ID, st.Commit.MetaRangeID
		case time.Now().After(deadline):
			r.t.Fatalf("import %v: not done after 30 s", paths)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// expiredImport gives the history's repository the commit an import of
// paths would be once expired: a commit daysAgo days old off parent, on no
// branch. lakeFS dates an import's commit now, and keeps any commit younger
// than the retention, so the import itself runs in a scratch repository;
// its metarange and ranges (content-addressed files) are copied into this
// repository's _lakefs/ folder, and lakeFS's commit-record API (the one a
// refs restore uses) records the commit with its date. Returns the commit.
func (r repoAPI) expiredImport(parent string, daysAgo int, paths ...importLocation) string {
	r.t.Helper()
	scratch := r.h.Repo + "-scratch"
	r.s.Do(r.t, http.MethodPost, "/repositories", nil, map[string]any{
		"name": scratch, "storage_namespace": "local://" + scratch, "default_branch": "main",
	}, http.StatusCreated, nil)
	_, metarange := historyAPI(r.t, r.s, &lakefstest.History{Repo: scratch}).importInto("main", paths...)
	from, to := filepath.Join(r.s.BlockstorePath, scratch, "_lakefs"), filepath.Join(localFolder(r.t, r.h), "_lakefs")
	entries, err := os.ReadDir(from)
	if err != nil {
		r.t.Fatal(err)
	}
	copied := 0
	for _, e := range entries {
		if _, err := hex.DecodeString(e.Name()); err != nil || len(e.Name()) != 64 || !e.Type().IsRegular() {
			continue // not an SSTable
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			r.t.Fatal(err)
		}
		copied++
	}
	if copied < 2 {
		r.t.Fatalf("the scratch import wrote %d SSTables, want a metarange and its ranges", copied)
	}
	var p struct {
		Generation int64 `json:"generation"`
	}
	r.s.Do(r.t, http.MethodGet, r.path("/commits/"+url.PathEscape(parent)), nil, nil, http.StatusOK, &p)
	created := r.built.Add(-time.Duration(daysAgo) * layoutDay).Unix()
	id := commitAddress("lakegc-admin", "import", metarange, created, []string{parent})
	r.s.Do(r.t, http.MethodPost, r.path("/commits"), nil, map[string]any{
		"commit_id": id, "version": 1, "committer": "lakegc-admin", "message": "import",
		"metarange_id": metarange, "creation_date": created,
		"parents": []string{parent}, "generation": p.Generation + 1, "metadata": map[string]string{},
	}, http.StatusNoContent, nil)
	return id
}

// commitAddress is the ID lakeFS requires of a commit record without
// metadata: its content address, the SHA-256 of the fields "commit:v1",
// committer, message, metarange, creation time (Unix seconds), metadata and
// the identity of the parents, each field written as a type byte (0 bytes,
// 1 string, 2 int64, 3 string list, 4 string map, 5 embedded identity) and
// its value: an int64 as the byte 8 and 8 bytes big-endian, bytes and
// strings and lists as their length (an int64) and contents, a map as its
// length and its keys in order, each followed by its value; the parents'
// identity is the SHA-256 of the list of their IDs, written as bytes.
func commitAddress(committer, message, metarange string, created int64, parents []string) string {
	integer := func(h hash.Hash, v int64) {
		h.Write([]byte{2, 8})
		_ = binary.Write(h, binary.BigEndian, v)
	}
	str := func(h hash.Hash, v string) {
		h.Write([]byte{1})
		integer(h, int64(len(v)))
		h.Write([]byte(v))
	}
	ps := sha256.New()
	ps.Write([]byte{3})
	integer(ps, int64(len(parents)))
	for _, p := range parents {
		str(ps, p)
	}
	h := sha256.New()
	for _, v := range []string{"commit:v1", committer, message, metarange} {
		str(h, v)
	}
	integer(h, created)
	h.Write([]byte{4}) // an empty metadata map
	integer(h, 0)
	h.Write([]byte{5, 0}) // the parents' identity, embedded as bytes
	integer(h, sha256.Size)
	h.Write(ps.Sum(nil))
	return hex.EncodeToString(h.Sum(nil))
}

// TestIntegrationNestedRepository: lakeFS accepts a repository whose
// namespace is a folder under another's data folder. Two are nested in the
// outer repository's — one in a folder named like a slice (an old one, so
// that the mark lists it), one in a plain folder — each with lakefstest's
// whole history (committed, staged and linked objects, expired commits).
// The outer repository's sweep deletes exactly its own garbage and nothing
// of the inner ones (data and _lakefs/ files alike: every inner file is
// still there, unchanged, and every inner object, garbage included, reads
// back through lakeFS). Then each inner repository's own sweep collects its
// garbage, which shows the inner repositories were left whole.
func TestIntegrationNestedRepository(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-outer")
	slice := pathprovider.DescendingID(h.Built.Add(-60 * layoutDay)).String()
	var inners []*lakefstest.History
	for _, c := range []struct{ repo, folder string }{
		{"lakegc-inner-slice", "data/" + slice},
		{"lakegc-inner-plain", "data/inner"},
	} {
		inners = append(inners, lakefstest.BuildHistoryIn(t, s, c.repo, h.Namespace+"/"+c.folder))
	}
	before := make([]map[string]string, len(inners))
	for i, in := range inners {
		before[i] = snapshot(t, localFolder(t, in))
		if _, ok := before[i]["_lakefs/dummy"]; !ok {
			t.Fatalf("%s: no _lakefs/dummy among %v", in.Repo, slices.Sorted(maps.Keys(before[i])))
		}
		in.VerifyBeforeGC(t, s)
	}

	rep := sweepAndVerify(t, s, h, len(h.KeptCommits))
	if len(rep.Mark.Summary.Walls) != len(inners) {
		t.Errorf("walls %v, want the %d inner repositories' folders", rep.Mark.Summary.Walls, len(inners))
	}
	for i, in := range inners {
		sameFiles(t, in.Repo+" after the outer sweep", before[i], snapshot(t, localFolder(t, in)))
		in.VerifyBeforeGC(t, s)
	}

	for _, in := range inners {
		sweepAndVerify(t, s, in, len(in.KeptCommits))
	}
	h.VerifyAfterGC(t, s)
}

// TestIntegrationImportsAndForeignFiles: files put straight into the
// namespace's folder — at its top level and under data/ — month-old.
// Some are imported with lakeFS's import API: one import whose commit is 40
// days old, on no branch, and expired (see expiredImport), and one whose
// commit is its branch's head. The others are never imported (another tenant's, a
// backup). The sweep deletes exactly the repository's own garbage; every
// import source and foreign file is still there and reads back (the imports
// through their commits), and the report counts each it lists as
// unrecognized. A file imported from outside the namespace is kept too.
func TestIntegrationImportsAndForeignFiles(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-imports")
	r := historyAPI(t, s, h)
	folder := localFolder(t, h)
	const month = 30 * layoutDay

	type file struct{ key, label string }
	expired := []file{{"top-import.csv", "I1"}, {"landing/a b.csv", "I2"}, {"landing/sub/ü.csv", "I3"}, {"data/landing/p=1/part-0.csv", "I4"}}
	live := []file{{"live.csv", "I5"}, {"data/live/part-0.csv", "I6"}}
	foreign := []file{{"README.txt", "N1"}, {"backup.tar", "N2"}, {"data/notes.txt", "N3"}, {"data/tenant/x%3D1/y.bin", "N4"}}
	contents := map[string][]byte{}
	for _, f := range slices.Concat(expired, live, foreign) {
		contents[f.key] = []byte("lakegc foreign file " + f.label + "\n")
		writeOld(t, filepath.Join(folder, filepath.FromSlash(f.key)), contents[f.key], month)
	}
	abs := func(key string) string { return h.AddressNamespace + "/" + key }
	head := h.Commits["m3"]

	expiredCommit := r.expiredImport(head, 40,
		importLocation{"object", abs("top-import.csv"), "imported/top.csv"},
		importLocation{"common_prefix", abs("landing/"), "imported/landing/"},
		importLocation{"common_prefix", abs("data/landing/"), "imported/data-landing/"})
	r.branch("imp-live", head)
	// And a file from outside the namespace: a foreign address, never listed.
	outside := filepath.Join(s.BlockstorePath, "lakegc-imports-outside", "ext.csv")
	outsideData := []byte("lakegc foreign file I7\n")
	writeOld(t, outside, outsideData, month)
	outsideAddr := "local://" + filepath.ToSlash(outside)
	liveCommit, _ := r.importInto("imp-live",
		importLocation{"object", abs("live.csv"), "live/top.csv"},
		importLocation{"common_prefix", abs("data/live/"), "live/data/"},
		importLocation{"object", outsideAddr, "live/ext.csv"})
	h.Objects = append(h.Objects, lakefstest.Object{Name: "I7 ext.csv", Ref: liveCommit, Path: "live/ext.csv",
		Content: outsideData, PhysicalAddress: outsideAddr, Key: outsideAddr, Kept: true, Why: "imported from outside the namespace"})

	// Where lakeFS shows each import, and the address it recorded.
	shown := map[string]string{}
	for _, ref := range []string{expiredCommit, liveCommit} {
		for _, a := range s.ListObjects(t, h.Repo, ref) {
			if rest, ok := strings.CutPrefix(a, h.AddressNamespace+"/"); ok {
				shown[rest] = ref
			}
		}
	}
	dest := map[string]string{
		"top-import.csv": "imported/top.csv", "landing/a b.csv": "imported/landing/a b.csv",
		"landing/sub/ü.csv": "imported/landing/sub/ü.csv", "data/landing/p=1/part-0.csv": "imported/data-landing/p=1/part-0.csv",
		"live.csv": "live/top.csv", "data/live/part-0.csv": "live/data/part-0.csv",
	}
	for _, f := range slices.Concat(expired, live) {
		ref, ok := shown[f.key]
		if !ok {
			t.Fatalf("import source %s: no object of the import commits has its address (%v)", f.key, shown)
		}
		h.Objects = append(h.Objects, lakefstest.Object{Name: f.label + " " + f.key, Ref: ref, Path: dest[f.key],
			Content: contents[f.key], PhysicalAddress: abs(f.key), Key: f.key, Kept: true,
			Why: "an import source in the namespace (lakeFS never wrote it)"})
	}

	rep := sweepAndVerify(t, s, h, len(h.KeptCommits)+1) // + the live import's commit
	// lakeFS's committed entries outside the namespace are counted by the
	// metarange reader (its progress line), not in rep.Mark.Foreign:
	// nothing to check here but that the file and its commit are kept.
	// The mark lists the top level and the data folder, not other folders
	// (landing/ here): every file it lists is unrecognized.
	var listable []string
	for _, f := range slices.Concat(expired, live, foreign) {
		if !strings.Contains(f.key, "/") || strings.HasPrefix(f.key, "data/") {
			listable = append(listable, f.key)
		}
	}
	slices.Sort(listable)
	if rep.Mark.Unrecognized != int64(len(listable)) || !slices.Equal(rep.Mark.Summary.UnrecognizedSample, listable) {
		t.Errorf("%d unrecognized objects %v, want the import sources and foreign files it lists, %v",
			rep.Mark.Unrecognized, rep.Mark.Summary.UnrecognizedSample, listable)
	}
	for _, f := range foreign {
		b, err := os.ReadFile(filepath.Join(folder, filepath.FromSlash(f.key)))
		if err != nil || !bytes.Equal(b, contents[f.key]) {
			t.Errorf("foreign file %s after the sweep: %q, %v", f.key, b, err)
		}
	}
}

// TestIntegrationEscapedLinkedPaths: objects linked (get-physical-address,
// write, link) at paths that need escaping — '=', spaces, a literal "%2F",
// unicode — on a branch with three commits: e1 (20 days old, expired: the
// branch's head 7 days back is e2), e2 (10 days) and e3 (1 day, head), and
// staged ones after e3; and on a branch deleted after its only commit, 30
// days old. Every live one survives the sweep and reads back at its path;
// those only in expired commits are deleted with the rest of the garbage.
func TestIntegrationEscapedLinkedPaths(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-escaped")
	r := historyAPI(t, s, h)
	const (
		p1 = "year=2024/part 0.parquet"
		p2 = "a%2Fb"
		p3 = "日本/データ €+ü.csv"
		p4 = "x/y%20z?#&.txt"
	)
	r.branch("esc", h.Commits["m3"])
	e1a, e1b, e1c := r.link("esc", p1, "E1"), r.link("esc", p2, "E2"), r.link("esc", p3, "E3")
	e1 := r.commit("esc", 20)
	e2a := r.link("esc", p1, "E4")
	r.remove("esc", p2)
	r.commit("esc", 10)
	e3a := r.link("esc", p2, "E5")
	e3 := r.commit("esc", 1)
	s1, s2 := r.link("esc", p4, "E6"), r.link("esc", p1, "E7")
	r.branch("esc-old", h.Commits["m3"])
	o1 := r.link("esc-old", "year=2023/part 0.parquet", "E8")
	old := r.commit("esc-old", 30)
	r.deleteBranch("esc-old")

	r.settle(e1a, e1, false, "only in expired commit e1 (overwritten in e2)")
	r.settle(e1b, e1, false, "only in expired commit e1 (removed in e2)")
	r.settle(e1c, e3, true, "in kept commits e2 and e3")
	r.settle(e2a, e3, true, "in kept commits e2 and e3 (staged over after e3)")
	r.settle(e3a, e3, true, "in kept commit e3")
	r.settle(s1, "esc", true, "staged on esc")
	r.settle(s2, "esc", true, "staged on esc")
	r.settle(o1, old, false, "only in a deleted branch's commit, 30 days old")

	sweepAndVerify(t, s, h, len(h.KeptCommits)+2) // + e2, e3
}

// TestIntegrationNestedRepositoryOverOwnObjects: lakeFS also accepts a
// repository nested where the outer one's own objects lie: at its data
// folder itself ("<ns>/data"), or in the slice folder that holds its
// objects. Another repository's folder is a wall, so the outer repository's
// sweep deletes nothing in it — its garbage there stays, and the report
// names the wall: a leak the operator can see, not a loss — and the inner
// repository stays whole and collects its own garbage.
func TestIntegrationNestedRepositoryOverOwnObjects(t *testing.T) {
	s := startLocal(t)
	for _, c := range []struct {
		name   string
		folder func(h *lakefstest.History) string
	}{
		{"data", func(*lakefstest.History) string { return "data" }},
		{"slice", func(h *lakefstest.History) string { return pathDir(h.Objects[0].Key) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := lakefstest.BuildHistory(t, s, "lakegc-outer-"+c.name)
			folder := c.folder(h)
			in := lakefstest.BuildHistoryIn(t, s, "lakegc-inner-"+c.name, h.Namespace+"/"+folder)
			wall := folder + "/"
			// The outer's garbage in the wall is kept: set it apart.
			var walled []lakefstest.Object
			h.Objects = slices.DeleteFunc(h.Objects, func(o lakefstest.Object) bool {
				if !o.Kept && strings.HasPrefix(o.Key, wall) {
					walled = append(walled, o)
					return true
				}
				return false
			})
			if len(walled) == 0 {
				t.Fatalf("none of the outer repository's garbage is in %s", wall)
			}
			before := snapshot(t, localFolder(t, in))
			rep := sweepAndVerify(t, s, h, len(h.KeptCommits))
			if !slices.Equal(rep.Mark.Summary.Walls, []string{wall}) {
				t.Errorf("walls %v, want [%s]", rep.Mark.Summary.Walls, wall)
			}
			for _, o := range walled {
				if stored, _ := s.Stored(t, o); !stored {
					t.Errorf("%s (%s) in the wall %s was deleted", o.Name, o.Key, wall)
				}
			}
			sameFiles(t, in.Repo+" after the outer sweep", before, snapshot(t, localFolder(t, in)))
			in.VerifyBeforeGC(t, s)
			sweepAndVerify(t, s, in, len(in.KeptCommits))
		})
	}
}

// pathDir is the folder of a slash-separated key, without the final slash.
func pathDir(key string) string {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return ""
	}
	return key[:i]
}

// TestIntegrationSymlinkedBlockstorePath: lakegc is given lakeFS's
// blockstore folder through a symbolic link, so the namespace it resolves
// ("local:///link/repo") is spelled differently from the full addresses
// lakeFS stores for linked objects ("local:///real/path/repo/data/…"). The
// sweep either proves them the same place or refuses; it never takes the
// linked objects for imports from elsewhere and deletes them. Either way
// the history reads back; after a refusal, a run with the real path
// collects the garbage.
func TestIntegrationSymlinkedBlockstorePath(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-symlink")
	link := filepath.Join(t.TempDir(), "blockstore-link")
	if err := os.Symlink(s.BlockstorePath, link); err != nil {
		t.Fatal(err)
	}
	now := h.Built.Add(3 * layoutDay)
	code, stdout, stderr := gcIn(t, s, link, h.Repo, now, "--sweep")
	t.Logf("through the link: exit %d\n%s", code, stderr)
	if code == exitOK {
		var rep lakegc.Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		h.VerifyAfterGC(t, s)
		return
	}
	if code != exitFailed || !strings.Contains(stderr.String(), lakegc.ErrNamespaceMismatch.Error()) {
		t.Errorf("exit %d, want %d naming the mismatch", code, exitFailed)
	}
	h.VerifyBeforeGC(t, s)
	sweepAndVerify(t, s, h, len(h.KeptCommits))
}
