package host

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/retention"
)

// extendHost is a lakeFSHost over a fake lakeFS: tags v1 → c1, branches
// main (c3) and feature (f1), rules of 7 days, commits c0 ← c1 ← c2 ← c3 and
// c1 ← f1; c1 is dated exactly 7 days before now, to the second. fail
// makes the tag listing ("tags") or one commit (its ID) answer 500.
func extendHost(t *testing.T, now time.Time, fail string) *lakeFSHost {
	t.Helper()
	commits := map[string]map[string]any{
		"c0": {"parents": []string{}, "creation_date": now.AddDate(0, 0, -100).Unix()},
		"c1": {"parents": []string{"c0"}, "creation_date": now.AddDate(0, 0, -7).Unix()},
		"c2": {"parents": []string{"c1"}, "creation_date": now.AddDate(0, 0, -6).Unix()},
		"c3": {"parents": []string{"c2"}, "creation_date": now.AddDate(0, 0, -1).Unix()},
		"f1": {"parents": []string{"c1"}, "creation_date": now.AddDate(0, 0, -50).Unix()},
	}
	page := func(results any) map[string]any {
		return map[string]any{"pagination": map[string]any{"has_more": false, "next_offset": ""}, "results": results}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := strings.TrimPrefix(r.URL.Path, "/api/v1/repositories/r")
		switch {
		case p == "/tags" && fail == "tags", fail != "" && p == "/commits/"+fail:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"message":"` + fail + ` are down"}`))
		case p == "/tags":
			_ = json.NewEncoder(w).Encode(page([]map[string]string{{"id": "v1", "commit_id": "c1"}}))
		case p == "/branches":
			_ = json.NewEncoder(w).Encode(page([]map[string]string{{"id": "main", "commit_id": "c3"}, {"id": "feature", "commit_id": "f1"}}))
		case p == "/settings/gc_rules":
			_ = json.NewEncoder(w).Encode(map[string]any{"default_retention_days": 7, "branches": nil})
		case strings.HasPrefix(p, "/commits/") && commits[strings.TrimPrefix(p, "/commits/")] != nil:
			id := strings.TrimPrefix(p, "/commits/")
			c := commits[id]
			_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "parents": c["parents"], "creation_date": c["creation_date"],
				"meta_range_id": "mr-" + id, "version": 1, "committer": "", "message": ""})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"no such route"}`))
		}
	}))
	t.Cleanup(srv.Close)
	client, err := api.New(srv.URL, "a", "b", api.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	return &lakeFSHost{client: client, repo: "r", bucket: bucket, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestExtendActive(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	lakeFS := []retention.ActiveCommit{{CommitID: "c3", MetaRangeID: "mr-c3"}, {CommitID: "c2", MetaRangeID: "mr-c2"}}
	ids := func(active []retention.ActiveCommit) []string {
		var out []string
		for _, a := range active {
			out = append(out, a.CommitID)
		}
		slices.Sort(out)
		return out
	}

	// No rules file: tags are kept. c1, tagged, is kept; so is c0, its
	// parent, since c1's date — known to the second — may be up to a second
	// after the 7-day threshold, and in doubt the commit counts as newer.
	h := extendHost(t, now, "")
	got, err := h.extendActive(t.Context(), now, slices.Clone(lakeFS))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c0", "c1", "c2", "c3"}; !slices.Equal(ids(got), want) {
		t.Errorf("default rules: %v, want %v", ids(got), want)
	}
	if st := h.rules; st.ExtendedFound || st.Added != 2 || st.CommitsRead != 2 || !strings.Contains(st.String(), "7 days by default") {
		t.Errorf("default rules: stats %+v", st)
	}

	// A rules file: no tags, feature's last 2 commits, a stale rule and
	// days below lakeFS's, which the command reports as not applied.
	h = extendHost(t, now, "")
	days := int32(1)
	ext := &retention.Extended{StaleBranchDays: 10, Branches: []retention.BranchRule{{Pattern: "feat.*", KeepLast: 2, RetentionDays: &days}}}
	if err := retention.NewExtendedStore(h.bucket).Save(t.Context(), ext); err != nil {
		t.Fatal(err)
	}
	got, err = h.extendActive(t.Context(), now, slices.Clone(lakeFS))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c1", "c2", "c3", "f1"}; !slices.Equal(ids(got), want) {
		t.Errorf("feature's last 2: %v, want %v", ids(got), want)
	}
	if st := h.rules; !st.ExtendedFound || len(st.NotApplied) != 2 || !strings.Contains(st.String(), "stale_branch_days 10") {
		t.Errorf("not applied: %+v", st)
	}

	// Failures fail the run, never read as "nothing more to keep".
	h = extendHost(t, now, "tags")
	if _, err := h.extendActive(t.Context(), now, slices.Clone(lakeFS)); !errors.Is(err, ErrLakeFS) || !strings.Contains(err.Error(), "tags are down") {
		t.Errorf("tags failing: %v", err)
	}
	// A commit that cannot be read mid-walk (c1, tagged, was read; c0,
	// its parent, fails) fails the run too.
	h = extendHost(t, now, "c0")
	if got, err := h.extendActive(t.Context(), now, slices.Clone(lakeFS)); !errors.Is(err, ErrLakeFS) || !strings.Contains(err.Error(), "c0") || got != nil {
		t.Errorf("a commit failing mid-walk: %v, %v", ids(got), err)
	}
	if h.rules.CommitsRead != 1 {
		t.Errorf("read %d commits before the failure, want 1 (c1)", h.rules.CommitsRead)
	}
	h = extendHost(t, now, "")
	if err := h.bucket.WriteAll(t.Context(), "_lakefs/retention/gc/rules/lakegc.json", []byte(`{"version":1,"keep_tags":"yes"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.extendActive(t.Context(), now, slices.Clone(lakeFS)); !errors.Is(err, retention.ErrInvalidRules) {
		t.Errorf("malformed rules file: %v", err)
	}
}
