package s3test

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// Region is the region every client of the server uses.
const Region = "us-east-1"

// Credentials the server accepts (it checks the signature's shape, not the
// secret). Exported so a test can open a bucket through an s3:// URL with
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set to them.
const (
	AccessKeyID     = "lakegc-test"
	SecretAccessKey = "lakegc-test-secret"
)

// Option configures a server started by [Start].
type Option func(*config)

type config struct {
	failDelete func(key string) bool
	maxKeys    int64
	now        func() time.Time
}

// WithFailingDeletes makes the server refuse to delete the keys for which
// fail returns true: DeleteObject answers 403 AccessDenied, and DeleteObjects
// reports an AccessDenied error for each such key while deleting the others,
// as S3 does when a policy denies some keys. The object stays in place. fail
// is called with the key as stored on the server and must be safe for
// concurrent use.
func WithFailingDeletes(fail func(key string) bool) Option {
	return func(c *config) { c.failDelete = fail }
}

// WithMaxKeys caps every listing page at n keys, whatever the client asks
// for, so that listing a few objects already spans many pages. n <= 0 keeps
// the server's default (1000, as S3).
func WithMaxKeys(n int) Option {
	return func(c *config) { c.maxKeys = int64(n) }
}

// WithClock sets the server's clock: the modification time of every object
// written is now() at the time of the write. It also turns off the server's
// check of the request time, which would reject requests signed with the real
// time against a simulated one.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// Server is an S3-protocol server on loopback, with a client for it.
type Server struct {
	http    *httptest.Server
	client  *s3.Client
	backend *backend
}

// Counts are the requests a server has answered, by kind.
type Counts struct {
	ListPages     int64 // ListObjects(V2) requests, one per page
	DeleteObject  int64 // single-object deletes, refused ones included
	DeleteObjects int64 // batch deletes
	DeletedKeys   int64 // keys removed by either kind of delete
	RefusedKeys   int64 // keys refused by WithFailingDeletes
}

// Start starts a server and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}

	var memOpts []s3mem.Option
	fakeOpts := []gofakes3.Option{gofakes3.WithoutVersioning()}
	if cfg.now != nil {
		clock := clockSource{now: cfg.now}
		memOpts = append(memOpts, s3mem.WithTimeSource(clock))
		fakeOpts = append(fakeOpts, gofakes3.WithTimeSource(clock), gofakes3.WithTimeSkewLimit(0))
	}
	b := &backend{Backend: s3mem.New(memOpts...), failDelete: cfg.failDelete, maxKeys: cfg.maxKeys}
	handler := gofakes3.New(b, fakeOpts...).Server()
	if cfg.failDelete != nil {
		handler = refuseDeleteObject(handler, b)
	}

	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		HTTPClient:   srv.Client(),
	})
	return &Server{http: srv, client: client, backend: b}
}

// URL returns the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.http.URL }

// Client returns an S3 client for the server.
func (s *Server) Client() *s3.Client { return s.client }

// Counts returns the requests answered so far.
func (s *Server) Counts() Counts {
	b := s.backend
	return Counts{
		ListPages:     b.listPages.Load(),
		DeleteObject:  b.deleteObject.Load(),
		DeleteObjects: b.deleteObjects.Load(),
		DeletedKeys:   b.deletedKeys.Load(),
		RefusedKeys:   b.refusedKeys.Load(),
	}
}

// Bucket creates a bucket on the server and opens it through s3blob. The
// bucket is closed when the test ends; its contents live as long as the
// server.
func (s *Server) Bucket(t testing.TB, name string) *blob.Bucket {
	t.Helper()
	ctx := context.Background()
	if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %q: %v", name, err)
	}
	bucket, err := s3blob.OpenBucket(ctx, s.client, name, nil)
	if err != nil {
		t.Fatalf("s3test: open bucket %q: %v", name, err)
	}
	t.Cleanup(func() { _ = bucket.Close() })
	return bucket
}

// BucketURL creates a bucket on the server and returns the gocloud.dev URL
// that opens it (s3://<name>?endpoint=…&use_path_style=true…), as a host
// configured with a URL would. It sets AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY for the rest of the test (t.Setenv), so the test must
// not be parallel.
func (s *Server) BucketURL(t testing.TB, name string) string {
	t.Helper()
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %q: %v", name, err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	q := url.Values{}
	q.Set("endpoint", s.http.URL)
	q.Set("use_path_style", "true")
	q.Set("disable_https", "true")
	q.Set("region", Region)
	return "s3://" + name + "?" + q.Encode()
}

// backend wraps the in-memory backend to cap listing pages, refuse chosen
// deletes and count requests. It embeds the Backend interface, not s3mem's
// type, so gofakes3 sees an unversioned store and routes batch deletes
// through DeleteMulti.
type backend struct {
	gofakes3.Backend
	failDelete func(key string) bool
	maxKeys    int64

	listPages, deleteObject, deleteObjects, deletedKeys, refusedKeys atomic.Int64
}

func (b *backend) ListBucket(name string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	b.listPages.Add(1)
	if b.maxKeys > 0 && (page.MaxKeys <= 0 || page.MaxKeys > b.maxKeys) {
		page.MaxKeys = b.maxKeys
	}
	return b.Backend.ListBucket(name, prefix, page)
}

func (b *backend) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	b.deleteObject.Add(1)
	res, err := b.Backend.DeleteObject(bucket, key)
	if err == nil {
		b.deletedKeys.Add(1)
	}
	return res, err
}

func (b *backend) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	b.deleteObjects.Add(1)
	var allowed []string
	var refused []gofakes3.ErrorResult
	for _, key := range keys {
		if b.refuses(key) {
			refused = append(refused, gofakes3.ErrorResult{Key: key, Code: accessDenied, Message: refusal})
			continue
		}
		allowed = append(allowed, key)
	}
	res, err := b.Backend.DeleteMulti(bucket, allowed...)
	if err != nil {
		return res, err
	}
	b.deletedKeys.Add(int64(len(res.Deleted)))
	res.Error = append(res.Error, refused...)
	return res, nil
}

func (b *backend) refuses(key string) bool {
	if b.failDelete == nil || !b.failDelete(key) {
		return false
	}
	b.refusedKeys.Add(1)
	return true
}

const accessDenied gofakes3.ErrorCode = "AccessDenied"

const refusal = "Access Denied (injected by s3test.WithFailingDeletes)"

// refuseDeleteObject answers a single-object DELETE of a refused key with
// 403 AccessDenied before gofakes3 sees it: gofakes3 answers every error code
// it does not know with 500, which an SDK retries as transient.
func refuseDeleteObject(next http.Handler, b *backend) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && r.URL.Query().Get("uploadId") == "" {
			bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if bucket != "" && key != "" && b.refuses(key) {
				b.deleteObject.Add(1)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				_ = xml.NewEncoder(w).Encode(gofakes3.ErrorResponse{Code: accessDenied, Message: refusal})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// clockSource adapts a clock function to gofakes3's TimeSource.
type clockSource struct{ now func() time.Time }

func (c clockSource) Now() time.Time                  { return c.now() }
func (c clockSource) Since(t time.Time) time.Duration { return c.now().Sub(t) }
