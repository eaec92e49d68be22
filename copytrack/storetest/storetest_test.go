package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/copytrack"
)

func TestMemStore(t *testing.T) {
	Run(t, func(*testing.T) copytrack.Store { return copytrack.NewMemStore() })
}

// recorder is a reporter that records failures instead of failing the test,
// and ends the check (like t.FailNow) on Fatalf.
type recorder struct {
	mu     sync.Mutex
	failed bool
	logs   []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// runCheck runs one check against s and reports whether it failed; a panic
// (such as the runtime's for an iterator that ignores a false from yield)
// counts as a failure.
func runCheck(c check, s copytrack.Store) (failed bool, logs string) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		c.run(r, s)
	}()
	<-done
	return r.failed, strings.Join(r.logs, "\n")
}

// TestSuiteCatchesBrokenStores proves that each check fails for a store with
// the bug it is meant to catch, and that the correct stores pass them all.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	defer func(d time.Duration) { blockTimeout = d }(blockTimeout)
	blockTimeout = 300 * time.Millisecond

	for _, c := range checks {
		if failed, logs := runCheck(c, &fakeStore{}); failed {
			t.Errorf("%s fails for the correct fake store:\n%s", c.name, logs)
		}
		if failed, logs := runCheck(c, copytrack.NewMemStore()); failed {
			t.Errorf("%s fails for the MemStore:\n%s", c.name, logs)
		}
	}

	tests := []struct {
		bug    bug
		caught []string // checks that must fail
	}{
		{insertionOrder, []string{"OrderedByBytes", "Model"}},
		{signedOrder, []string{"OrderedByBytes", "Model"}},
		{nulTerminated, []string{"BinaryKeys"}},
		{prefixLeakAfterFF, []string{"PrefixIsolation"}},
		{prefixShort, []string{"PrefixIsolation", "Model"}},
		{duplicateOnOverwrite, []string{"Overwrite"}},
		{errorOnMissing, []string{"Delete"}},
		{noEmptyValue, []string{"EmptyValue"}},
		{noCopyIn, []string{"SetCopiesInput"}},
		{aliasOut, []string{"ScanCopiesOutput"}},
		{continueAfterBreak, []string{"EarlyBreak"}},
		{lockKeptOnBreak, []string{"EarlyBreak"}},
		{lostUpdates, []string{"ConcurrentWriters"}},
		{ignoresContext, []string{"CancelledContext", "CancelDuringScan"}},
		{workThenContext, []string{"CancelledContext"}},
		{contextAtScanStartOnly, []string{"CancelDuringScan"}},
	}
	targeted := map[string]bool{}
	for _, tt := range tests {
		for _, name := range tt.caught {
			targeted[name] = true
			i := slices.IndexFunc(checks, func(c check) bool { return c.name == name })
			if i < 0 {
				t.Fatalf("no check %s", name)
			}
			if failed, _ := runCheck(checks[i], &fakeStore{bug: tt.bug}); !failed {
				t.Errorf("%s passes for a store with bug %v", name, tt.bug)
			}
		}
	}
	for _, c := range checks {
		if !targeted[c.name] {
			t.Errorf("no broken store proves that check %s can fail", c.name)
		}
	}
}

type bug int

const (
	noBug                  bug = iota
	insertionOrder             // Scan yields in insertion order
	signedOrder                // keys compared as signed bytes
	nulTerminated              // keys truncated at the first \x00
	prefixLeakAfterFF          // the scan's upper bound is lost for prefixes ending in \xff
	prefixShort                // the prefix's last byte is ignored
	duplicateOnOverwrite       // Set of an existing key adds a second pair
	errorOnMissing             // Delete of a missing key fails
	noEmptyValue               // an empty value is refused (a NOT NULL column fed nil)
	noCopyIn                   // the caller's slices are stored
	aliasOut                   // Scan yields the stored slices
	continueAfterBreak         // Scan ignores a false from yield
	lockKeptOnBreak            // Scan keeps its lock when the loop stops early
	lostUpdates                // Set is a read-copy-write that can lose a concurrent write
	ignoresContext             // the context is never checked
	workThenContext            // the work is done, then the context's error returned
	contextAtScanStartOnly     // Scan checks the context before the first pair only
)

var bugNames = []string{"noBug", "insertionOrder", "signedOrder", "nulTerminated", "prefixLeakAfterFF",
	"prefixShort", "duplicateOnOverwrite", "errorOnMissing", "noEmptyValue", "noCopyIn", "aliasOut",
	"continueAfterBreak", "lockKeptOnBreak", "lostUpdates", "ignoresContext", "workThenContext",
	"contextAtScanStartOnly"}

func (b bug) String() string { return bugNames[b] }

// fakeStore is a deliberately simple Store: unsorted pairs in insertion
// order, sorted by Scan, with one bug switched on.
type fakeStore struct {
	mu    sync.Mutex
	pairs []copytrack.KV
	bug   bug
}

func (f *fakeStore) ctxErr(ctx context.Context) error {
	if f.bug == ignoresContext {
		return nil
	}
	return ctx.Err()
}

func (f *fakeStore) Set(ctx context.Context, key, value []byte) error {
	if f.bug != workThenContext {
		if err := f.ctxErr(ctx); err != nil {
			return err
		}
	}
	switch f.bug {
	case noEmptyValue:
		if len(value) == 0 {
			return errors.New("null value in column")
		}
	case nulTerminated:
		if i := bytes.IndexByte(key, 0); i >= 0 {
			key = key[:i]
		}
	}
	if f.bug != noCopyIn {
		key, value = bytes.Clone(key), bytes.Clone(value)
	}
	f.mu.Lock()
	pairs := f.pairs
	if f.bug == lostUpdates {
		pairs = slices.Clone(pairs)
		f.mu.Unlock()
		runtime.Gosched()
	}
	if i := slices.IndexFunc(pairs, func(kv copytrack.KV) bool { return bytes.Equal(kv.Key, key) }); i >= 0 && f.bug != duplicateOnOverwrite {
		pairs[i].Value = value
	} else {
		pairs = append(pairs, copytrack.KV{Key: key, Value: value})
	}
	if f.bug == lostUpdates {
		f.mu.Lock()
	}
	f.pairs = pairs
	f.mu.Unlock()
	if f.bug == workThenContext {
		return ctx.Err()
	}
	return nil
}

func (f *fakeStore) Delete(ctx context.Context, key []byte) error {
	if f.bug != workThenContext {
		if err := f.ctxErr(ctx); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.pairs)
	f.pairs = slices.DeleteFunc(f.pairs, func(kv copytrack.KV) bool { return bytes.Equal(kv.Key, key) })
	if f.bug == errorOnMissing && n == len(f.pairs) {
		return errors.New("not found")
	}
	if f.bug == workThenContext {
		return ctx.Err()
	}
	return nil
}

func (f *fakeStore) Scan(ctx context.Context, prefix []byte) iter.Seq2[copytrack.KV, error] {
	return func(yield func(copytrack.KV, error) bool) {
		if f.bug != workThenContext {
			if err := f.ctxErr(ctx); err != nil {
				yield(copytrack.KV{}, err)
				return
			}
		}
		f.mu.Lock()
		if f.bug != lockKeptOnBreak {
			defer f.mu.Unlock()
		}
		var out []copytrack.KV
		for _, kv := range f.pairs {
			if f.matches(kv.Key, prefix) {
				if f.bug != aliasOut {
					kv = copytrack.KV{Key: bytes.Clone(kv.Key), Value: bytes.Clone(kv.Value)}
				}
				out = append(out, kv)
			}
		}
		switch f.bug {
		case insertionOrder:
		case signedOrder:
			slices.SortFunc(out, func(a, b copytrack.KV) int { return compareSigned(a.Key, b.Key) })
		default:
			slices.SortFunc(out, func(a, b copytrack.KV) int { return bytes.Compare(a.Key, b.Key) })
		}
		for _, kv := range out {
			if f.bug != ignoresContext && f.bug != contextAtScanStartOnly {
				if err := ctx.Err(); err != nil {
					yield(copytrack.KV{}, err)
					return
				}
			}
			if !yield(kv, nil) && f.bug != continueAfterBreak {
				return
			}
		}
		if f.bug == lockKeptOnBreak {
			f.mu.Unlock()
		}
		if f.bug == workThenContext {
			if err := ctx.Err(); err != nil {
				yield(copytrack.KV{}, err)
			}
		}
	}
}

func (f *fakeStore) matches(key, prefix []byte) bool {
	switch {
	case f.bug == prefixShort && len(prefix) > 0:
		return bytes.HasPrefix(key, prefix[:len(prefix)-1])
	case f.bug == prefixLeakAfterFF && len(prefix) > 0 && prefix[len(prefix)-1] == 0xff:
		return bytes.Compare(key, prefix) >= 0
	}
	return bytes.HasPrefix(key, prefix)
}

func compareSigned(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return int(int8(a[i])) - int(int8(b[i]))
		}
	}
	return len(a) - len(b)
}
