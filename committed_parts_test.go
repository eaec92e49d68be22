package lakegc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// rangesHost gives the memHost's committed addresses as parts: one part per
// active commit, its addresses sorted (full ones as they are, or made
// relative), named by their hash.
type rangesHost struct {
	*memHost
	ns string // a full address under ns is given relative

	mu       sync.Mutex
	parts    map[string][]string // ID → keys, every part ever given
	opened   []string
	fail     error  // CommittedParts fails with it
	failOpen string // a part whose Open fails
	fullKey  bool   // full addresses stay full
}

var _ lakegc.CommittedParts = (*rangesHost)(nil)

func (h *rangesHost) host() lakegc.Host {
	return lakegc.Host{Staging: h.memHost, Commits: h.memHost, Committed: h}
}

func (h *rangesHost) CommittedParts(ctx context.Context, active []retention.ActiveCommit) (*sweep.Parts, error) {
	if h.fail != nil {
		return nil, h.fail
	}
	h.memHost.mu.Lock()
	var trees [][]string
	for _, a := range active {
		c, ok := h.commits[a.CommitID]
		if !ok {
			h.memHost.mu.Unlock()
			return nil, fmt.Errorf("rangeshost: no commit %q", a.CommitID)
		}
		trees = append(trees, slices.Collect(maps.Values(c.tree)))
	}
	h.memHost.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parts == nil {
		h.parts = map[string][]string{}
	}
	p := &sweep.Parts{Open: h.open, ReadAhead: 4}
	for _, tree := range trees {
		var keys []string
		for _, a := range tree {
			if !h.fullKey {
				a = strings.TrimPrefix(a, h.ns+"/")
			}
			keys = append(keys, a)
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		sum := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
		id := hex.EncodeToString(sum[:])
		h.parts[id] = keys
		p.IDs = append(p.IDs, id)
	}
	return p, nil
}

func (h *rangesHost) open(ctx context.Context, id string) iter.Seq2[string, error] {
	h.mu.Lock()
	keys, ok := h.parts[id]
	h.opened = append(h.opened, id)
	fail := id == h.failOpen
	h.mu.Unlock()
	return func(yield func(string, error) bool) {
		for i, k := range keys {
			if fail && i == len(keys)/2 {
				yield("", errors.New("rangeshost: range unreadable"))
				return
			}
			if !yield(k, nil) {
				return
			}
		}
		if !ok {
			yield("", fmt.Errorf("rangeshost: no part %q", id))
		}
	}
}

// A cycle whose host gives parts marks and deletes exactly what one given
// the same commits as addresses does: the garbage, read from the parts,
// each opened once when its addresses fit Collect's buffer, twice when not
// (a bound of 0: every part with a relative address).
func TestCollectWithPartsDeletesWhatAFlatRunDeletes(t *testing.T) {
	ctx := context.Background()
	flat := newWorld(t)
	cfg := flat.config()
	cfg.Sweep = true
	if _, err := lakegc.Collect(ctx, flat.host.host(), cfg); err != nil {
		t.Fatal(err)
	}
	flatGone := flat.expectLiveKept()

	for _, bound := range []string{"default", "0"} {
		if bound == "0" {
			lakegc.LimitPartBuffers(t, 0, 1<<20)
		}
		w := newWorld(t)
		h := &rangesHost{memHost: w.host, ns: w.ns, fullKey: true}
		cfg = w.config()
		cfg.Sweep = true
		rep, err := lakegc.Collect(ctx, h.host(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		gone := w.expectLiveKept()
		if !slices.Equal(gone, flatGone) || len(gone) != len(w.garbage) {
			t.Errorf("bound %s: with parts deleted %q; a flat run deleted %q; want the %d garbage objects", bound, gone, flatGone, len(w.garbage))
		}
		if s := rep.Mark.Summary; s.KeepSource != sweep.KeepParts || s.PartsRead != int64(len(h.parts)) {
			t.Errorf("bound %s: keep source %q, %d parts read; want %q, %d", bound, s.KeepSource, s.PartsRead, sweep.KeepParts, len(h.parts))
		}
		twice := 0
		for _, keys := range h.parts {
			if slices.ContainsFunc(keys, func(a string) bool { return !strings.Contains(a, "://") }) {
				twice++
			}
		}
		opens := len(h.opened)
		switch {
		case bound == "default" && opens != len(h.parts),
			bound == "0" && opens != len(h.parts)+twice:
			t.Errorf("bound %s: %d parts (%d with relative addresses) opened %d times", bound, len(h.parts), twice, opens)
		}
	}
}

// A host whose parts fail fails the cycle, and nothing is deleted: the
// parts cannot be given, or a part cannot be read.
func TestCollectPartsFailureFailsTheCycle(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(h *rangesHost)
	}{
		{"parts", func(h *rangesHost) { h.fail = errors.New("rangeshost: metarange unreadable") }},
		{"open", func(h *rangesHost) { h.failOpen = "*" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			h := &rangesHost{memHost: w.host, ns: w.ns}
			tc.set(h)
			if h.failOpen == "*" {
				// The part of c3, the head of main.
				p, err := h.CommittedParts(context.Background(), []retention.ActiveCommit{{CommitID: "c3"}})
				if err != nil {
					t.Fatal(err)
				}
				h.failOpen = p.IDs[0]
			}
			cfg := w.config()
			cfg.Sweep = true
			_, err := lakegc.Collect(context.Background(), h.host(), cfg)
			if err == nil {
				t.Fatal("Collect: no error")
			}
			if gone := w.expectLiveKept(); len(gone) > 0 {
				t.Errorf("a failed cycle deleted %q", gone)
			}
			if ok := w.successfulMarks(); len(ok) > 0 {
				t.Errorf("a failed cycle left successful marks %q", ok)
			}
		})
	}
}

// changesHost records what Collect asks CommittedChanges, and answers
// with empty changes since the run asked.
type changesHost struct {
	*memHost
	calls [][2]string // since, run
	wrong bool        // answer since another run
	fail  error
}

var _ lakegc.CommittedChanges = (*changesHost)(nil)

func (h *changesHost) CommittedChanges(ctx context.Context, since, run string, active []retention.ActiveCommit) (*sweep.Changes, error) {
	h.calls = append(h.calls, [2]string{since, run})
	if h.fail != nil {
		return nil, h.fail
	}
	if since == "" {
		return nil, nil
	}
	if h.wrong {
		since += "x"
	}
	none := func(func(string, error) bool) {}
	return &sweep.Changes{Since: since, Added: none, Removed: none}, nil
}

// Collect asks a CommittedChanges host on every run for the changes since
// the run an optimized mark starts from, naming this run; changes since
// another run, or an error, fail the cycle before anything is deleted.
func TestCollectAsksForChangesSinceThePreviousRun(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	h := &changesHost{memHost: w.host}
	host := lakegc.Host{Staging: w.host, Commits: w.host, Committed: h}
	cfg := w.config()
	cfg.Optimized = true
	first, err := lakegc.Collect(ctx, host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	next, err := lakegc.Collect(ctx, host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"", first.RunID}, {first.RunID, next.RunID}}
	if !slices.Equal(h.calls, want) {
		t.Errorf("CommittedChanges asked %q, want %q", h.calls, want)
	}
	w.expectMarked(next.RunID)

	cfg.Sweep = true
	h.wrong = true
	if _, err := lakegc.Collect(ctx, host, cfg); !errors.Is(err, lakegc.ErrInvalidInput) {
		t.Errorf("changes since another run: %v", err)
	}
	h.wrong, h.fail = false, errors.New("changeshost: no journal")
	if _, err := lakegc.Collect(ctx, host, cfg); err == nil {
		t.Error("a failing CommittedChanges: no error")
	}
	if gone := w.expectLiveKept(); len(gone) > 0 {
		t.Errorf("failed cycles deleted %q", gone)
	}
}
