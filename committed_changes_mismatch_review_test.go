package lakegc_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// respellHost is an honest CommittedChanges host whose second state spells
// a live object's address in another spelling of the namespace: the changes
// add that spelling and remove the relative one. Read in full, the second
// state's addresses fail the cycle with ErrNamespaceMismatch; the changes
// must too, before anything is marked. (The reverse move cannot reach the
// changes: the first state, read in full, fails.)
type respellHost struct {
	*memHost
	rel, other string
	second     bool
	first      string
}

// CommittedAddresses of the second state fails if read: the mismatch must
// then come from the changes, which the optimized mark reads in its place.
func (h *respellHost) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	base := h.memHost.CommittedAddresses(ctx, active)
	return func(yield func(string, error) bool) {
		if h.second {
			yield("", errors.New("second state read in full"))
			return
		}
		for a, err := range base {
			if !yield(a, err) || err != nil {
				return
			}
		}
		yield(h.rel, nil)
	}
}

func (h *respellHost) CommittedChanges(ctx context.Context, since, run string, active []retention.ActiveCommit) (*sweep.Changes, error) {
	if since == "" || since != h.first {
		if h.first == "" {
			h.first = run
		}
		return nil, nil
	}
	return &sweep.Changes{Since: since, Added: values([]string{h.other}), Removed: values([]string{h.rel})}, nil
}

func TestCollectChangesRespelledNamespaceMismatch(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	var live string
	for i := range 8 {
		slice := pathprovider.DescendingID(gcTime.Add(-time.Duration(60+i) * 24 * time.Hour)).String()
		key := w.object("data/"+slice+"/"+pathprovider.DescendingID(gcTime.Add(-time.Duration(i)*time.Minute)).String(), 60*24*time.Hour, i == 0, "in a slice")
		if i == 0 {
			live = key
		}
	}
	// "file:/abs/…" names the place of the namespace "file:///abs".
	other := "file:" + strings.TrimPrefix(w.ns, "file://") + "/" + live
	h := &respellHost{memHost: w.host, rel: live, other: other}
	host := lakegc.Host{Staging: w.host, Commits: w.host, Committed: h}
	cfg := w.config()
	cfg.Optimized = true
	if _, err := lakegc.Collect(ctx, host, cfg); err != nil {
		t.Fatal(err)
	}
	h.second = true
	cfg.Clock = func() time.Time { return gcTime.Add(time.Hour) }
	cfg.Sweep = true
	_, err := lakegc.Collect(ctx, host, cfg)
	if !errors.Is(err, lakegc.ErrNamespaceMismatch) {
		t.Fatalf("second cycle: %v, want ErrNamespaceMismatch", err)
	}
	if gone := w.expectLiveKept(); len(gone) > 0 {
		t.Errorf("deleted %q after a mismatch", gone)
	}
}
