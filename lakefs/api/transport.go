package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxResponseBytes bounds what is read of an answer: lakeFS's answers to the
// calls of this package are a few hundred bytes.
const maxResponseBytes = 1 << 20

// retryPolicy says when a request may be sent again.
type retryPolicy int

const (
	// retryIdempotent: sending the request again cannot change what a success
	// means, so it is repeated after a transport error, a 429 or a 5xx.
	retryIdempotent retryPolicy = iota
	// retryRefusedOnly: the request is repeated only when lakeFS certainly did
	// not complete it — a 429, or a connection that was never made.
	retryRefusedOnly
)

// request is one API call, re-sent as is on each attempt.
type request struct {
	op      string // for errors: "get repository"
	method  string
	path    string // under the API base, path segments escaped
	query   url.Values
	body    []byte // JSON; nil for none
	policy  retryPolicy
	timeout time.Duration
}

// response is lakeFS's answer to the last attempt.
type response struct {
	status   int
	header   http.Header
	body     []byte
	attempts int
}

// callError wraps a sentinel and the cause, reading "api: <op>: <sentinel>: <cause>".
type callError struct {
	op       string
	sentinel error
	cause    error
	attempts int
}

func (e *callError) Error() string {
	s := "api: " + e.op + ": " + strings.TrimPrefix(e.sentinel.Error(), "api: ")
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	if e.attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.attempts)
	}
	return s
}

func (e *callError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func malformed(op string, cause error) error {
	return &callError{op: op, sentinel: ErrMalformed, cause: cause}
}

func invalidInput(op, detail string) error {
	return &callError{op: op, sentinel: ErrInvalidInput, cause: errors.New(detail)}
}

// errTooLarge marks an answer longer than maxResponseBytes.
var errTooLarge = fmt.Errorf("answer longer than %d bytes", maxResponseBytes)

// call sends r and returns the body when the status is want.
func (c *Client) call(ctx context.Context, r request, want int) ([]byte, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status != want {
		return nil, resp.statusError(r.op)
	}
	return resp.body, nil
}

// send sends r, retrying as its policy allows, and returns the last answer
// whatever its status. Errors are transport failures, an oversized answer, or
// the end of ctx.
func (c *Client) send(ctx context.Context, r request) (*response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, r)
		var wait time.Duration
		switch {
		case errors.Is(err, errTooLarge):
			return nil, &callError{op: r.op, sentinel: ErrMalformed, cause: err, attempts: attempt}
		case err != nil:
			if ctx.Err() != nil {
				return nil, &callError{op: r.op, sentinel: ErrTransport, cause: context.Cause(ctx), attempts: attempt}
			}
			if attempt >= c.maxAttempts || !retryTransport(r.policy, err) {
				return nil, &callError{op: r.op, sentinel: ErrTransport, cause: err, attempts: attempt}
			}
			wait = c.backoff(attempt)
		default:
			resp.attempts = attempt
			if attempt >= c.maxAttempts || !retryStatus(r.policy, resp.status) {
				return resp, nil
			}
			wait = c.backoff(attempt)
			if ra, ok := parseRetryAfter(resp.header.Get("Retry-After"), time.Now()); ok && ra > 0 {
				if ra > c.maxBackoff {
					return resp, nil // the server asks for a longer pause than we wait
				}
				wait = ra
			}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, &callError{op: r.op, sentinel: ErrTransport, cause: err, attempts: attempt}
		}
	}
}

// attempt sends r once and reads the whole answer.
func (c *Client) attempt(ctx context.Context, r request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.accessKeyID, c.secretKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.requests.Add(1)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxResponseBytes {
		return nil, errTooLarge
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}, nil
}

// statusError describes an answer whose status the call does not accept.
func (r *response) statusError(op string) error {
	e := &StatusError{Op: op, StatusCode: r.status, Message: errorMessage(r.body), Attempts: r.attempts}
	if ra, ok := parseRetryAfter(r.header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = ra
	}
	return e
}

// retryStatus: 429 means lakeFS did not complete the call (its limiter, or
// graveler's "too many tries, try again later"); 5xx may come after work was
// done, so only an idempotent call is repeated. 501 and 505 never change.
func retryStatus(p retryPolicy, status int) bool {
	switch {
	case status == http.StatusTooManyRequests:
		return true
	case status == http.StatusNotImplemented || status == http.StatusHTTPVersionNotSupported:
		return false
	case status >= 500 && status <= 599:
		return p == retryIdempotent
	default:
		return false
	}
}

// retryTransport: any transport failure of an idempotent call is retried; for
// the others only a connection that was never made (dial or name resolution),
// since a failure after the request was written may hide a completed call.
func retryTransport(p retryPolicy, err error) bool {
	if p == retryIdempotent {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr)
}

// backoff returns the wait after the given attempt: minBackoff doubled per
// attempt, capped at maxBackoff, with equal jitter (half fixed, half random).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.minBackoff
	for i := 1; i < attempt && d < c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.maxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// maxRetryAfter bounds a Retry-After so that it converts to a Duration.
const maxRetryAfter = 1 << 31

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110, section 10.2.3). ok is false when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(n, maxRetryAfter)) * time.Second, true
	} else if errors.Is(err, strconv.ErrRange) {
		return maxRetryAfter * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
