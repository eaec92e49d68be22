package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Sentinels that every error of this package wraps; test them with errors.Is.
var (
	// ErrUnauthorized: lakeFS answered 401 — the access key pair is wrong or unknown.
	ErrUnauthorized = errors.New("api: unauthorized")
	// ErrForbidden: lakeFS answered 403 — the key pair lacks a permission the call needs.
	ErrForbidden = errors.New("api: forbidden")
	// ErrNotFound: lakeFS answered 404 — no such repository, task, or (for the GC
	// rules) no rules set.
	ErrNotFound = errors.New("api: not found")
	// ErrTooManyRequests: lakeFS answered 429 on every attempt.
	ErrTooManyRequests = errors.New("api: too many requests")
	// ErrServer: lakeFS answered a 5xx status on every attempt.
	ErrServer = errors.New("api: server error")
	// ErrRequest: lakeFS refused the request with another 4xx status (400, 409, …).
	ErrRequest = errors.New("api: request refused")
	// ErrMalformed: lakeFS's answer is not what its API promises (bad JSON, a
	// missing field, an unexpected status); nothing in it is used.
	ErrMalformed = errors.New("api: malformed response")
	// ErrTaskFailed: an asynchronous prepare-commits task ended with an error.
	ErrTaskFailed = errors.New("api: prepare commits task failed")
	// ErrTransport: no answer came back from lakeFS (connection refused, reset,
	// timed out) on every attempt.
	ErrTransport = errors.New("api: transport error")
	// ErrInvalidInput: the client's configuration (endpoint, keys, an
	// option) or an argument of a call is invalid (an empty repository name,
	// negative retention days, …); nothing was sent.
	ErrInvalidInput = errors.New("api: invalid input")
	// ErrOutsideNamespace: a location lakeFS returned is not inside the
	// repository's storage namespace.
	ErrOutsideNamespace = errors.New("api: location outside the storage namespace")
)

// StatusError is lakeFS's answer with a status the call does not accept. It
// wraps the sentinel of its status class (ErrUnauthorized, ErrForbidden,
// ErrNotFound, ErrTooManyRequests, ErrServer, ErrRequest or ErrMalformed).
type StatusError struct {
	// Op names the call, e.g. "get repository".
	Op string
	// StatusCode is the HTTP status of the last attempt.
	StatusCode int
	// Message is lakeFS's error message (the "message" of its JSON error body),
	// or the start of the body when it is not JSON.
	Message string
	// RetryAfter is the wait the server asked for in a Retry-After header, or
	// zero when it named none.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent.
	Attempts int
}

// Error reads "api: <op>: <status> <text>: <message>".
func (e *StatusError) Error() string {
	s := fmt.Sprintf("api: %s: %d %s", e.Op, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Unwrap returns the sentinel of the status class.
func (e *StatusError) Unwrap() error {
	switch c := e.StatusCode; {
	case c == http.StatusUnauthorized:
		return ErrUnauthorized
	case c == http.StatusForbidden:
		return ErrForbidden
	case c == http.StatusNotFound:
		return ErrNotFound
	case c == http.StatusTooManyRequests:
		return ErrTooManyRequests
	case c >= 500 && c <= 599:
		return ErrServer
	case c >= 400 && c <= 499:
		return ErrRequest
	default:
		return ErrMalformed
	}
}
