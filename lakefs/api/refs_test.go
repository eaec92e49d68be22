package api

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestListTagsAndBranchHeads(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{
		"GET /api/v1/repositories/r/tags": {
			{status: http.StatusOK, body: `{"pagination":{"has_more":true,"next_offset":"v1","results":1,"max_per_page":1000},"results":[{"id":"v1","commit_id":"c1"}]}`},
			{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":"","results":1,"max_per_page":1000},"results":[{"id":"v2","commit_id":"c2"}]}`},
		},
		"GET /api/v1/repositories/r/branches": {
			{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":"","results":1,"max_per_page":1000},"results":[{"id":"main","commit_id":"c3"}]}`},
			{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":"","results":1,"max_per_page":1000},"results":[{"id":"main"}]}`},
		},
	})
	c, _ := testClient(t, srv)
	var tags []Ref
	for r, err := range c.ListTags(t.Context(), "r") {
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, r)
	}
	if want := []Ref{{"v1", "c1"}, {"v2", "c2"}}; !reflect.DeepEqual(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
	var heads []Ref
	for r, err := range c.ListBranchHeads(t.Context(), "r", true) {
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, r)
	}
	if want := []Ref{{"main", "c3"}}; !reflect.DeepEqual(heads, want) {
		t.Errorf("heads %v, want %v", heads, want)
	}
	if q := s.requests()[len(s.requests())-1].query; !strings.Contains(q, "show_hidden=true") {
		t.Errorf("query %q without show_hidden", q)
	}
	for _, err := range c.ListBranchHeads(t.Context(), "r", true) {
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "commit_id") {
			t.Errorf("a branch without its commit: %v", err)
		}
	}
}

func TestGetCommit(t *testing.T) {
	const path = "GET /api/v1/repositories/r/commits/c2"
	_, srv := newScript(t, map[string][]answer{path: {
		{status: http.StatusOK, body: `{"id":"c2","parents":["c1","m"],"committer":"x","message":"m","creation_date":1700000000,"meta_range_id":"mr","version":1}`},
		{status: http.StatusOK, body: `{"id":"c2","parents":["c1","m"],"committer":"x","message":"m","creation_date":1700000000,"meta_range_id":"mr"}`},
		{status: http.StatusOK, body: `{"id":"c3","parents":[],"creation_date":1,"meta_range_id":""}`},
		{status: http.StatusNotFound, body: recordedNotFound},
	}})
	c, _ := testClient(t, srv)
	got, err := c.GetCommit(t.Context(), "r", "c2")
	want := &Commit{ID: "c2", Parents: []string{"c1", "m"}, CreationDate: time.Unix(1700000000, 0).UTC(), MetaRangeID: "mr", Version: 1}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("GetCommit = %+v, %v; want %+v", got, err, want)
	}
	if _, err := c.GetCommit(t.Context(), "r", "c2"); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "version") {
		t.Errorf("a merge without a version: %v", err)
	}
	if _, err := c.GetCommit(t.Context(), "r", "c2"); !errors.Is(err, ErrMalformed) {
		t.Errorf("another commit: %v", err)
	}
	if _, err := c.GetCommit(t.Context(), "r", "c2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func FuzzDecodeCommit(f *testing.F) {
	f.Add([]byte(`{"id":"c2","parents":["c1","m"],"committer":"x","message":"m","creation_date":1700000000,"meta_range_id":"mr","version":1}`))
	f.Add([]byte(`{"id":"c3","parents":[],"creation_date":-1,"meta_range_id":""}`))
	f.Add([]byte(`{"id":"c","parents":["a","b"],"creation_date":1,"meta_range_id":"x","version":7}`))
	f.Add([]byte(`{"id":"c","parents":[""],"creation_date":1,"meta_range_id":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCommit(b)
		if err != nil {
			return
		}
		if c.ID == "" || c.Version < 0 || c.Version > 1 || c.Parents == nil {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func FuzzDecodeRef(f *testing.F) {
	f.Add([]byte(`{"id":"v1","commit_id":"c1"}`))
	f.Add([]byte(`{"id":"v1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRef(b)
		if err == nil && (r.ID == "" || r.CommitID == "") {
			t.Fatalf("accepted %+v", r)
		}
	})
}

// A tag listing whose second page fails or breaks the API's promises ends
// with an error after the first page's tags, never with fewer tags and no
// error: a tag lost is a tagged commit's objects deleted.
func TestListTagsFailedPage(t *testing.T) {
	const first = `{"pagination":{"has_more":true,"next_offset":"v1","results":1,"max_per_page":1},"results":[{"id":"v1","commit_id":"c1"}]}`
	for name, tc := range map[string]struct {
		second answer
		want   error
	}{
		"server error":            {answer{status: http.StatusInternalServerError, body: `{"message":"down"}`}, ErrServer},
		"connection dropped":      {answer{hangUp: true}, ErrTransport},
		"truncated body":          {answer{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":""},"results":[{"id":"v2","commit_id":"c2"}`}, ErrMalformed},
		"empty body":              {answer{status: http.StatusOK}, ErrMalformed},
		"has_more, same offset":   {answer{status: http.StatusOK, body: `{"pagination":{"has_more":true,"next_offset":"v1"},"results":[]}`}, ErrMalformed},
		"has_more without offset": {answer{status: http.StatusOK, body: `{"pagination":{"has_more":true,"next_offset":""},"results":[{"id":"v2","commit_id":"c2"}]}`}, ErrMalformed},
		"results missing":         {answer{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":""}}`}, ErrMalformed},
		"tag without commit":      {answer{status: http.StatusOK, body: `{"pagination":{"has_more":false,"next_offset":""},"results":[{"id":"v2"}]}`}, ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r/tags": {{status: http.StatusOK, body: first}, tc.second}})
			c, _ := testClient(t, srv, WithMaxAttempts(1))
			var tags []Ref
			var err error
			for r, e := range c.ListTags(t.Context(), "r") {
				if e != nil {
					err = e
					break
				}
				tags = append(tags, r)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if want := []Ref{{"v1", "c1"}}; !reflect.DeepEqual(tags, want) {
				t.Errorf("tags %v before the error, want %v", tags, want)
			}
			// Go's transport may resend a GET whose reused connection
			// dropped: every request after the first asks for page two.
			reqs := s.requests()
			if len(reqs) < 2 || strings.Contains(reqs[0].query, "after=") {
				t.Errorf("requests %+v: want the first page, then the second", reqs)
			}
			for _, r := range reqs[min(1, len(reqs)):] {
				if !strings.Contains(r.query, "after=v1") {
					t.Errorf("request %+v: want the second page, after v1", r)
				}
			}
		})
	}
}
