package storetest

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/internal/suite"
)

func TestMemStore(t *testing.T) {
	Run(t, func(*testing.T) copytrack.Store { return copytrack.NewMemStore() })
}

// fakes returns a fake store with bug b.
func fakes(b bug) copytrack.Store { return &fakeStore{bug: b} }

// TestSuiteCatchesBrokenStores proves that each check fails for a store with
// the bug it is meant to catch, and that the correct stores pass them all.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	correct := []func() copytrack.Store{func() copytrack.Store { return &fakeStore{} }, copytrack.NewMemStore}
	suite.SelfTest(t, checks, correct, fakes, []suite.Case[bug]{
		{Bug: insertionOrder, Caught: []string{"OrderedByBytes", "Model"}},
		{Bug: signedOrder, Caught: []string{"OrderedByBytes", "Model"}},
		{Bug: nulTerminated, Caught: []string{"BinaryKeys"}},
		{Bug: prefixLeakAfterFF, Caught: []string{"PrefixIsolation"}},
		{Bug: prefixShort, Caught: []string{"PrefixIsolation", "Model"}},
		{Bug: duplicateOnOverwrite, Caught: []string{"Overwrite"}},
		{Bug: errorOnMissing, Caught: []string{"Delete"}},
		{Bug: noEmptyValue, Caught: []string{"EmptyValue"}},
		{Bug: noCopyIn, Caught: []string{"SetCopiesInput"}},
		{Bug: aliasOut, Caught: []string{"ScanCopiesOutput"}},
		{Bug: continueAfterBreak, Caught: []string{"EarlyBreak"}},
		{Bug: lockKeptOnBreak, Caught: []string{"EarlyBreak"}},
		{Bug: lostUpdates, Caught: []string{"ConcurrentWriters"}},
		{Bug: ignoresContext, Caught: []string{"CancelledContext", "CancelDuringScan"}},
		{Bug: workThenContext, Caught: []string{"CancelledContext"}},
		{Bug: contextAtScanStartOnly, Caught: []string{"CancelDuringScan"}},
	})
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
