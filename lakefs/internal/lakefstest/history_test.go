package lakefstest_test

import (
	"encoding/csv"
	"os"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// TestHistory proves BuildHistory's expectations against lakeFS itself: the
// commits its prepare-commits keeps are the history's kept commits, and the
// objects kept are exactly those that a kept commit or a branch (hidden ones
// included) still shows. Then it deletes exactly the garbage by hand, as a
// correct GC would, and checks VerifyAfterGC accepts the result.
func TestHistory(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "history")
	h.VerifyBeforeGC(t, s)

	if len(h.Kept()) == 0 || len(h.Garbage()) == 0 {
		t.Fatalf("history without kept objects or garbage: %+v", h.Objects)
	}
	for _, o := range h.Objects {
		t.Logf("%-26s kept=%-5v %-44s %s", o.Name, o.Kept, o.Why, o.PhysicalAddress)
	}

	c, err := api.New(s.Endpoint, s.AccessKeyID, s.SecretAccessKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.PrepareCommitsAsync(t.Context(), h.Repo)
	if err != nil {
		t.Fatal(err)
	}
	var keptIDs []string
	for _, name := range h.KeptCommits {
		keptIDs = append(keptIDs, h.Commits[name])
	}
	if s.BlockstorePath != "" {
		got := reportCommits(t, s, res.CommitsLocation)
		slices.Sort(keptIDs)
		if !slices.Equal(got, keptIDs) {
			t.Errorf("lakeFS keeps commits %v, the history says %v (%v of %v)", got, keptIDs, h.KeptCommits, h.Commits)
		}
	}

	visible := map[string]bool{}
	for _, id := range keptIDs {
		for _, a := range s.ListObjects(t, h.Repo, id) {
			visible[a] = true
		}
	}
	branches := s.ListBranches(t, h.Repo, true)
	if plain := s.ListBranches(t, h.Repo, false); slices.Contains(plain, "hidden-work") || !slices.Contains(branches, "hidden-work") {
		t.Errorf("branches %v, with show_hidden %v: hidden-work should show only with show_hidden", plain, branches)
	}
	for _, b := range branches {
		for _, a := range s.ListObjects(t, h.Repo, b) {
			visible[a] = true
		}
	}
	for _, o := range h.Objects {
		if visible[o.PhysicalAddress] != o.Kept {
			t.Errorf("%s: kept=%v (%s) but lakeFS shows it: %v", o.Name, o.Kept, o.Why, visible[o.PhysicalAddress])
		}
	}

	if s.BlockstorePath == "" {
		t.Skip("external lakeFS: cannot delete the garbage by hand")
	}
	for _, o := range h.Garbage() {
		p, err := s.LocalPath(o.PhysicalAddress)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	h.VerifyAfterGC(t, s)
	for _, o := range h.Garbage() {
		if o.Ref != "" {
			got := s.ReadObject(t, h.Repo, o.Ref, o.Path)
			t.Logf("reading deleted garbage %s: %d %s", o.Name, got.Status, got.Body)
		}
	}
}

func reportCommits(t *testing.T, s *lakefstest.Server, location string) []string {
	t.Helper()
	p, err := s.LocalPath(location)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows[1:] {
		ids = append(ids, r[0])
	}
	slices.Sort(ids)
	return ids
}
