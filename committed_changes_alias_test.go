package lakegc_test

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// aliasHost is an honest CommittedChanges host whose first state also holds
// a second spelling of a live object's address (its full address), and
// whose next state drops that spelling: the changes since the first run
// remove the full address, while the relative one stays committed.
type aliasHost struct {
	*memHost
	stays   string // an address of every state
	extra   string // another spelling of its key, of the first state only
	dropped bool
	first   string // the run of the first state
}

func (h *aliasHost) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	base := h.memHost.CommittedAddresses(ctx, active)
	if h.dropped {
		return func(yield func(string, error) bool) {
			for a, err := range base {
				if !yield(a, err) || err != nil {
					return
				}
			}
			yield(h.stays, nil)
		}
	}
	return func(yield func(string, error) bool) {
		for a, err := range base {
			if !yield(a, err) || err != nil {
				return
			}
		}
		_ = yield(h.stays, nil) && yield(h.extra, nil)
	}
}

func (h *aliasHost) CommittedChanges(ctx context.Context, since, run string, active []retention.ActiveCommit) (*sweep.Changes, error) {
	if since == "" || since != h.first {
		if h.first == "" {
			h.first = run
		}
		return nil, nil
	}
	removed := slices.Values([]string{h.extra})
	return &sweep.Changes{Since: since,
		Added: func(func(string, error) bool) {},
		Removed: func(yield func(string, error) bool) {
			for a := range removed {
				if !yield(a, nil) {
					return
				}
			}
		}}, nil
}

// An address removed from the committed set whose key another, still
// committed, address also maps to must not leave that key unkept: Collect
// hands the changes to Mark, which counts the key once for each address
// that holds it, so removing one spelling leaves the other's count, and
// the object is kept.
func TestCollectChangesRemovingAnAliasKeepsTheKey(t *testing.T) {
	t.Run("full removed", func(t *testing.T) { testRemovingAnAlias(t, false) })
	t.Run("relative removed", func(t *testing.T) { testRemovingAnAlias(t, true) })
}

func testRemovingAnAlias(t *testing.T, relRemoved bool) {
	ctx := context.Background()
	w := newWorld(t)
	var live string
	for i := range 12 {
		slice := pathprovider.DescendingID(gcTime.Add(-time.Duration(60+i) * 24 * time.Hour)).String()
		key := w.object("data/"+slice+"/"+pathprovider.DescendingID(gcTime.Add(-time.Duration(i)*time.Minute)).String(), 60*24*time.Hour, i == 0, "in a slice")
		if i == 0 {
			live = key
			w.live[live] = "committed by its relative address, and first by its full one too"
		}
	}
	h := &aliasHost{memHost: w.host, stays: live, extra: w.ns + "/" + live}
	if relRemoved {
		h.stays, h.extra = h.extra, h.stays
	}
	host := lakegc.Host{Staging: w.host, Commits: w.host, Committed: h}
	cfg := w.config()
	cfg.Optimized = true
	if _, err := lakegc.Collect(ctx, host, cfg); err != nil {
		t.Fatal(err)
	}
	h.dropped = true
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	cfg.Sweep = true
	rep, err := lakegc.Collect(ctx, host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Mark.Summary; s.RunKind != sweep.RunOptimized || s.KeepSource != sweep.KeepChanges {
		t.Fatalf("second cycle: a %s run, keep source %q (%s): the changes were not used", s.RunKind, s.KeepSource, s.CleanReason)
	}
	w.expectLiveKept()
	w.expectMarked(rep.RunID)
}
