package gcstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"
)

// Option configures a server started by [Start].
type Option func(*config)

type config struct {
	failDelete func(bucket, object string) bool
}

// WithFailingDeletes makes the server refuse to delete the objects for
// which fail returns true: the delete is answered 403, with the JSON error
// GCS sends for an object under an event-based hold, and the object stays.
// fail is called with the bucket and the object's name as stored and must
// be safe for concurrent use.
func WithFailingDeletes(fail func(bucket, object string) bool) Option {
	return func(c *config) { c.failDelete = fail }
}

// Server is a GCS-protocol server on loopback, with a client for it.
type Server struct {
	fake   *fakestorage.Server
	http   *httptest.Server
	client *storage.Client
	cfg    config

	throttle atomic.Int64 // deletes still to answer 429

	deletes, refused, throttled atomic.Int64
}

// Counts are the object deletes a server has answered, by outcome.
type Counts struct {
	Deletes   int64 // every object DELETE request
	Refused   int64 // answered 403 by WithFailingDeletes
	Throttled int64 // answered 429 by Throttle
}

// Start starts a server and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{}
	for _, opt := range opts {
		opt(&s.cfg)
	}
	s.http = httptest.NewUnstartedServer(nil)
	// The client reads objects with the XML API (GET /<bucket>/<object>),
	// which the fake serves to requests for its public host only.
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		NoListener: true,
		PublicHost: s.http.Listener.Addr().String(),
	})
	if err != nil {
		s.http.Close()
		t.Fatalf("gcstest: fake-gcs-server: %v", err)
	}
	s.fake = fake
	t.Cleanup(fake.Stop)
	s.http.Config.Handler = s.intercept(fake.HTTPHandler())
	s.http.Start()
	t.Cleanup(s.http.Close)
	s.client, err = storage.NewClient(context.Background(),
		option.WithEndpoint(s.http.URL+"/storage/v1/"),
		option.WithoutAuthentication(),
		option.WithHTTPClient(s.http.Client()))
	if err != nil {
		t.Fatalf("gcstest: client: %v", err)
	}
	t.Cleanup(func() { _ = s.client.Close() })
	return s
}

// URL returns the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.http.URL }

// Client returns a GCS client for the server.
func (s *Server) Client() *storage.Client { return s.client }

// Throttle makes the server answer the next n object deletes with 429
// rateLimitExceeded, as GCS does when a bucket's request rate is over its
// limits, without deleting.
func (s *Server) Throttle(n int) { s.throttle.Store(int64(n)) }

// Counts returns the deletes answered so far.
func (s *Server) Counts() Counts {
	return Counts{Deletes: s.deletes.Load(), Refused: s.refused.Load(), Throttled: s.throttled.Load()}
}

// CreateBucket creates a bucket on the server.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.client.Bucket(name).Create(context.Background(), "lakegc-test", nil); err != nil {
		t.Fatalf("gcstest: create bucket %q: %v", name, err)
	}
}

// Bucket creates a bucket on the server and opens it through gcsblob. The
// bucket is closed when the test ends.
func (s *Server) Bucket(t testing.TB, name string) *blob.Bucket {
	t.Helper()
	s.CreateBucket(t, name)
	b, err := gcsblob.OpenBucket(context.Background(), nil, name, &gcsblob.Options{Client: s.client})
	if err != nil {
		t.Fatalf("gcstest: open bucket %q: %v", name, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// URLOpener returns a gcsblob URL opener for gs:// URLs on the server, for a
// blob.URLMux.
func (s *Server) URLOpener() *gcsblob.URLOpener {
	return &gcsblob.URLOpener{Options: gcsblob.Options{Client: s.client}}
}

// intercept answers object deletes that WithFailingDeletes refuses or that
// Throttle throttles, before fake-gcs-server sees them.
func (s *Server) intercept(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket, object, ok := objectDelete(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		s.deletes.Add(1)
		if s.throttle.Add(-1) >= 0 {
			s.throttled.Add(1)
			writeError(w, http.StatusTooManyRequests, "rateLimitExceeded",
				"The object exceeded the rate limit for object mutation operations (injected by gcstest.Throttle).")
			return
		}
		if s.cfg.failDelete != nil && s.cfg.failDelete(bucket, object) {
			s.refused.Add(1)
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf(
				"Object '%s/%s' is under active Event-Based hold and cannot be deleted, overwritten or archived until hold is removed (injected by gcstest.WithFailingDeletes).",
				bucket, object))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// objectDelete recognises DELETE /storage/v1/b/<bucket>/o/<object>.
func objectDelete(r *http.Request) (bucket, object string, ok bool) {
	if r.Method != http.MethodDelete {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/storage/v1/b/")
	if !ok {
		return "", "", false
	}
	b, o, ok := strings.Cut(rest, "/o/")
	if !ok || b == "" || o == "" {
		return "", "", false
	}
	bucket, err1 := url.PathUnescape(b)
	object, err2 := url.PathUnescape(o)
	return bucket, object, err1 == nil && err2 == nil
}

// writeError writes GCS's JSON error answer.
func writeError(w http.ResponseWriter, status int, reason, message string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	type item struct {
		Domain  string `json:"domain"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "message": message,
		"errors": []item{{Domain: "global", Reason: reason, Message: message}},
	}})
}
