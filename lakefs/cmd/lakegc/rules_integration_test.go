package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// TestIntegrationTaggedCommitSurvives: on a real lakeFS, a tag on a
// 60-day-old commit that lakeFS's rules expire keeps its objects through
// "lakegc gc --sweep" (the command keeps tags by default); the same history
// without the tag loses them. Then "lakegc rules set --keep-tags=false":
// keeping main's last 3 commits still keeps c1, its last 2 do not, and X1
// is swept.
func TestIntegrationTaggedCommitSurvives(t *testing.T) {
	s := startLocal(t)
	built := time.Now().UTC()
	gcNow := built.Add(3 * 24 * time.Hour) // the uploads are then older than the cutoff
	// build makes main: c1 (60 days old) old/x=X1, c2 (30) old/x=X2, c3 (1)
	// new/y=Y; lakeFS keeps 7 days, so c3 and c2 are kept and c1 expires,
	// and X1 is only in c1. It returns X1 and c1's ID.
	build := func(repo string, tag bool) (lakefstest.Object, string) {
		s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{"name": repo, "storage_namespace": "local://" + repo, "default_branch": "main"}, http.StatusCreated, nil)
		s.Do(t, http.MethodPut, "/repositories/"+repo+"/settings/gc_rules", nil, map[string]any{"default_retention_days": 7, "branches": []any{}}, http.StatusNoContent, nil)
		upload := func(path, content string) string {
			got := s.Raw(t, http.MethodPost, "/repositories/"+repo+"/branches/main/objects", url.Values{"path": {path}}, "application/octet-stream", strings.NewReader(content))
			if got.Status != http.StatusCreated {
				t.Fatalf("upload %s: %d %s", path, got.Status, got.Body)
			}
			var st struct {
				PhysicalAddress string `json:"physical_address"`
			}
			if err := json.Unmarshal(got.Body, &st); err != nil {
				t.Fatal(err)
			}
			return st.PhysicalAddress
		}
		commit := func(name string, daysAgo int) string {
			var c struct {
				ID string `json:"id"`
			}
			s.Do(t, http.MethodPost, "/repositories/"+repo+"/branches/main/commits", nil, map[string]any{
				"message": name, "date": built.Add(-time.Duration(daysAgo) * 24 * time.Hour).Unix()}, http.StatusCreated, &c)
			return c.ID
		}
		x1 := lakefstest.Object{Name: "X1 old/x@c1", Path: "old/x", Content: []byte("X1 of " + repo), PhysicalAddress: upload("old/x", "X1 of "+repo)}
		c1 := commit("c1", 60)
		upload("old/x", "X2")
		commit("c2", 30)
		upload("new/y", "Y")
		commit("c3", 1)
		if tag {
			s.Do(t, http.MethodPost, "/repositories/"+repo+"/tags", nil, map[string]any{"id": "v1.0", "ref": c1}, http.StatusCreated, nil)
		}
		x1.Ref = c1
		return x1, c1
	}
	stored := func(o lakefstest.Object) bool {
		ok, known := s.Stored(t, o)
		if !known {
			t.Fatal("the local blockstore is not known")
		}
		return ok
	}
	// gc runs "lakegc gc --sweep" and returns what its rules added.
	gc := func(repo string) (added int, summary string) {
		code, stdout, stderr := gcIn(t, s, s.BlockstorePath, repo, gcNow, "--sweep")
		if code != exitOK {
			t.Fatalf("gc %s: exit %d\n%s", repo, code, stderr)
		}
		var rep struct {
			Host struct {
				Rules *host.RulesStats `json:"rules"`
			} `json:"host"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Host.Rules == nil {
			t.Fatalf("gc %s: report without rules (%v):\n%s", repo, err, stdout)
		}
		return rep.Host.Rules.Added, rep.Host.Rules.String()
	}

	tagged, c1 := build("lakegc-tagged", true)
	untagged, _ := build("lakegc-untagged", false)
	if !stored(tagged) || !stored(untagged) {
		t.Fatal("X1 not stored before GC")
	}

	added, summary := gc("lakegc-untagged")
	if stored(untagged) || added != 0 {
		t.Errorf("without a tag: X1 stored %v, %d commits added; lakeFS's rules expire c1 and X1 should be swept", stored(untagged), added)
	}
	t.Logf("without a tag: %s", summary)

	added, summary = gc("lakegc-tagged")
	if !stored(tagged) || added != 1 {
		t.Errorf("tagged c1 (%s): X1 stored %v, %d commits added; want X1 kept and c1 added", c1, stored(tagged), added)
	}
	if got := s.ReadObject(t, "lakegc-tagged", "v1.0", "old/x"); got.Status != http.StatusOK || string(got.Body) != string(tagged.Content) {
		t.Errorf("v1.0:old/x reads %d %q after the GC", got.Status, got.Body)
	}
	t.Logf("tagged: %s", summary)

	// rules show, then rules set --keep-tags=false: the tag no longer keeps c1.
	env := map[string]string{api.EnvEndpointURL: s.Endpoint, api.EnvAccessKeyID: s.AccessKeyID, api.EnvSecretAccessKey: s.SecretAccessKey, envBlockstorePath: s.BlockstorePath}
	rules := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), append([]string{"rules"}, args...), func(k string) string { return env[k] }, &stdout, &stderr); code != exitOK {
			t.Fatalf("rules %v: exit %d\n%s", args, code, stderr.String())
		}
		return stdout.String()
	}
	if out := rules("show", "--repo", "lakegc-tagged"); !strings.Contains(out, "7 days by default") || !strings.Contains(out, "tagged commits kept") {
		t.Errorf("rules show:\n%s", out)
	}
	rules("set", "--repo", "lakegc-tagged", "--keep-tags=false", "--keep-last", "main=3")
	if added, summary = gc("lakegc-tagged"); !stored(tagged) || added != 1 {
		t.Errorf("main's last 3 commits: X1 stored %v, %d added; want c1 kept by the count", stored(tagged), added)
	}
	t.Logf("tags off, main's last 3 commits: %s", summary)
	rules("set", "--repo", "lakegc-tagged", "--keep-tags=false", "--keep-last", "main=2")
	if out := rules("show", "--repo", "lakegc-tagged"); strings.Contains(out, "tagged commits kept") || !strings.Contains(out, `"main": last 2 commits`) {
		t.Errorf("rules show after set:\n%s", out)
	}
	added, summary = gc("lakegc-tagged")
	if stored(tagged) || added != 0 {
		t.Errorf("keep_tags false: X1 stored %v, %d added; want X1 swept", stored(tagged), added)
	}
	t.Logf("tags off, main's last 2 commits: %s", summary)

	// Without --json, the summary says which rules applied.
	var stdout, stderr bytes.Buffer
	env[envNow] = gcNow.Format(time.RFC3339)
	if code := run(t.Context(), []string{"gc", "--repo", "lakegc-tagged"}, func(k string) string { return env[k] }, &stdout, &stderr); code != exitOK ||
		!strings.Contains(stdout.String(), `rules: lakeFS's: 7 days by default; lakegc's: "main": last 2 commits`) {
		t.Errorf("gc summary (exit %d):\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestIntegrationTagOnDeletedBranch: on a real lakeFS, two tags on one
// 60-day-old commit of a branch since deleted — a commit no branch reaches,
// which lakeFS's rules expire as dangling — keep its objects through
// "lakegc gc --sweep"; the commit is added once.
func TestIntegrationTagOnDeletedBranch(t *testing.T) {
	s := startLocal(t)
	built := time.Now().UTC()
	const repo = "lakegc-tag-deleted"
	s.Do(t, http.MethodPost, "/repositories", nil, map[string]any{"name": repo, "storage_namespace": "local://" + repo, "default_branch": "main"}, http.StatusCreated, nil)
	s.Do(t, http.MethodPut, "/repositories/"+repo+"/settings/gc_rules", nil, map[string]any{"default_retention_days": 7, "branches": []any{}}, http.StatusNoContent, nil)
	upload := func(branch, path, content string) lakefstest.Object {
		got := s.Raw(t, http.MethodPost, "/repositories/"+repo+"/branches/"+branch+"/objects", url.Values{"path": {path}}, "application/octet-stream", strings.NewReader(content))
		if got.Status != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", path, got.Status, got.Body)
		}
		var st struct {
			PhysicalAddress string `json:"physical_address"`
		}
		if err := json.Unmarshal(got.Body, &st); err != nil {
			t.Fatal(err)
		}
		return lakefstest.Object{Name: path + "@" + branch, Path: path, Content: []byte(content), PhysicalAddress: st.PhysicalAddress}
	}
	commit := func(branch string, daysAgo int) string {
		var c struct {
			ID string `json:"id"`
		}
		s.Do(t, http.MethodPost, "/repositories/"+repo+"/branches/"+branch+"/commits", nil, map[string]any{
			"message": branch, "date": built.Add(-time.Duration(daysAgo) * 24 * time.Hour).Unix()}, http.StatusCreated, &c)
		return c.ID
	}
	upload("main", "base", "B")
	commit("main", 90)
	s.Do(t, http.MethodPost, "/repositories/"+repo+"/branches", nil, map[string]any{"name": "release", "source": "main"}, http.StatusCreated, nil)
	rel := upload("release", "rel/x", "R1 of "+repo)
	c := commit("release", 60)
	for _, tag := range []string{"v1.0", "v1.0-final"} {
		s.Do(t, http.MethodPost, "/repositories/"+repo+"/tags", nil, map[string]any{"id": tag, "ref": c}, http.StatusCreated, nil)
	}
	s.Do(t, http.MethodDelete, "/repositories/"+repo+"/branches/release", nil, nil, http.StatusNoContent, nil)
	rel.Ref = c
	if ok, known := s.Stored(t, rel); !known || !ok {
		t.Fatalf("R1 not stored before the GC (known %v)", known)
	}

	code, stdout, stderr := gcIn(t, s, s.BlockstorePath, repo, built.Add(3*24*time.Hour), "--sweep")
	if code != exitOK {
		t.Fatalf("gc: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Host struct {
			Rules *host.RulesStats `json:"rules"`
		} `json:"host"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Host.Rules == nil {
		t.Fatalf("report without rules (%v):\n%s", err, stdout)
	}
	if ok, _ := s.Stored(t, rel); !ok || rep.Host.Rules.Added != 1 {
		t.Errorf("tagged commit %s of a deleted branch: R1 stored %v, %d commits added; want R1 kept and the commit added once", c, ok, rep.Host.Rules.Added)
	}
	for _, tag := range []string{"v1.0", "v1.0-final"} {
		if got := s.ReadObject(t, repo, tag, "rel/x"); got.Status != http.StatusOK || string(got.Body) != string(rel.Content) {
			t.Errorf("%s:rel/x reads %d %q after the GC", tag, got.Status, got.Body)
		}
	}
	t.Logf("%s", rep.Host.Rules)
}
