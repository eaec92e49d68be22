package lakegc_test

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// partsHost is memHost whose commits are the parts of its committed data:
// a commit's tree never changes, so its ID names its addresses for ever.
type partsHost struct {
	*memHost
	opened []string
	tail   string // if set, an address every part yields last
	// flaky: a part's full addresses are missing from every other read
	// of it, starting with the first.
	flaky bool
	// serial: the mark reads one part at a time (else 3 at once).
	serial bool
}

var _ lakegc.CommittedParts = (*partsHost)(nil)

func (h *partsHost) CommittedParts(_ context.Context, active []retention.ActiveCommit) (*sweep.Parts, error) {
	var ids []string
	for _, a := range active {
		ids = append(ids, a.CommitID)
	}
	ahead := 3
	if h.serial {
		ahead = 0
	}
	return &sweep.Parts{IDs: ids, ReadAhead: ahead, Open: func(ctx context.Context, id string) iter.Seq2[string, error] {
		h.mu.Lock()
		hide := h.flaky && strings.Count(strings.Join(h.opened, "\n")+"\n", id+"\n")%2 == 0
		h.opened = append(h.opened, id)
		var rel, full []string
		if c, ok := h.commits[id]; ok {
			for _, a := range slices.Sorted(maps.Values(c.tree)) {
				if nsaddr.IsFull(a) {
					if !hide {
						full = append(full, a)
					}
				} else {
					rel = append(rel, a)
				}
			}
		}
		h.mu.Unlock()
		if h.tail != "" {
			rel = append(rel, h.tail)
		}
		// The full addresses anywhere: here, first.
		return each(h.memHost, ctx, slices.Compact(append(full, rel...)))
	}}, nil
}

func (h *partsHost) host() lakegc.Host {
	return lakegc.Host{Staging: h.memHost, Commits: h.memHost, Committed: h}
}

// A host whose committed data are parts gives them to the mark; an
// optimized cycle after it reads only the parts that changed (here none),
// and both mark exactly the garbage, a full address's object kept.
func TestCollectCommittedParts(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := range 12 {
		slice := pathprovider.DescendingID(gcTime.Add(-time.Duration(60+i) * 24 * time.Hour)).String()
		w.object("data/"+slice+"/"+pathprovider.DescendingID(gcTime.Add(-time.Duration(i)*time.Minute)).String(), 60*24*time.Hour, false, "in a slice, in nothing")
	}
	h := &partsHost{memHost: w.host}
	cfg := w.config()
	cfg.Optimized = true
	garbage := slices.Sorted(maps.Keys(w.garbage))
	first, err := lakegc.Collect(ctx, h.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Collect reads each part once: its addresses fit a buffer (see
	// CommittedParts).
	if s := first.Mark.Summary; s.KeepSource != sweep.KeepParts || s.PartsRead != int64(len(h.opened)) || len(h.opened) == 0 {
		t.Fatalf("first run: keep set from %q, %d parts read, %d opened", s.KeepSource, s.PartsRead, len(h.opened))
	}
	if got := w.candidates(first.RunID); !slices.Equal(got, garbage) {
		t.Fatalf("first run marks %q, want %q", got, garbage)
	}
	h.opened = nil
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	next, err := lakegc.Collect(ctx, h.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := next.Mark.Summary
	if s.RunKind != sweep.RunOptimized || s.KeepSource != sweep.KeepPartsChanged || s.PartsRead != 0 || len(h.opened) != 0 {
		t.Fatalf("next run: %s, keep set from %q, %d parts read (%q)", s.RunKind, s.KeepSource, s.PartsRead, h.opened)
	}
	if got := w.candidates(next.RunID); !slices.Equal(got, garbage) {
		t.Fatalf("next run marks %q, want %q", got, garbage)
	}
	if _, err := lakegc.SweepRun(ctx, w.config(), next.RunID); err != nil {
		t.Fatal(err)
	}
	if gone := w.expectLiveKept(); !slices.Equal(gone, garbage) {
		t.Errorf("swept %q, want %q", gone, garbage)
	}
	// A part whose relative addresses go back fails the cycle.
	bad := &partsHost{memHost: h.memHost, tail: "data/old/0"}
	cfg.Clock = func() time.Time { return gcTime.Add(2 * time.Hour) }
	cfg.Optimized = false
	if _, err := lakegc.Collect(ctx, bad.host(), cfg); err == nil || !strings.Contains(err.Error(), "after") {
		t.Errorf("parts out of order: %v", err)
	}
}

// A host whose part does not name the same addresses on the two reads
// Collect makes of a part too large for its buffer (here every part: a
// bound of 0; the part's full addresses are missing from the first read)
// fails the cycle: the full address's object must not be marked.
func TestCollectCommittedPartsReadsDiffer(t *testing.T) {
	lakegc.LimitPartBuffers(t, 0, 1<<20)
	w := newWorld(t)
	ctx := context.Background()
	h := &partsHost{memHost: w.host, flaky: true}
	cfg := w.config()
	// Two days on: the object at the full address is older than the cutoff.
	cfg.Clock = func() time.Time { return gcTime.Add(48 * time.Hour) }
	sum, err := lakegc.Collect(ctx, h.host(), cfg)
	if err == nil {
		t.Fatalf("a part read twice with other full addresses: no error, marks %q", w.candidates(sum.RunID))
	}
	if !strings.Contains(err.Error(), "differ") {
		t.Errorf("error %v", err)
	}
}

// Parts read several at once count the foreign addresses they hold as parts
// read one at a time do (under -race: without a data race), and mark the
// same garbage.
func TestCollectPartsReadAheadForeign(t *testing.T) {
	var foreign [2]int64
	for i, serial := range []bool{true, false} {
		w := newWorld(t)
		h := w.host
		h.createBranch("imports", "main")
		for c := range 6 {
			for j := range 3 {
				h.stage("imports", uncommitted.Entry{Key: fmt.Sprintf("imp-%d-%d", c, j), PhysicalAddress: fmt.Sprintf("gs://elsewhere/%d-%d.parquet", c, j), AddressType: uncommitted.Full})
			}
			h.commit("imports", w.commitAt(fmt.Sprintf("i%d", c), 1))
		}
		ph := &partsHost{memHost: h, serial: serial}
		rep, err := lakegc.Collect(context.Background(), ph.host(), w.config())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := w.candidates(rep.RunID), slices.Sorted(maps.Keys(w.garbage)); !slices.Equal(got, want) {
			t.Errorf("serial %v: marks %q, want %q", serial, got, want)
		}
		foreign[i] = rep.Mark.Foreign
	}
	// Each of the 6 commits holds the imports of those before it and its own.
	if foreign[0] < 3*21 || foreign[1] != foreign[0] {
		t.Errorf("foreign addresses: %d one part at a time, %d read ahead; want at least %d, the same", foreign[0], foreign[1], 3*21)
	}
}
