package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob/fileblob"
)

// Environment of TestLakeFSBench.
const (
	envLakeFSBench = "LAKEGC_LAKEFS_BENCH" // "1" runs it
	// envLakeFSBenchScale divides the shape: 10 builds 10 K objects, 25
	// commits, 10 branches and 300 staged objects (default 1: the full
	// shape).
	envLakeFSBenchScale = "LAKEGC_LAKEFS_BENCH_SCALE"
	// envLakeFSBenchRuns is the number of timed dry runs (default 3).
	envLakeFSBenchRuns = "LAKEGC_LAKEFS_BENCH_RUNS"
)

// TestLakeFSBench times "lakegc gc" dry runs against a real lakeFS
// (LAKEFS_BIN) at the shape of lakeFS's Standalone GC lab figure: 100 K
// committed objects in 250 commits on 100 branches, and 30 staged objects
// on each branch (3,000). Each commit writes 400 objects, a quarter of
// them over paths its branch wrote before, and the commits are dated from
// 60 days ago to a day ago under a 7-day rule, so that the mark finds
// garbage. It is a test, not a benchmark, because building the
// repository takes minutes: it runs only with LAKEGC_LAKEFS_BENCH=1, and
// LAKEGC_LAKEFS_BENCH_SCALE=n builds a shape n times smaller.
//
//	LAKEGC_LAKEFS_BENCH=1 LAKEFS_BIN=/path/to/lakefs go test -run TestLakeFSBench -v -timeout 60m ./lakefs/cmd/lakegc/
func TestLakeFSBench(t *testing.T) {
	if os.Getenv(envLakeFSBench) != "1" {
		t.Skipf("set %s=1 (and LAKEFS_BIN) to build the Standalone GC shape on a real lakeFS and time lakegc gc", envLakeFSBench)
	}
	scale, runs := envInt(t, envLakeFSBenchScale, 1), envInt(t, envLakeFSBenchRuns, 3)
	s := lakefstest.Start(t)
	if s.External {
		t.Skip("builds its repository on a lakeFS it starts")
	}
	const (
		fullBranches = 100
		fullCommits  = 250
		perCommit    = 400
		stagedPer    = 30
	)
	branches, commits := max(fullBranches/scale, 1), max(fullCommits/scale, 1)
	repo := "bench"
	b := &benchBuilder{s: s, repo: repo, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{
		"name": repo, "storage_namespace": "local://" + repo, "default_branch": "main",
	}, http.StatusCreated, nil)
	s.Do(t, http.MethodPut, "/repositories/"+repo+"/settings/gc_rules", nil,
		map[string]any{"default_retention_days": 7, "branches": []any{}}, http.StatusNoContent, nil)
	names := make([]string, branches)
	for i := range names {
		names[i] = fmt.Sprintf("b%03d", i)
		s.Do(t, http.MethodPost, "/repositories/"+repo+"/branches", nil, map[string]any{"name": names[i], "source": "main"}, http.StatusCreated, nil)
	}
	now := time.Now().UTC()
	start := time.Now()
	written := map[string]int{} // branch → paths written
	for c := range commits {
		br := names[c%branches]
		var paths []string
		for k := range perCommit {
			n := written[br]
			if k%4 == 0 && n > 0 {
				paths = append(paths, fmt.Sprintf("%s/f%06d", br, (k*7919+c)%n)) // an overwrite
			} else {
				paths = append(paths, fmt.Sprintf("%s/f%06d", br, n))
				written[br]++
			}
		}
		b.uploadAll(t, br, paths, fmt.Sprintf("c%d", c))
		daysAgo := 60 - 59*c/max(commits-1, 1)
		s.Do(t, http.MethodPost, "/repositories/"+repo+"/branches/"+br+"/commits", nil, map[string]any{
			"message": fmt.Sprintf("c%d", c), "date": now.Add(-time.Duration(daysAgo) * 24 * time.Hour).Unix(),
		}, http.StatusCreated, nil)
	}
	for _, br := range names {
		var paths []string
		for k := range stagedPer {
			paths = append(paths, fmt.Sprintf("%s/staged%03d", br, k))
		}
		b.uploadAll(t, br, paths, "staged")
	}
	t.Logf("built %d commits of %d objects on %d branches, %d staged objects, in %v",
		commits, perCommit, branches, branches*stagedPer, time.Since(start).Round(time.Second))

	env := map[string]string{
		api.EnvEndpointURL: s.Endpoint, api.EnvAccessKeyID: s.AccessKeyID, api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath: s.BlockstorePath, envNow: now.Add(3 * 24 * time.Hour).Format(time.RFC3339),
	}
	for _, conc := range []string{"16", "1"} {
		for i := range runs {
			var stdout, stderr bytes.Buffer
			t0 := time.Now()
			code := run(t.Context(), []string{"gc", "--repo", repo, "--json", "--lakefs-concurrency", conc},
				func(k string) string { return env[k] }, &stdout, &stderr)
			d := time.Since(t0)
			if code != exitOK {
				t.Fatalf("gc: exit %d\n%s", code, stderr.String())
			}
			var out struct {
				lakegc.Report
				Host host.Stats `json:"host"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			var phases []string
			for _, p := range []struct {
				name string
				d    time.Duration
			}{{"export", out.Export.Duration}, {"commits", out.Commits.Duration}, {"mark", out.Mark.Duration}} {
				phases = append(phases, fmt.Sprintf("%s %v", p.name, p.d.Round(time.Millisecond)))
			}
			t.Logf("--lakefs-concurrency %s run %d: %v (%v); %d listed, %d garbage, %d kept commits; %d lakeFS requests, %d staged statted; re-uploads %+v",
				conc, i+1, d.Round(10*time.Millisecond), phases, out.Mark.Listed, out.Mark.Summary.NumDeletedObjects,
				out.Commits.Active, out.Host.LakeFSRequests, out.Host.StagedStatted, out.Host.Reuploads)
		}
	}
	benchListing(t, s.BlockstorePath, "local://"+repo, now.Add(3*24*time.Hour), runs)
}

// benchListing times the mark's listing of the namespace alone, through
// fileblob's pages and read locally (sweep.WithLocalListing): a Mark with
// no inputs lists until its "join" phase. It runs as of at, when every
// slice is older than the cutoff.
func benchListing(t *testing.T, blockstorePath, ns string, at time.Time, runs int) {
	n, err := namespace.Parse(ns)
	if err != nil {
		t.Fatal(err)
	}
	d, err := n.LocalDeleter(namespace.WithLocalRoot(blockstorePath))
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(d.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	none := func(yield func(string, error) bool) {}
	for _, local := range []bool{true, false} {
		for i := range runs {
			var listed time.Time
			opts := []sweep.MarkOption{sweep.WithTempDir(t.TempDir()), sweep.WithClock(func() time.Time { return at }), sweep.WithProgress(func(p sweep.Progress) {
				if p.Phase == "join" && listed.IsZero() {
					listed = time.Now()
				}
			})}
			if local {
				opts = append(opts, sweep.WithLocalListing(d.Dir()))
			}
			start := time.Now()
			sum, err := sweep.Mark(t.Context(), bucket, fmt.Sprintf("listing-%t-%d", local, i),
				sweep.Inputs{Uncommitted: none, Committed: none, ExportStart: at}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if sum.SlicesListed == 0 {
				t.Fatal("the listing's mark listed no slice")
			}
			t.Logf("listing alone (local %t) run %d: %v; %d slices", local, i+1, listed.Sub(start).Round(time.Millisecond), sum.SlicesListed)
			if !local {
				return // one is enough: it takes seconds
			}
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// benchBuilder uploads through lakeFS's object API, 8 at a time.
type benchBuilder struct {
	s    *lakefstest.Server
	repo string
	hc   *http.Client
}

func (b *benchBuilder) uploadAll(t *testing.T, branch string, paths []string, label string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan string)
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				// Each upload's bytes are its own: a path written twice
				// in a commit is no byte-identical duplicate.
				p, i, _ := strings.Cut(j, "\x00")
				if err := b.upload(ctx, branch, p, label+"/"+i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
	for i, p := range paths {
		select {
		case next <- p + "\x00" + strconv.Itoa(i):
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func (b *benchBuilder) upload(ctx context.Context, branch, path, label string) error {
	u := b.s.Endpoint + "/api/v1/repositories/" + b.repo + "/branches/" + branch + "/objects?" + url.Values{"path": {path}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(fmt.Appendf(nil, "%s %s\n", path, label)))
	if err != nil {
		return err
	}
	req.SetBasicAuth(b.s.AccessKeyID, b.s.SecretAccessKey)
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("upload %s/%s: %d %s", branch, path, res.StatusCode, body)
	}
	return nil
}
