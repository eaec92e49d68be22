// Package suite is the plumbing the module's conformance suites share
// (uncommitted/sourcetest, retention/sourcetest, copytrack/storetest): a
// check runs against a Reporter, which is a *testing.T when a host runs
// the suite and a Recorder when the suite's own tests run a check against
// a deliberately broken adapter to see it fail. [SelfTest] is that proof:
// the correct adapter passes every check, each broken one fails the checks
// that target its bug, and no check goes untargeted.
package suite

import (
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reporter is the part of *testing.T a check uses.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Check is one named check of a suite; H is what it checks (a store, or a
// function loading a fixture into one).
type Check[H any] struct {
	Name string
	Run  func(r Reporter, h H)
}

// Run runs checks as subtests of t, each on what newH returns for its
// subtest.
func Run[H any](t *testing.T, checks []Check[H], newH func(t *testing.T) H) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, newH(t)) })
	}
}

// BlockTimeout is how long a call may take before NotBlocked reports it as
// blocked. SelfTest shortens it while it runs.
var BlockTimeout = 20 * time.Second

// Recorder is a Reporter that records failures instead of failing a test,
// and ends the check (as t.FailNow does) on Fatalf. Safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	failed bool
	logs   []string
}

// Helper does nothing.
func (r *Recorder) Helper() {}

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the calling goroutine.
func (r *Recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// RunCheck runs c on h under a Recorder, in a goroutine of its own, and
// reports whether it failed, with its messages; a panic (such as the
// runtime's for an iterator that ignores a false from yield) counts as a
// failure.
func RunCheck[H any](c Check[H], h H) (failed bool, logs string) {
	r := &Recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		c.Run(r, h)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed, strings.Join(r.logs, "\n")
}

// Case is a broken adapter of a suite's self-test: its bug, and the checks
// that must fail on it.
type Case[B any] struct {
	Bug    B
	Caught []string
}

// SelfTest proves a suite's checks: every check passes for a new adapter
// of each function of correct, a new adapter of each case
// (adapter(Bug)) fails every check the case names,
// and every check is named by some case, or in exempt (a check that cannot
// apply to the adapters of this self-test, with the reason at the call).
// BlockTimeout is 300 ms while it runs. t is a *testing.T, or a TB of the
// package's own tests that records what SelfTest reports.
func SelfTest[H any, B fmt.Stringer](t testing.TB, checks []Check[H], correct []func() H, adapter func(B) H, cases []Case[B], exempt ...string) {
	t.Helper()
	defer func(d time.Duration) { BlockTimeout = d }(BlockTimeout)
	BlockTimeout = 300 * time.Millisecond
	for i, newH := range correct {
		for _, c := range checks {
			if failed, logs := RunCheck(c, newH()); failed {
				t.Errorf("%s fails for correct adapter %d:\n%s", c.Name, i, logs)
			}
		}
	}
	targeted := map[string]bool{}
	for _, name := range exempt {
		targeted[name] = true
	}
	for _, tc := range cases {
		for _, name := range tc.Caught {
			targeted[name] = true
			i := slices.IndexFunc(checks, func(c Check[H]) bool { return c.Name == name })
			if i < 0 {
				t.Fatalf("no check %s", name)
			}
			if failed, _ := RunCheck(checks[i], adapter(tc.Bug)); !failed {
				t.Errorf("%s passes for an adapter with bug %v", name, tc.Bug)
			}
		}
	}
	for _, c := range checks {
		if !targeted[c.Name] {
			t.Errorf("no broken adapter proves that check %s can fail", c.Name)
		}
	}
}

// NotBlocked runs fn and reports a failure if it panics (as the runtime
// does when an iterator ignores a false from yield) or does not return
// within BlockTimeout.
func NotBlocked(r Reporter, what string, fn func()) {
	r.Helper()
	timeout := BlockTimeout
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("%s panicked: %v", what, p)
			}
		}()
		fn()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		r.Fatalf("%s blocked for %v", what, timeout)
	}
}

// Drain collects an iteration until its end or its first error.
func Drain[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Any turns an iteration of T into one of any.
func Any[T any](seq iter.Seq2[T, error]) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		for v, err := range seq {
			if !yield(v, err) {
				return
			}
		}
	}
}
