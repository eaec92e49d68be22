package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// The environment variables lakeFS's own CLI, lakectl, reads (its viper keys
// credentials.access_key_id, credentials.secret_access_key and
// server.endpoint_url under the LAKECTL_ prefix).
const (
	EnvAccessKeyID     = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
	EnvEndpointURL     = "LAKECTL_SERVER_ENDPOINT_URL"
)

// basePath is where lakeFS serves its API; an endpoint without a path gets it,
// as lakectl does.
const basePath = "/api/v1"

// Defaults of the options.
const (
	DefaultTimeout        = time.Minute
	DefaultPrepareTimeout = 15 * time.Minute
	DefaultMaxAttempts    = 5
	DefaultMinBackoff     = 250 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultPollInterval   = time.Second
	DefaultFirstPoll      = 50 * time.Millisecond
	DefaultUserAgent      = "lakegc"
)

// Client calls lakeFS's REST API with an access key pair. It is safe for
// concurrent use.
type Client struct {
	base         string // endpoint with the API path, no trailing slash
	accessKeyID  string
	secretKey    string
	http         *http.Client
	userAgent    string
	timeout      time.Duration
	prepTimeout  time.Duration
	maxAttempts  int
	minBackoff   time.Duration
	maxBackoff   time.Duration
	pollInterval time.Duration // the longest wait between two polls
	firstPoll    time.Duration // the first wait, doubled up to pollInterval
	requests     atomic.Int64  // HTTP requests sent, retries included
	// sleep waits d or until ctx ends; tests replace it to observe waits.
	sleep func(ctx context.Context, d time.Duration) error
}

// Option configures a Client. Zero values mean the default; invalid values
// make New fail with ErrInvalidInput.
type Option func(*Client) error

// WithHTTPClient sends the requests with hc (its transport, proxies, TLS
// settings). The per-call timeouts of this package apply on top of hc's own.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return fmt.Errorf("%w: nil HTTP client", ErrInvalidInput)
		}
		c.http = hc
		return nil
	}
}

// WithTimeout bounds each attempt of an ordinary call (default DefaultTimeout).
func WithTimeout(d time.Duration) Option {
	return durationOption("timeout", d, DefaultTimeout, func(c *Client, d time.Duration) { c.timeout = d })
}

// WithPrepareTimeout bounds each attempt of the prepare calls, which walk the
// repository on the server (default DefaultPrepareTimeout). lakeFS answers a
// prepare-uncommitted call after at most its ugc.prepare_interval (one minute
// by default) plus the upload of the file it wrote.
func WithPrepareTimeout(d time.Duration) Option {
	return durationOption("prepare timeout", d, DefaultPrepareTimeout, func(c *Client, d time.Duration) { c.prepTimeout = d })
}

// WithPollInterval sets the longest wait between two status requests of
// WaitPrepareCommits (default DefaultPollInterval): the first wait is
// DefaultFirstPoll (or this interval, if shorter), and each next one twice
// the last, up to this interval. lakeFS answers a small repository's
// prepare-commits in tens of milliseconds, a large one's in minutes.
func WithPollInterval(d time.Duration) Option {
	return durationOption("poll interval", d, DefaultPollInterval, func(c *Client, d time.Duration) { c.pollInterval = d })
}

// WithMaxAttempts sets how many times a retryable request is sent at most
// (default DefaultMaxAttempts); 1 disables retries.
func WithMaxAttempts(n int) Option {
	return func(c *Client) error {
		switch {
		case n < 0:
			return fmt.Errorf("%w: max attempts %d is negative", ErrInvalidInput, n)
		case n == 0:
			c.maxAttempts = DefaultMaxAttempts
		default:
			c.maxAttempts = n
		}
		return nil
	}
}

// WithBackoff sets the first wait between attempts and its cap: the wait
// doubles after each attempt, with jitter, up to maxWait (defaults
// DefaultMinBackoff and DefaultMaxBackoff). A Retry-After header longer than
// maxWait ends the retries.
func WithBackoff(minWait, maxWait time.Duration) Option {
	return func(c *Client) error {
		if minWait < 0 || maxWait < 0 {
			return fmt.Errorf("%w: negative backoff %v, %v", ErrInvalidInput, minWait, maxWait)
		}
		if minWait == 0 {
			minWait = DefaultMinBackoff
		}
		if maxWait == 0 {
			maxWait = max(DefaultMaxBackoff, minWait)
		}
		if maxWait < minWait {
			return fmt.Errorf("%w: backoff cap %v below its start %v", ErrInvalidInput, maxWait, minWait)
		}
		c.minBackoff, c.maxBackoff = minWait, maxWait
		return nil
	}
}

// WithUserAgent sets the User-Agent header (default DefaultUserAgent).
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if ua == "" {
			ua = DefaultUserAgent
		}
		c.userAgent = ua
		return nil
	}
}

func durationOption(name string, d, def time.Duration, set func(*Client, time.Duration)) Option {
	return func(c *Client) error {
		switch {
		case d < 0:
			return fmt.Errorf("%w: %s %v is negative", ErrInvalidInput, name, d)
		case d == 0:
			set(c, def)
		default:
			set(c, d)
		}
		return nil
	}
}

// New returns a client of the lakeFS at endpoint (e.g.
// "https://lakefs.example.com"; "/api/v1" is added when the URL has no path, as
// lakectl does) that authenticates with the access key pair.
func New(endpoint, accessKeyID, secretAccessKey string, opts ...Option) (*Client, error) {
	base, err := normalizeEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if accessKeyID == "" || secretAccessKey == "" {
		return nil, fmt.Errorf("%w: an access key ID and a secret access key are needed", ErrInvalidInput)
	}
	c := &Client{
		base:         base,
		accessKeyID:  accessKeyID,
		secretKey:    secretAccessKey,
		http:         http.DefaultClient,
		userAgent:    DefaultUserAgent,
		timeout:      DefaultTimeout,
		prepTimeout:  DefaultPrepareTimeout,
		maxAttempts:  DefaultMaxAttempts,
		minBackoff:   DefaultMinBackoff,
		maxBackoff:   DefaultMaxBackoff,
		pollInterval: DefaultPollInterval,
		sleep:        sleepContext,
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	c.firstPoll = min(DefaultFirstPoll, c.pollInterval)
	return c, nil
}

// Requests returns how many HTTP requests the client has sent, each attempt
// of a retried call counted. Safe for concurrent use.
func (c *Client) Requests() int64 { return c.requests.Load() }

// FromEnv returns a client configured from the environment variables lakectl
// reads: EnvEndpointURL, EnvAccessKeyID and EnvSecretAccessKey. A missing
// variable is an ErrInvalidInput naming it; lakectl's configuration file is not
// read.
func FromEnv(opts ...Option) (*Client, error) {
	var missing []string
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	endpoint, key, secret := get(EnvEndpointURL), get(EnvAccessKeyID), get(EnvSecretAccessKey)
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s not set", ErrInvalidInput, strings.Join(missing, ", "))
	}
	return New(endpoint, key, secret, opts...)
}

// Endpoint returns the API base URL the client calls, e.g.
// "http://127.0.0.1:8000/api/v1".
func (c *Client) Endpoint() string { return c.base }

func normalizeEndpoint(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("%w: endpoint: %w", ErrInvalidInput, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: endpoint %q is not an http(s) URL", ErrInvalidInput, endpoint)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: endpoint %q has user info, a query or a fragment", ErrInvalidInput, endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = basePath
		u.RawPath = ""
	}
	return strings.TrimRight(u.String(), "/"), nil
}
