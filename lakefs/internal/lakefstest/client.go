package lakefstest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// Do calls lakeFS's API at path (under /api/v1, segments escaped by the
// caller) with query and a JSON body (nil for none), fails the test unless the
// status is want, and decodes the answer into out (nil to ignore it).
func (s *Server) Do(t testing.TB, method, path string, query url.Values, body any, want int, out any) {
	t.Helper()
	var r io.Reader
	contentType := ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r, contentType = bytes.NewReader(b), "application/json"
	}
	got := s.Raw(t, method, path, query, contentType, r)
	if got.Status != want {
		t.Fatalf("lakefstest: %s %s: status %d, want %d: %s", method, path, got.Status, want, got.Body)
	}
	if out != nil {
		if err := json.Unmarshal(got.Body, out); err != nil {
			t.Fatalf("lakefstest: %s %s: decode %q: %v", method, path, got.Body, err)
		}
	}
}

// Response is an answer of lakeFS as Raw returns it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Raw sends a request with the server's key pair and returns the answer
// whatever its status; a transport error fails the test.
func (s *Server) Raw(t testing.TB, method, path string, query url.Values, contentType string, body io.Reader) Response {
	t.Helper()
	u := s.Endpoint + "/api/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if s.AccessKeyID != "" {
		req.SetBasicAuth(s.AccessKeyID, s.SecretAccessKey)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("lakefstest: %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("lakefstest: %s %s: read answer: %v", method, path, err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

func decode(t testing.TB, b []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("lakefstest: decode %q: %v", b, err)
	}
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
