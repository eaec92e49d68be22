package lakefstest

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadObject reads path at ref (a branch or a commit ID) through lakeFS.
func (s *Server) ReadObject(t testing.TB, repo, ref, path string) Response {
	t.Helper()
	return s.Raw(t, http.MethodGet, "/repositories/"+esc(repo)+"/refs/"+esc(ref)+"/objects",
		url.Values{"path": {path}}, "", nil)
}

// Stored reports whether the object's data is in the local blockstore; known
// is false on an external lakeFS, whose store this package cannot see.
func (s *Server) Stored(t testing.TB, o Object) (stored, known bool) {
	t.Helper()
	if s.BlockstorePath == "" {
		return false, false
	}
	p, err := s.LocalPath(o.PhysicalAddress)
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(p)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, fs.ErrNotExist):
		return false, true
	default:
		t.Fatalf("lakefstest: %s: %v", o.Name, err)
		return false, false
	}
}

// VerifyBeforeGC checks that every object of the history reads back: the
// kept ones and the garbage both, through lakeFS where a ref shows them and in
// the local blockstore. It proves VerifyAfterGC can see a deletion.
func (h *History) VerifyBeforeGC(t testing.TB, s *Server) {
	t.Helper()
	h.verifyKept(t, s)
	for _, o := range h.Garbage() {
		if stored, known := s.Stored(t, o); known && !stored {
			t.Errorf("lakefstest: garbage %s (%s) missing before GC", o.Name, o.Key)
		}
		if o.Ref != "" {
			h.verifyReads(t, s, o)
		}
	}
}

// VerifyAfterGC checks that every kept object still reads back through
// lakeFS with its content, and that the garbage is gone: absent from the local
// blockstore, and unreadable through the ref that showed it.
func (h *History) VerifyAfterGC(t testing.TB, s *Server) {
	t.Helper()
	h.verifyKept(t, s)
	for _, o := range h.Garbage() {
		if stored, known := s.Stored(t, o); known && stored {
			t.Errorf("lakefstest: garbage %s (%s, %s) still stored", o.Name, o.Key, o.Why)
		}
		if o.Ref == "" {
			continue
		}
		if got := s.ReadObject(t, h.Repo, o.Ref, o.Path); got.Status == http.StatusOK {
			t.Errorf("lakefstest: garbage %s still reads at %s", o.Name, o.Ref)
		}
	}
}

func (h *History) verifyKept(t testing.TB, s *Server) {
	t.Helper()
	for _, o := range h.Kept() {
		h.verifyReads(t, s, o)
		if stored, known := s.Stored(t, o); known && !stored {
			t.Errorf("lakefstest: kept %s (%s, %s) is not stored", o.Name, o.Key, o.Why)
		}
	}
}

func (h *History) verifyReads(t testing.TB, s *Server, o Object) {
	t.Helper()
	got := s.ReadObject(t, h.Repo, o.Ref, o.Path)
	if got.Status != http.StatusOK {
		t.Errorf("lakefstest: %s (%s) at %s: status %d: %s", o.Name, o.Why, o.Ref, got.Status, got.Body)
		return
	}
	if !bytes.Equal(got.Body, o.Content) {
		t.Errorf("lakefstest: %s at %s reads %q, want %q", o.Name, o.Ref, got.Body, o.Content)
	}
}

// ListObjects returns the physical addresses of every object at ref, staged
// ones included when ref is a branch, as lakeFS lists them. On the local
// blockstore lakeFS lists an object stored with a full address (one linked
// there) with the blockstore's path twice, "local:///bs/bs/repo/data/…";
// ListObjects undoes that, so that the addresses match those lakeFS handed out.
func (s *Server) ListObjects(t testing.TB, repo, ref string) []string {
	t.Helper()
	var out []string
	doubled := "local://" + filepath.ToSlash(s.BlockstorePath) + filepath.ToSlash(s.BlockstorePath) + "/"
	s.paginate(t, "/repositories/"+esc(repo)+"/refs/"+esc(ref)+"/objects/ls", nil, func(r result) {
		a := r.PhysicalAddress
		if rest, ok := strings.CutPrefix(a, doubled); ok && s.BlockstorePath != "" {
			a = "local://" + filepath.ToSlash(s.BlockstorePath) + "/" + rest
		}
		out = append(out, a)
	})
	return out
}

// ListBranches returns every branch of repo; lakeFS lists hidden branches
// only with show_hidden=true.
func (s *Server) ListBranches(t testing.TB, repo string, showHidden bool) []string {
	t.Helper()
	var out []string
	q := url.Values{}
	if showHidden {
		q.Set("show_hidden", "true")
	}
	s.paginate(t, "/repositories/"+esc(repo)+"/branches", q, func(r result) { out = append(out, r.ID) })
	return out
}

// result is one entry of a lakeFS listing: an object or a ref.
type result struct {
	ID              string `json:"id"`
	PhysicalAddress string `json:"physical_address"`
}

func (s *Server) paginate(t testing.TB, path string, q url.Values, each func(result)) {
	t.Helper()
	q = cloneValues(q)
	for {
		var page struct {
			Pagination struct {
				HasMore    bool   `json:"has_more"`
				NextOffset string `json:"next_offset"`
			} `json:"pagination"`
			Results []result `json:"results"`
		}
		s.Do(t, http.MethodGet, path, q, nil, http.StatusOK, &page)
		for _, r := range page.Results {
			each(r)
		}
		if !page.Pagination.HasMore {
			return
		}
		q.Set("after", page.Pagination.NextOffset)
	}
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}
