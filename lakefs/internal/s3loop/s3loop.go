// Package s3loop runs an S3-protocol server on loopback for the tests of
// this module, and records how each request reached it.
//
// [Start] serves gofakes3's in-memory backend (the server package
// internal/s3test runs for the examples and system tests) over HTTP on
// 127.0.0.1 and creates the buckets asked for. Buckets are addressed
// path-style, as a server on 127.0.0.1 has no per-bucket host names. Every
// request is recorded ([Server.Requests]) with its method, path, the access
// key ID its signature names and whether it carried a session token, so a
// test can check which settings a client was built from. The server checks
// the signatures' shape, not the secrets, nor the requests' clock skew.
// Objects are stamped with the current time, or the time [Server.PutAt] is
// given. Everything is stopped by the test's cleanup.
package s3loop

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// OwnKeyID is the access key ID of the server's own client.
const OwnKeyID = "s3loop-test-hands"

// Server is an S3-protocol server on loopback.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string
	// Client is a path-style client of the server, signed with OwnKeyID:
	// the test's hands, for writing and checking objects.
	Client *s3.Client

	mu    sync.Mutex
	seen  []Request
	clock clock
}

// clock is the time the server stamps objects with: now, unless set.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return time.Now()
	}
	return c.at
}

func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *clock) set(at time.Time) {
	c.mu.Lock()
	c.at = at
	c.mu.Unlock()
}

// Request is one request the server answered.
type Request struct {
	Method, Path string
	// KeyID is the access key ID of the request's signature ("" unsigned).
	KeyID string
	// Token says the request carried a session token.
	Token bool
}

// Start starts a server with the given buckets, and stops it when the test
// ends. The buckets' creation is not recorded.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	s := &Server{}
	fake := gofakes3.New(s3mem.New(s3mem.WithTimeSource(&s.clock)), gofakes3.WithoutVersioning(),
		// The clock stamps both the listings' and the HEADs' times; the
		// check of the requests' clock skew against it is off, as PutAt's
		// times are far from its request's.
		gofakes3.WithTimeSource(&s.clock), gofakes3.WithTimeSkewLimit(0)).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Authorization: AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/s3/aws4_request, …
		// or, pre-signed, X-Amz-Credential=<key id>/… in the query.
		cred := r.URL.Query().Get("X-Amz-Credential")
		if _, c, ok := strings.Cut(r.Header.Get("Authorization"), "Credential="); ok {
			cred = c
		}
		keyID, _, _ := strings.Cut(cred, "/")
		token := r.Header.Get("X-Amz-Security-Token") != "" || r.URL.Query().Get("X-Amz-Security-Token") != ""
		s.mu.Lock()
		s.seen = append(s.seen, Request{Method: r.Method, Path: r.URL.Path, KeyID: keyID, Token: token})
		s.mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.Client = s3.New(s3.Options{BaseEndpoint: aws.String(srv.URL), UsePathStyle: true, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(OwnKeyID, "s3loop-secret", ""),
		// gofakes3 sends no checksums; the SDK would warn on every read.
		DisableLogOutputChecksumValidationSkipped: true})
	for _, b := range buckets {
		if _, err := s.Client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatalf("s3loop: create bucket %q: %v", b, err)
		}
	}
	s.Reset()
	return s
}

// Reset forgets the requests recorded so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.seen = nil
	s.mu.Unlock()
}

// Requests returns the requests recorded since the start or the last Reset,
// in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Put writes an object with the server's own client.
func (s *Server) Put(t testing.TB, bucket, key, body string) {
	t.Helper()
	if _, err := s.Client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
		t.Fatalf("s3loop: put %s/%s: %v", bucket, key, err)
	}
}

// PutAt writes an object with the server's own client, stamped as last
// modified at at (second precision, as S3's). Not safe to call beside other
// writes to the server.
func (s *Server) PutAt(t testing.TB, bucket, key, body string, at time.Time) {
	t.Helper()
	s.clock.set(at)
	defer s.clock.set(time.Time{})
	s.Put(t, bucket, key, body)
}

// Exists reports whether an object exists, asked with the server's own
// client. A failure other than a 404 fails the test: it is no proof that
// the object is gone.
func (s *Server) Exists(t testing.TB, bucket, key string) bool {
	t.Helper()
	_, err := s.Client.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var status interface{ HTTPStatusCode() int }
	switch {
	case err == nil:
		return true
	case errors.As(err, &status) && status.HTTPStatusCode() == http.StatusNotFound:
		return false
	}
	t.Fatalf("s3loop: head %s/%s: %v", bucket, key, err)
	return false
}
