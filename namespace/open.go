package namespace

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"gocloud.dev/blob"
)

// ErrNoLocalRoot is returned for a local namespace without WithLocalRoot.
var ErrNoLocalRoot = errors.New("namespace: a local namespace needs WithLocalRoot")

// ErrNoDriver is returned by OpenBucket when the URL mux has no opener for
// the namespace's kind: the host has not imported its gocloud driver.
var ErrNoDriver = errors.New("namespace: no gocloud driver for the namespace")

// drivers are the gocloud driver packages of each URL scheme BucketURL makes.
var drivers = map[string]string{
	"s3":     "gocloud.dev/blob/s3blob",
	"gs":     "gocloud.dev/blob/gcsblob",
	"azblob": "gocloud.dev/blob/azureblob",
	"file":   "gocloud.dev/blob/fileblob",
}

// Option configures BucketURL and OpenBucket.
type Option func(*config)

type config struct {
	mux           *blob.URLMux
	localRoot     string
	azureEndpoint *url.URL
	params        map[Kind]url.Values
	err           error
}

func newConfig(opts []Option) (*config, error) {
	cfg := &config{mux: blob.DefaultURLMux(), params: map[Kind]url.Values{}}
	for _, opt := range opts {
		if opt != nil {
			opt(cfg)
		}
	}
	return cfg, cfg.err
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
	}
}

// WithLocalRoot sets the root of lakeFS's local blockstore
// (blockstore.local.path in lakeFS's configuration): local://repo1 is the
// folder repo1 under it. A relative dir is made absolute. It is required for
// local namespaces, and unused for the others.
func WithLocalRoot(dir string) Option {
	return func(c *config) {
		if dir == "" {
			c.fail("empty local root")
			return
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			c.fail("local root %q: %v", dir, err)
			return
		}
		c.localRoot = abs
	}
}

// WithAzureEndpoint sends the requests of Azure namespaces to endpoint
// ("http://127.0.0.1:10000" for Azurite) instead of the account's host,
// with the account as the first path segment, as storage emulators expect.
// The account and the container still come from the namespace. endpoint
// must be http or https, with a host and no path.
func WithAzureEndpoint(endpoint string) Option {
	return func(c *config) {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			c.fail("Azure endpoint %q: want http(s)://host[:port]", endpoint)
			return
		}
		c.azureEndpoint = u
	}
}

// WithURLParams adds query parameters to the gocloud.dev URL of a kind of
// namespace, for its driver's URL opener: for example "endpoint",
// "use_path_style" and "region" for S3 (s3blob), "protocol" or "cdn" for
// Azure (azureblob), "create_dir" for Local (fileblob). They replace
// BucketURL's own parameters of the same name; "prefix" and "key" are
// refused, as the namespace sets the prefix.
func WithURLParams(kind Kind, params url.Values) Option {
	return func(c *config) {
		switch kind {
		case S3, GCS, Azure, Local:
		default:
			c.fail("URL params for unknown kind %q", kind)
			return
		}
		for name := range params {
			if name == "prefix" || name == "key" {
				c.fail("URL param %q: the namespace sets the prefix", name)
				return
			}
		}
		q := c.params[kind]
		if q == nil {
			q = url.Values{}
			c.params[kind] = q
		}
		for name, values := range params {
			q[name] = slices.Clone(values)
		}
	}
}

// WithURLMux opens buckets with mux's URL openers instead of
// blob.DefaultURLMux's, for a host that registers its own (credentials,
// clients). mux must have openers for the schemes BucketURL returns.
func WithURLMux(mux *blob.URLMux) Option {
	return func(c *config) {
		if mux == nil {
			c.fail("nil URL mux")
			return
		}
		c.mux = mux
	}
}

// BucketURL returns the gocloud.dev/blob URL that opens the namespace as a
// bucket whose keys are the repository's object keys (the namespace's path
// is the bucket's prefix):
//
//	s3://<bucket>?prefix=<path>/
//	gs://<bucket>?prefix=<path>/
//	azblob://<container>?storage_account=<account>&prefix=<path>/ (and domain=<domain> if not DefaultAzureDomain)
//	file://<root>/<path>?metadata=skip
//
// A local namespace is a folder of lakeFS's local blockstore (see
// WithLocalRoot); fileblob writes no metadata files beside the objects
// there, as lakeFS writes none. But fileblob's Delete of a key also removes
// "<key>.attrs", another object there, and fileblob lists no "*.attrs"
// file: sweep a local namespace with Namespace.LocalDeleter, which removes
// exactly the key's file. BucketURL does no I/O.
func (n Namespace) BucketURL(opts ...Option) (string, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return "", err
	}
	u, err := n.bucketURL(cfg)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func (n Namespace) bucketURL(cfg *config) (*url.URL, error) {
	// A Namespace built by hand must be one Parse returns.
	if back, err := Parse(n.String()); err != nil || back != n {
		return nil, fmt.Errorf("%w: %+v", ErrInvalidInput, n)
	}
	q := url.Values{}
	u := &url.URL{}
	switch n.Kind {
	case S3, GCS:
		u.Scheme, u.Host = string(n.Kind), n.Bucket
	case Azure:
		u.Scheme, u.Host = "azblob", n.Bucket
		q.Set("storage_account", n.Account)
		if n.Domain != DefaultAzureDomain {
			q.Set("domain", n.Domain)
		}
		if e := cfg.azureEndpoint; e != nil {
			q.Set("domain", e.Host)
			q.Set("protocol", e.Scheme)
			q.Set("localemu", "true")
		}
	case Local:
		if cfg.localRoot == "" {
			return nil, fmt.Errorf("%w: %s", ErrNoLocalRoot, n)
		}
		u.Scheme = "file"
		u.Path = filepath.ToSlash(filepath.Join(cfg.localRoot, filepath.FromSlash(n.Path)))
		q.Set("metadata", "skip")
	}
	if n.Path != "" && n.Kind != Local {
		q.Set("prefix", n.Path+"/")
	}
	for name, values := range cfg.params[n.Kind] {
		q[name] = values
	}
	u.RawQuery = q.Encode()
	return u, nil
}

// OpenBucket opens the bucket of a lakeFS storage namespace, rooted at the
// namespace (see Parse and BucketURL): the bucket that package sweep's Mark
// and Sweep and package uncommitted's export take.
//
// As with any gocloud URL, the driver of the namespace's kind must be linked
// in by the host (import _ "gocloud.dev/blob/s3blob", gcsblob, azureblob or
// fileblob), so that a binary carries only the cloud SDKs it uses; without
// it OpenBucket returns ErrNoDriver. Credentials are the driver's, read from
// the environment by blob.DefaultURLMux's openers (the AWS SDK's chain;
// Application Default Credentials; AZURE_STORAGE_ACCOUNT with
// AZURE_STORAGE_KEY, a SAS token or a connection string, or Azure's default
// credential chain), unless WithURLMux brings the host's own openers.
// azureblob's default opener reads the environment once per process, and
// signs with a shared key as AZURE_STORAGE_ACCOUNT: for an Azure namespace of
// another account, use WithURLMux.
//
// A local namespace's bucket must be swept with Namespace.LocalDeleter (see
// BucketURL): the bucket's own Delete removes a "<key>.attrs" object too.
func OpenBucket(ctx context.Context, uri string, opts ...Option) (*blob.Bucket, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	n, err := Parse(uri)
	if err != nil {
		return nil, err
	}
	u, err := n.bucketURL(cfg)
	if err != nil {
		return nil, err
	}
	if !cfg.mux.ValidBucketScheme(u.Scheme) {
		return nil, fmt.Errorf("%w: %s: no opener for %s:// (import _ %q)", ErrNoDriver, n, u.Scheme, drivers[u.Scheme])
	}
	b, err := cfg.mux.OpenBucketURL(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("namespace: open %s: %w", n, err)
	}
	return b, nil
}
