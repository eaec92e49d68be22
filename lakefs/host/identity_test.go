package host_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
)

// A bucket given for an object-store namespace is not probed, but it must
// hold what lakeFS writes into the namespace during the run: a bucket of
// another repository's folder — lakeFS's marker there too, and an object
// of lakeFS's shapes older than any cutoff — fails the run, and a sweep
// deletes nothing in it. The repository's own bucket, holding the same
// object, has it deleted by the same run (so the refusal is the bucket's).
func TestCollectRefusesAnotherRepositorysBucket(t *testing.T) {
	const ns = "s3://b/repo1"
	own, other := memblob.OpenBucket(nil), memblob.OpenBucket(nil)
	defer own.Close()
	defer other.Close()
	now := time.Now()
	garbage := "data/" + layout.DescendingID(now.Add(-72*time.Hour)).String() + "/" + layout.DescendingID(now.Add(-72*time.Hour)).String()
	for _, b := range []*blob.Bucket{own, other} {
		for _, key := range []string{"_lakefs/dummy", garbage} {
			if err := b.WriteAll(t.Context(), key, []byte(key), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A lakeFS whose namespace is own's: prepare_commits writes its report
	// there (one kept commit, of an empty metarange).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := strings.TrimPrefix(r.URL.Path, "/api/v1/repositories/r")
		switch {
		case r.Method == http.MethodGet && p == "":
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "r", "storage_namespace": ns, "default_branch": "main", "creation_date": 1})
		case r.Method == http.MethodPost && p == "/gc/prepare_uncommited":
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"run_id": layout.NewRunID(time.Now()), "gc_uncommitted_location": "", "continuation_token": nil})
		case r.Method == http.MethodGet && (p == "/branches" || p == "/tags"): // no tags: the extended rules add nothing
			_ = json.NewEncoder(w).Encode(map[string]any{"pagination": map[string]any{"has_more": false, "next_offset": ""}, "results": []any{}})
		case r.Method == http.MethodGet && p == "/settings/gc_rules":
			_ = json.NewEncoder(w).Encode(map[string]any{"default_retention_days": 7, "branches": nil})
		case r.Method == http.MethodPost && p == "/gc/prepare_commits/async":
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(map[string]string{"id": "task"})
		case r.Method == http.MethodGet && p == "/gc/prepare_commits/status":
			runID := layout.NewRunID(time.Now())
			key := layout.CommitsKey("_lakefs", runID)
			if err := own.WriteAll(r.Context(), key, []byte("commit_id,expired,metarange_id\nc1,false,\n"), nil); err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"task_id": r.URL.Query().Get("id"), "completed": true, "result": map[string]string{
				"run_id": runID, "gc_commits_location": ns + "/" + key, "gc_addresses_location": ns + "/_lakefs/retention/gc/addresses/"}})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	client, err := api.New(srv.URL, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return now.Add(30 * 24 * time.Hour) }
	_, err = host.Collect(t.Context(), client, other, host.Options{Repository: "r", Sweep: true, Clock: later})
	if gcerrors.Code(err) != gcerrors.NotFound || !strings.Contains(err.Error(), "commits report") {
		t.Errorf("another repository's bucket: %v, want its commits report not found", err)
	}
	if ok, err := other.Exists(t.Context(), garbage); !ok || err != nil {
		t.Errorf("another repository's bucket lost %s (%v)", garbage, err)
	}
	res, err := host.Collect(t.Context(), client, own, host.Options{Repository: "r", Sweep: true, Clock: later})
	if err != nil || res.Report.Sweep == nil || res.Report.Sweep.Deleted != 1 {
		t.Fatalf("the repository's own bucket: %+v, %v; want its one garbage object deleted", res.Report, err)
	}
	if ok, err := own.Exists(t.Context(), garbage); ok || err != nil {
		t.Errorf("the repository's own bucket still has %s (%v)", garbage, err)
	}
}
