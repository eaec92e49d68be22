package api_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/lakegc/lakegc/lakefs/api"
)

// lakeFSStandIn answers like a lakeFS with one repository, "example".
func lakeFSStandIn() *httptest.Server {
	answers := map[string]struct {
		status int
		body   string
	}{
		"GET /api/v1/repositories/example":                           {200, `{"id":"example","creation_date":1764510000,"default_branch":"main","storage_namespace":"s3://bucket/example"}`},
		"POST /api/v1/repositories/example/gc/prepare_commits/async": {202, `{"id":"GCPrepareCommitsAsync-1"}`},
		"GET /api/v1/repositories/example/gc/prepare_commits/status": {200, `{"task_id":"GCPrepareCommitsAsync-1","completed":true,"update_time":"2025-11-30T14:00:00Z",` +
			`"result":{"run_id":"r1","gc_commits_location":"s3://bucket/example/_lakefs/retention/gc/commits/run_id=r1/commits.csv","gc_addresses_location":"s3://bucket/example/_lakefs/retention/gc/addresses/"}}`},
		"POST /api/v1/repositories/example/gc/prepare_uncommited": {201, `{"run_id":"u1","gc_uncommitted_location":"s3://bucket/example/_lakefs/retention/gc/uncommitted/u1/uncommitted/"}`},
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body+"\n")
	}))
}

// Asks lakeFS for what a GC needs: the storage namespace, the commits report
// of the commits its rules keep, and the export of staged objects. A real
// client comes from api.FromEnv, which reads lakectl's environment variables.
func Example() {
	lakeFS := lakeFSStandIn()
	defer lakeFS.Close()
	ctx := context.Background()

	c, err := api.New(lakeFS.URL, "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	if err != nil {
		log.Fatal(err)
	}
	repo, err := c.GetRepository(ctx, "example")
	if err != nil {
		log.Fatal(err)
	}
	commits, err := c.PrepareCommitsAsync(ctx, "example")
	if err != nil {
		log.Fatal(err)
	}
	report, err := api.RelativeKey(repo.StorageNamespace, commits.CommitsLocation)
	if err != nil {
		log.Fatal(err)
	}
	staged, err := c.PrepareAllUncommitted(ctx, "example")
	if err != nil {
		log.Fatal(err)
	}
	folder, err := api.RelativeKey(repo.StorageNamespace, staged.Location)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("namespace:", repo.StorageNamespace)
	fmt.Println("commits report:", report)
	fmt.Println("uncommitted export:", folder, "in", staged.Calls, "call(s)")
	// Output:
	// namespace: s3://bucket/example
	// commits report: _lakefs/retention/gc/commits/run_id=r1/commits.csv
	// uncommitted export: _lakefs/retention/gc/uncommitted/u1/uncommitted/ in 1 call(s)
}

func ExampleRelativeKey() {
	key, err := api.RelativeKey("s3://bucket/repo1", "s3://bucket/repo1/data/gab12/cd34,sig")
	fmt.Println(key, err)
	_, err = api.RelativeKey("s3://bucket/repo1", "s3://bucket/repo10/data/x")
	fmt.Println(err)
	// Output:
	// data/gab12/cd34,sig <nil>
	// api: location outside the storage namespace: "s3://bucket/repo10/data/x" is not under "s3://bucket/repo1"
}
