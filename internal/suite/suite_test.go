package suite

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"
)

// tb records what SelfTest reports instead of failing the test; Fatalf
// ends the goroutine, as t.FailNow does.
type tb struct {
	testing.TB
	mu   sync.Mutex
	logs []string
}

func (t *tb) Helper() {}

func (t *tb) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, fmt.Sprintf(format, args...))
}

func (t *tb) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic(errFatal)
}

var errFatal = errors.New("fatal")

// selfTest runs SelfTest under a recording tb and returns what it reported.
func selfTest(t *testing.T, checks []Check[bool], correct bool, cases []Case[bug], exempt ...string) string {
	rec := &tb{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != errFatal {
				panic(p)
			}
		}()
		SelfTest(rec, checks, []func() bool{func() bool { return correct }}, func(b bug) bool { return bool(b) }, cases, exempt...)
	}()
	return strings.Join(rec.logs, "\n")
}

// bug is whether an adapter is broken; an adapter is its bug.
type bug bool

func (b bug) String() string { return fmt.Sprintf("broken=%t", bool(b)) }

// strict fails a broken adapter; lax passes every adapter.
var (
	strict = Check[bool]{Name: "Strict", Run: func(r Reporter, broken bool) {
		if broken {
			r.Errorf("broken")
		}
	}}
	lax = Check[bool]{Name: "Lax", Run: func(Reporter, bool) {}}
)

// SelfTest passes a suite whose every check fails on some broken adapter,
// and reports each way a suite's proof falls short: a check that passes the
// adapter whose bug it claims to catch, a check no case targets, a correct
// adapter that fails, a case naming no check.
func TestSelfTest(t *testing.T) {
	caught := []Case[bug]{{Bug: true, Caught: []string{"Strict"}}}
	for _, tc := range []struct {
		name    string
		checks  []Check[bool]
		correct bool
		cases   []Case[bug]
		exempt  []string
		want    string // "" = no report
	}{
		{"sound", []Check[bool]{strict}, false, caught, nil, ""},
		{"a check that cannot fail", []Check[bool]{strict, lax}, false,
			[]Case[bug]{{Bug: true, Caught: []string{"Strict", "Lax"}}}, nil, "Lax passes for an adapter with bug broken=true"},
		{"a check no case targets", []Check[bool]{strict, lax}, false, caught, nil, "no broken adapter proves that check Lax can fail"},
		{"a check exempt", []Check[bool]{strict, lax}, false, caught, []string{"Lax"}, ""},
		{"a correct adapter that fails", []Check[bool]{strict}, true, caught, nil, "Strict fails for correct adapter 0"},
		{"a case naming no check", []Check[bool]{strict}, false, []Case[bug]{{Bug: true, Caught: []string{"Nope"}}}, nil, "no check Nope"},
	} {
		got := selfTest(t, tc.checks, tc.correct, tc.cases, tc.exempt...)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: SelfTest reported %q; want %q", tc.name, got, tc.want)
		}
	}
}

// RunCheck counts an Errorf, a Fatalf (which ends the check) and a panic
// as a failure, and nothing else.
func TestRunCheck(t *testing.T) {
	after := false
	for _, tc := range []struct {
		name   string
		run    func(Reporter, bool)
		failed bool
	}{
		{"pass", func(Reporter, bool) {}, false},
		{"Errorf", func(r Reporter, _ bool) { r.Errorf("x") }, true},
		{"Fatalf", func(r Reporter, _ bool) { r.Fatalf("x"); after = true }, true},
		{"panic", func(Reporter, bool) { panic("x") }, true},
	} {
		if failed, logs := RunCheck(Check[bool]{Name: tc.name, Run: tc.run}, false); failed != tc.failed {
			t.Errorf("%s: failed %t (%s), want %t", tc.name, failed, logs, tc.failed)
		}
	}
	if after {
		t.Error("a check ran on after its Fatalf")
	}
}

// NotBlocked reports a call that does not return within BlockTimeout, or
// panics, and not one that returns.
func TestNotBlocked(t *testing.T) {
	defer func(d time.Duration) { BlockTimeout = d }(BlockTimeout)
	BlockTimeout = 50 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name   string
		fn     func()
		failed bool
	}{
		{"returns", func() {}, false},
		{"blocks", func() { <-release }, true},
		{"panics", func() { panic("x") }, true},
	} {
		failed, _ := RunCheck(Check[bool]{Name: tc.name, Run: func(r Reporter, _ bool) { NotBlocked(r, tc.name, tc.fn) }}, false)
		if failed != tc.failed {
			t.Errorf("%s: failed %t, want %t", tc.name, failed, tc.failed)
		}
	}
}

// Drain stops at the first error, with the items before it; Any passes
// on items and errors, and stops when its caller does.
func TestDrain(t *testing.T) {
	boom := errors.New("boom")
	seq := iter.Seq2[int, error](func(yield func(int, error) bool) {
		_ = yield(1, nil) && yield(2, nil) && yield(0, boom) && yield(3, nil)
	})
	got, err := Drain(seq)
	if len(got) != 2 || !errors.Is(err, boom) {
		t.Errorf("Drain: %v, %v", got, err)
	}
	var all []any
	for v, err := range Any(seq) {
		if all = append(all, v); err != nil {
			break
		}
	}
	if fmt.Sprint(all) != "[1 2 0]" {
		t.Errorf("Any: %v", all)
	}
}
