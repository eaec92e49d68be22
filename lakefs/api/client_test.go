package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewEndpoint(t *testing.T) {
	for _, tc := range []struct {
		endpoint, want string
	}{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000/api/v1"},
		{"http://127.0.0.1:8000/", "http://127.0.0.1:8000/api/v1"},
		{"https://lakefs.example.com/api/v1", "https://lakefs.example.com/api/v1"},
		{"https://lakefs.example.com/api/v1/", "https://lakefs.example.com/api/v1"},
		{"https://proxy.example.com/lakefs/api/v1", "https://proxy.example.com/lakefs/api/v1"},
	} {
		c, err := New(tc.endpoint, "k", "s")
		if err != nil {
			t.Errorf("New(%q): %v", tc.endpoint, err)
			continue
		}
		if got := c.Endpoint(); got != tc.want {
			t.Errorf("New(%q).Endpoint() = %q, want %q", tc.endpoint, got, tc.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8000", "ftp://h/", "http://", "http://u:p@h/", "http://h/?x=1", "http://h/#f", "http://[::1"} {
		if _, err := New(bad, "k", "s"); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("New(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
	for _, keys := range [][2]string{{"", "s"}, {"k", ""}} {
		if _, err := New("http://h", keys[0], keys[1]); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("New with keys %q = %v, want ErrInvalidInput", keys, err)
		}
	}
}

func TestOptions(t *testing.T) {
	c, err := New("http://h", "k", "s", WithTimeout(0), WithPrepareTimeout(0), WithPollInterval(0),
		WithMaxAttempts(0), WithBackoff(0, 0), WithUserAgent(""))
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != DefaultTimeout || c.prepTimeout != DefaultPrepareTimeout || c.pollInterval != DefaultPollInterval ||
		c.maxAttempts != DefaultMaxAttempts || c.minBackoff != DefaultMinBackoff || c.maxBackoff != DefaultMaxBackoff ||
		c.userAgent != DefaultUserAgent {
		t.Errorf("zero options did not give the defaults: %+v", c)
	}
	for name, opt := range map[string]Option{
		"timeout":         WithTimeout(-1),
		"prepare timeout": WithPrepareTimeout(-1),
		"poll":            WithPollInterval(-time.Second),
		"attempts":        WithMaxAttempts(-1),
		"backoff min":     WithBackoff(-1, time.Second),
		"backoff max":     WithBackoff(time.Second, -1),
		"backoff order":   WithBackoff(2*time.Second, time.Second),
		"http client":     WithHTTPClient(nil),
	} {
		if _, err := New("http://h", "k", "s", opt); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	// A start above the default cap raises the cap rather than failing.
	if c, err := New("http://h", "k", "s", WithBackoff(time.Minute, 0)); err != nil || c.maxBackoff != time.Minute {
		t.Errorf("WithBackoff(1m, 0): %v, cap %v", err, c.maxBackoff)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvEndpointURL, "http://127.0.0.1:8000")
	t.Setenv(EnvAccessKeyID, "AKIAJEXAMPLE")
	t.Setenv(EnvSecretAccessKey, "secret")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != "http://127.0.0.1:8000/api/v1" || c.accessKeyID != "AKIAJEXAMPLE" || c.secretKey != "secret" {
		t.Errorf("FromEnv: %q %q %q", c.Endpoint(), c.accessKeyID, c.secretKey)
	}
	t.Setenv(EnvSecretAccessKey, "")
	t.Setenv(EnvEndpointURL, "")
	_, err = FromEnv()
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), EnvSecretAccessKey) || !strings.Contains(err.Error(), EnvEndpointURL) {
		t.Errorf("FromEnv without endpoint and secret: %v", err)
	}
}

func TestRequestShape(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/rec": json200(recordedRepository)})
	c, _ := testClient(t, srv, WithUserAgent("lakegc-test"))
	repo, err := c.GetRepository(t.Context(), "rec")
	if err != nil {
		t.Fatal(err)
	}
	want := Repository{ID: "rec", StorageNamespace: "local://rec", DefaultBranch: "main",
		CreationDate: time.Unix(1796047085, 0).UTC()}
	if *repo != want {
		t.Errorf("GetRepository = %+v, want %+v", *repo, want)
	}
	got := s.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	if r := got[0]; !r.authOK || r.user != "AKIAJTESTKEY" || r.pass != "test-secret" || r.agent != "lakegc-test" {
		t.Errorf("request %+v: want basic auth with the key pair and the user agent", r)
	}
}

// TestStatusErrors: each status lakeFS may answer maps to its sentinel, with
// lakeFS's message, and only the retryable ones are retried.
func TestStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		want     error
		attempts int
	}{
		{http.StatusUnauthorized, recordedUnauth, ErrUnauthorized, 1},
		{http.StatusForbidden, recordedForbidden, ErrForbidden, 1},
		{http.StatusNotFound, recordedNotFound, ErrNotFound, 1},
		{http.StatusNotFound, recordedNoRepo, ErrNotFound, 1},
		{http.StatusBadRequest, recordedBadToken, ErrRequest, 1},
		{http.StatusBadRequest, `{"message":"bad"}`, ErrRequest, 1},
		{http.StatusConflict, `{"message":"conflict"}`, ErrRequest, 1},
		{http.StatusTooManyRequests, `{"message":"slow down"}`, ErrTooManyRequests, 3},
		{http.StatusInternalServerError, `{"message":"boom"}`, ErrServer, 3},
		{http.StatusServiceUnavailable, "<html>upstream down</html>", ErrServer, 3},
		{http.StatusNotImplemented, `{"message":"Not Implemented"}`, ErrServer, 1},
		{http.StatusAccepted, `{}`, ErrMalformed, 1},
		{http.StatusFound, ``, ErrMalformed, 1},
	} {
		s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r": {{status: tc.status, body: tc.body}}})
		c, _ := testClient(t, srv, WithMaxAttempts(3))
		_, err := c.GetRepository(t.Context(), "r")
		if !errors.Is(err, tc.want) {
			t.Errorf("status %d: %v, want %v", tc.status, err, tc.want)
			continue
		}
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != tc.status || se.Attempts != tc.attempts {
			t.Errorf("status %d: %#v, want a StatusError after %d attempts", tc.status, err, tc.attempts)
		}
		if n := len(s.requests()); n != tc.attempts {
			t.Errorf("status %d: %d requests, want %d", tc.status, n, tc.attempts)
		}
		if tc.body != "" && strings.HasPrefix(tc.body, `{"message"`) && !strings.Contains(err.Error(), strings.Trim(tc.body[len(`{"message":"`):], "\"}\n")) {
			t.Errorf("status %d: %q lacks lakeFS's message", tc.status, err)
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/rec": {
		errAnswer(http.StatusServiceUnavailable, "Throughput exceeded. Slow down and retry"),
		{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "7"}},
		{status: http.StatusOK, body: recordedRepository},
	}})
	c, waits := testClient(t, srv, WithBackoff(100*time.Millisecond, 10*time.Second))
	if _, err := c.GetRepository(t.Context(), "rec"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if len(*waits) != 2 {
		t.Fatalf("waits %v, want 2", *waits)
	}
	if w := (*waits)[0]; w < 50*time.Millisecond || w > 100*time.Millisecond {
		t.Errorf("first backoff %v, want within [50ms, 100ms]", w)
	}
	if w := (*waits)[1]; w != 7*time.Second {
		t.Errorf("wait after Retry-After: 7 = %v, want 7s", w)
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	c, err := New("http://h", "k", "s", WithBackoff(time.Second, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 60: 5 * time.Second} {
		for range 50 {
			if got := c.backoff(attempt); got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, got, want/2, want)
			}
		}
	}
}

// TestRetryAfterBeyondCap: a server asking for a longer pause than the
// client waits gets no retry, and the error says how long it asked for.
func TestRetryAfterBeyondCap(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r": {
		{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "120"}, body: `{"message":"slow down"}`},
	}})
	c, waits := testClient(t, srv, WithBackoff(time.Millisecond, time.Minute))
	_, err := c.GetRepository(t.Context(), "r")
	var se *StatusError
	if !errors.As(err, &se) || !errors.Is(err, ErrTooManyRequests) || se.RetryAfter != 2*time.Minute {
		t.Fatalf("error %v, want ErrTooManyRequests with RetryAfter 2m", err)
	}
	if len(s.requests()) != 1 || len(*waits) != 0 {
		t.Errorf("%d requests, waits %v: want one request, no wait", len(s.requests()), *waits)
	}
}

// TestPrepareCommitsRetries: the prepare-commits calls are repeated after a
// 429, never after a 5xx or a lost answer, which may hide a completed run.
func TestPrepareCommitsRetries(t *testing.T) {
	paths := map[string]func(*Client) error{
		"POST /api/v1/repositories/r/gc/prepare_commits": func(c *Client) error {
			_, err := c.PrepareCommits(t.Context(), "r")
			return err
		},
		"POST /api/v1/repositories/r/gc/prepare_commits/async": func(c *Client) error {
			_, err := c.StartPrepareCommits(t.Context(), "r")
			return err
		},
	}
	for path, call := range paths {
		for _, tc := range []struct {
			name     string
			first    answer
			requests int
			want     error
		}{
			{"429", errAnswer(http.StatusTooManyRequests, "Too many attempts, try again later"), 2, nil},
			{"500", errAnswer(http.StatusInternalServerError, "boom"), 1, ErrServer},
			{"503", errAnswer(http.StatusServiceUnavailable, "Throughput exceeded. Slow down and retry"), 1, ErrServer},
			{"hang-up", answer{hangUp: true}, 1, ErrTransport},
		} {
			ok := answer{status: http.StatusCreated, body: recordedPrepare}
			if strings.HasSuffix(path, "async") {
				ok = answer{status: http.StatusAccepted, body: recordedTask}
			}
			s, srv := newScript(t, map[string][]answer{path: {tc.first, ok}})
			c, _ := testClient(t, srv)
			err := call(c)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("%s after %s: %v, want %v", path, tc.name, err, tc.want)
			}
			if n := len(s.requests()); n != tc.requests {
				t.Errorf("%s after %s: %d requests, want %d", path, tc.name, n, tc.requests)
			}
		}
	}
}

// TestIdempotentRetriesLostAnswers: reads and the uncommitted export are
// repeated after a connection lost mid-request.
func TestIdempotentRetriesLostAnswers(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{
		"POST /api/v1/repositories/r/gc/prepare_uncommited": {{hangUp: true}, {status: http.StatusCreated, body: recordedUncomm}},
	})
	c, _ := testClient(t, srv)
	p, err := c.PrepareUncommitted(t.Context(), "r", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.RunID != "ft0o3uhksdud2e090ibg" || len(s.requests()) != 2 {
		t.Errorf("page %+v after %d requests", p, len(s.requests()))
	}
}

// TestDialErrorsRetried: a connection never made is retried even for
// prepare commits, and ends in ErrTransport.
func TestDialErrorsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	c, err := New("http://"+addr, "k", "s", WithMaxAttempts(3))
	if err != nil {
		t.Fatal(err)
	}
	var waits int
	c.sleep = func(context.Context, time.Duration) error { waits++; return nil }
	_, err = c.PrepareCommits(t.Context(), "r")
	if !errors.Is(err, ErrTransport) || waits != 2 {
		t.Errorf("PrepareCommits to a closed port: %v after %d waits, want ErrTransport after 2", err, waits)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("%v does not keep the dial error", err)
	}
}

func TestTimeout(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r": {{delay: time.Second, status: http.StatusOK, body: recordedRepository}}})
	c, _ := testClient(t, srv, WithTimeout(20*time.Millisecond), WithMaxAttempts(2))
	_, err := c.GetRepository(t.Context(), "r")
	if !errors.Is(err, ErrTransport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow answer: %v, want ErrTransport wrapping DeadlineExceeded", err)
	}
	if n := len(s.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestContextCanceledStopsRetries(t *testing.T) {
	s, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r": {errAnswer(http.StatusServiceUnavailable, "down")}})
	c, err := New(srv.URL, "k", "s", WithBackoff(time.Hour, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = c.GetRepository(ctx, "r")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("canceled wait: %v", err)
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOversizedAnswer(t *testing.T) {
	big := `{"id":"` + strings.Repeat("x", maxResponseBytes) + `"}`
	_, srv := newScript(t, map[string][]answer{"GET /api/v1/repositories/r": json200(big)})
	c, _ := testClient(t, srv)
	if _, err := c.GetRepository(t.Context(), "r"); !errors.Is(err, ErrMalformed) || !errors.Is(err, errTooLarge) {
		t.Errorf("oversized answer: %v, want ErrMalformed for its size", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 5 ", 5 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"99999999999999999999999", maxRetryAfter * time.Second, true},
		{"Sun, 30 Nov 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Sun, 30 Nov 2025 11:00:00 GMT", 0, true},
		{"tomorrow", 0, false},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestInvalidInputSendsNothing(t *testing.T) {
	s, srv := newScript(t, nil)
	c, _ := testClient(t, srv)
	ctx := t.Context()
	for name, err := range map[string]error{
		"repository":    func() error { _, err := c.GetRepository(ctx, ""); return err }(),
		"rules":         func() error { _, err := c.GetGCRules(ctx, ""); return err }(),
		"set rules":     c.SetGCRules(ctx, "r", GCRules{DefaultRetentionDays: -1}),
		"set dup rules": c.SetGCRules(ctx, "r", GCRules{Branches: []BranchRule{{"a", 1}, {"a", 2}}}),
		"delete rules":  c.DeleteGCRules(ctx, ""),
		"prepare":       func() error { _, err := c.PrepareCommits(ctx, ""); return err }(),
		"start":         func() error { _, err := c.StartPrepareCommits(ctx, ""); return err }(),
		"status":        func() error { _, err := c.PrepareCommitsStatus(ctx, "r", ""); return err }(),
		"uncommitted":   func() error { _, err := c.PrepareUncommitted(ctx, "", ""); return err }(),
	} {
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestDecodeRepositoryRefuses(t *testing.T) {
	for _, body := range []string{
		`{"creation_date":1796047085,"default_branch":"main","id":"rec"}`,
		`{"creation_date":1796047085,"default_branch":"main","storage_namespace":"local://rec"}`,
		`{"creation_date":1796047085,"id":"rec","storage_namespace":"local://rec"}`,
		`{"default_branch":"main","id":"rec","storage_namespace":"local://rec"}`,
		`{"creation_date":"x","default_branch":"main","id":"rec","storage_namespace":"local://rec"}`,
		strings.TrimSpace(recordedRepository) + `{}`,
		`[]`, ``,
	} {
		if r, err := decodeRepository([]byte(body)); err == nil {
			t.Errorf("decodeRepository(%s) = %+v, want an error", body, r)
		}
	}
}
