package api_test

import (
	"encoding/csv"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// TestIntegration runs every call of the client against a real lakeFS (see
// lakefstest.Start for how to name one; without one it skips) over the
// history lakefstest.BuildHistory makes.
func TestIntegration(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "api-it")
	ctx := t.Context()
	c, err := api.New(s.Endpoint, s.AccessKeyID, s.SecretAccessKey)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("repository", func(t *testing.T) {
		repo, err := c.GetRepository(ctx, h.Repo)
		if err != nil {
			t.Fatal(err)
		}
		if repo.ID != h.Repo || repo.StorageNamespace != h.Namespace || repo.DefaultBranch != "main" || repo.CreationDate.IsZero() {
			t.Errorf("repository %+v, want namespace %q", repo, h.Namespace)
		}
		if _, err := c.GetRepository(ctx, "no-such-repo"); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("missing repository: %v, want ErrNotFound", err)
		}
	})

	t.Run("auth", func(t *testing.T) {
		bad, err := api.New(s.Endpoint, s.AccessKeyID, "wrong-secret", api.WithMaxAttempts(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bad.GetRepository(ctx, h.Repo); !errors.Is(err, api.ErrUnauthorized) {
			t.Errorf("wrong secret: %v, want ErrUnauthorized", err)
		}
	})

	t.Run("rules", func(t *testing.T) {
		rules, err := c.GetGCRules(ctx, h.Repo)
		if err != nil {
			t.Fatal(err)
		}
		built := &api.GCRules{DefaultRetentionDays: lakefstest.DefaultRetentionDays,
			Branches: []api.BranchRule{{BranchID: "feature", RetentionDays: lakefstest.FeatureRetentionDays}}}
		if !reflect.DeepEqual(rules, built) {
			t.Errorf("rules %+v, want %+v", rules, built)
		}
		other := api.GCRules{DefaultRetentionDays: 10, Branches: []api.BranchRule{{BranchID: "a", RetentionDays: 1}, {BranchID: "main", RetentionDays: 30}}}
		if err := c.SetGCRules(ctx, h.Repo, other); err != nil {
			t.Fatal(err)
		}
		if got, err := c.GetGCRules(ctx, h.Repo); err != nil || !reflect.DeepEqual(*got, other) {
			t.Errorf("after set: %+v, %v; want %+v", got, err, other)
		}
		if err := c.SetGCRules(ctx, h.Repo, api.GCRules{DefaultRetentionDays: 5}); err != nil {
			t.Fatal(err)
		}
		if got, err := c.GetGCRules(ctx, h.Repo); err != nil || !reflect.DeepEqual(*got, api.GCRules{DefaultRetentionDays: 5}) {
			t.Errorf(`no branch rules ("branches": null): %+v, %v`, got, err)
		}
		if err := c.DeleteGCRules(ctx, h.Repo); err != nil {
			t.Fatal(err)
		}
		if got, err := c.GetGCRules(ctx, h.Repo); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("after delete: %+v, %v; want ErrNotFound", got, err)
		}
		if err := c.SetGCRules(ctx, h.Repo, *built); err != nil {
			t.Fatal(err)
		}
	})

	wantKept := map[string]bool{}
	for _, name := range h.KeptCommits {
		wantKept[h.Commits[name]] = true
	}

	t.Run("prepare commits", func(t *testing.T) {
		res, err := c.PrepareCommits(ctx, h.Repo)
		if err != nil {
			t.Fatal(err)
		}
		// lakeFS's local blockstore cannot pre-sign: it answers 400 with the
		// error and the result; other blockstores answer 201.
		if local := strings.HasPrefix(h.Namespace, "local://"); local != (res.Warning != "") {
			t.Errorf("local namespace %v, warning %q", local, res.Warning)
		}
		checkCommitsReport(t, s, h, res, wantKept)
	})

	t.Run("prepare commits async", func(t *testing.T) {
		res, err := c.PrepareCommitsAsync(ctx, h.Repo)
		if err != nil {
			t.Fatal(err)
		}
		if res.Warning != "" {
			t.Errorf("async result has warning %q", res.Warning)
		}
		checkCommitsReport(t, s, h, res, wantKept)
	})

	t.Run("prepare uncommitted", func(t *testing.T) {
		exp, err := c.PrepareAllUncommitted(ctx, h.Repo)
		if err != nil {
			t.Fatal(err)
		}
		if exp.RunID == "" || exp.Files == 0 || exp.Calls < exp.Files {
			t.Fatalf("export %+v: the history has staged objects", exp)
		}
		key, err := api.RelativeKey(h.AddressNamespace, exp.Location)
		if err != nil {
			t.Fatal(err)
		}
		if want := "_lakefs/retention/gc/uncommitted/" + exp.RunID + "/uncommitted"; strings.TrimSuffix(key, "/") != want {
			t.Errorf("export folder %q, want %q", key, want)
		}
		t.Logf("uncommitted export %+v", exp)
		if s.BlockstorePath == "" {
			return
		}
		dir, err := s.LocalPath(exp.Location)
		if err != nil {
			t.Fatal(err)
		}
		files, err := os.ReadDir(dir)
		if err != nil || len(files) != exp.Files {
			t.Errorf("export folder %s holds %d files (%v), want %d", dir, len(files), err, exp.Files)
		}
	})

	t.Run("read-only repository", func(t *testing.T) {
		got := s.Raw(t, http.MethodPost, "/repositories", nil, "application/json", strings.NewReader(
			`{"name":"`+h.Repo+`-ro","storage_namespace":"`+h.Namespace+`-ro","read_only":true}`))
		if got.Status != http.StatusCreated {
			t.Skipf("cannot create a read-only repository here: %d %s", got.Status, got.Body)
		}
		if _, err := c.PrepareUncommitted(ctx, h.Repo+"-ro", ""); !errors.Is(err, api.ErrForbidden) {
			t.Errorf("prepare uncommitted of a read-only repository: %v, want ErrForbidden", err)
		}
	})
}

// checkCommitsReport reads the report lakeFS wrote (on a local blockstore)
// and checks it lists exactly the commits the history says lakeFS keeps.
func checkCommitsReport(t *testing.T, s *lakefstest.Server, h *lakefstest.History, res *api.PrepareCommitsResult, wantKept map[string]bool) {
	t.Helper()
	namespace, err := api.ResolveNamespace(h.Namespace, res)
	if err != nil {
		t.Fatal(err)
	}
	if namespace != h.AddressNamespace {
		t.Errorf("ResolveNamespace = %q, want %q", namespace, h.AddressNamespace)
	}
	key, err := api.RelativeKey(namespace, res.CommitsLocation)
	if err != nil {
		t.Fatal(err)
	}
	if want := "_lakefs/retention/gc/commits/run_id=" + res.RunID + "/commits.csv"; key != want {
		t.Errorf("report key %q, want %q", key, want)
	}
	if _, err := api.RelativeKey(namespace, res.AddressesLocation); err != nil {
		t.Error(err)
	}
	t.Logf("prepare commits %+v", res)
	if s.BlockstorePath == "" {
		return
	}
	p, err := s.LocalPath(res.CommitsLocation)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatalf("the report at %s: %v", filepath.Base(p), err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"commit_id", "expired", "metarange_id"}) {
		t.Fatalf("report header %v", rows)
	}
	got := map[string]bool{}
	for _, r := range rows[1:] {
		got[r[0]] = true
		if r[1] != "false" || r[2] == "" {
			t.Errorf("report row %v", r)
		}
	}
	if !reflect.DeepEqual(got, wantKept) {
		t.Errorf("report lists %v, want %v", got, wantKept)
	}
}
