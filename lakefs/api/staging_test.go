package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestListBranchesPages(t *testing.T) {
	const path = "/api/v1/repositories/r/branches"
	s, srv := newScript(t, map[string][]answer{"GET " + path: {
		{status: http.StatusOK, body: `{"pagination":{"has_more":true,"next_offset":"b","results":2,"max_per_page":2},"results":[{"id":"a","commit_id":"c1"},{"id":"b","commit_id":"c2"}]}`},
		{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":"","results":1,"max_per_page":2},"results":[{"id":"hidden-work","commit_id":"c3"}]}`},
	}})
	c, _ := testClient(t, srv)
	var got []string
	for b, err := range c.ListBranches(t.Context(), "r", true) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	if !slices.Equal(got, []string{"a", "b", "hidden-work"}) {
		t.Errorf("branches %q", got)
	}
	reqs := s.requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].query, "show_hidden=true") || !strings.Contains(reqs[1].query, "after=b") {
		t.Errorf("requests %+v: want show_hidden, then after=b", reqs)
	}
}

// A listing that breaks the API's promises ends with an error, never with a
// silently shorter list.
func TestListingsRefuseMalformedPages(t *testing.T) {
	for name, body := range map[string]string{
		"no pagination":             `{"results":[]}`,
		"no results":                `{"pagination":{"has_more":false}}`,
		"has_more without offset":   `{"pagination":{"has_more":true,"next_offset":""},"results":[]}`,
		"not JSON":                  `<html>`,
		"entry without a path":      `{"pagination":{"has_more":false},"results":[{"type":"added"}]}`,
		"results not a list":        `{"pagination":{"has_more":false},"results":{}}`,
		"has_more missing":          `{"pagination":{"next_offset":"x"},"results":[]}`,
		"data after the JSON value": `{"pagination":{"has_more":false},"results":[]}{}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r/branches/main/diff": {{status: http.StatusOK, body: body}}})
			c, _ := testClient(t, srv)
			var err error
			for _, e := range c.BranchChanges(t.Context(), "r", "main") {
				if e != nil {
					err = e
				}
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
}

func TestBranchChangesAndStat(t *testing.T) {
	_, srv := newScript(t, map[string][]answer{
		"GET /api/v1/repositories/r/branches/feat-x/diff": {{status: http.StatusOK,
			body: `{"pagination":{"has_more":false,"next_offset":""},"results":[{"type":"added","path":"a","path_type":"object","size_bytes":3},{"type":"removed","path":"b","path_type":"object"}]}`}},
		"GET /api/v1/repositories/r/refs/feat-x/objects/stat": {
			{status: http.StatusOK, body: `{"path":"a","path_type":"object","physical_address":"local:///bs/r/data/g1/x,sig","checksum":"c","mtime":1}`},
			{status: http.StatusNotFound, body: `{"message":"not found"}`},
		},
	})
	c, _ := testClient(t, srv)
	var got []Change
	for ch, err := range c.BranchChanges(t.Context(), "r", "feat-x") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	if want := []Change{{"added", "a", "object"}, {"removed", "b", "object"}}; !slices.Equal(got, want) {
		t.Errorf("changes %+v, want %+v", got, want)
	}
	st, err := c.StatObject(t.Context(), "r", "feat-x", "a")
	if err != nil || st.PhysicalAddress != "local:///bs/r/data/g1/x,sig" {
		t.Errorf("StatObject = %+v, %v", st, err)
	}
	if _, err := c.StatObject(t.Context(), "r", "feat-x", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("stat of a missing object: %v, want ErrNotFound", err)
	}
}
