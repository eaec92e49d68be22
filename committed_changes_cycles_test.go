package lakegc_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// journalHost is an honest CommittedChanges host over a memHost: it keeps
// the addresses CommittedAddresses yields for each run's active commits
// (repeats and both spellings of an object included), and answers the
// changes since a run it knows with their multiset difference.
type journalHost struct {
	*memHost
	seen map[string][]string // run → its addresses, sorted
}

var _ lakegc.CommittedChanges = (*journalHost)(nil)

func (h *journalHost) CommittedChanges(ctx context.Context, since, run string, active []retention.ActiveCommit) (*sweep.Changes, error) {
	var now []string
	for a, err := range h.memHost.CommittedAddresses(ctx, active) {
		if err != nil {
			return nil, err
		}
		now = append(now, a)
	}
	slices.Sort(now)
	h.seen[run] = now
	then, ok := h.seen[since]
	if since == "" || !ok {
		return nil, nil
	}
	return &sweep.Changes{Since: since, Added: values(multisetDiff(now, then)), Removed: values(multisetDiff(then, now))}, nil
}

// multisetDiff returns a − b, multisets as sorted slices with repeats.
func multisetDiff(a, b []string) []string {
	var out []string
	for len(a) > 0 {
		switch {
		case len(b) == 0 || a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case a[0] == b[0]:
			a, b = a[1:], b[1:]
		default:
			b = b[1:]
		}
	}
	return out
}

func values(s []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, v := range s {
			if !yield(v, nil) {
				return
			}
		}
	}
}

// TestCollectChangesCycles runs optimized cycles (with sweep) over a
// repository whose commits come and expire, and whose objects are committed
// by their relative or full address, some by both (two paths, or a path
// that moves from one spelling to the other), with an honest
// CommittedChanges host; beside each, at the same moment, a clean dry run
// under another storage prefix. The optimized mark's candidates that exist
// must be exactly the clean mark's, and the changes must have been used.
// LAKEGC_CHANGES_CYCLES=n runs n cycles (default 14).
func TestCollectChangesCycles(t *testing.T) {
	cycles := 14
	if s := os.Getenv("LAKEGC_CHANGES_CYCLES"); s != "" {
		var err error
		if cycles, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testChangesCycles(t, seed, cycles) })
	}
}

func testChangesCycles(t *testing.T, seed uint64, cycles int) {
	ctx := context.Background()
	w := newWorld(t)
	r := rand.New(rand.NewPCG(seed, 28))
	h := &journalHost{memHost: w.host, seen: map[string][]string{}}
	host := lakegc.Host{Staging: w.host, Commits: w.host, Committed: h}
	now := gcTime
	rules := &retention.Rules{DefaultRetentionDays: 2, BranchRetentionDays: map[string]int32{"main": 3}}
	opt := w.config()
	opt.Rules, opt.Optimized, opt.Sweep = rules, true, true
	opt.Clock = func() time.Time { return now }
	clean := opt
	clean.Optimized, clean.Sweep, clean.StoragePrefix = false, false, "_clean"

	n := 0
	put := func(at time.Time) string {
		n++
		key := fmt.Sprintf("data/old/n%03d", n)
		if r.IntN(2) == 0 {
			key = "data/" + pathprovider.DescendingID(at.Add(-time.Duration(r.IntN(5))*time.Hour)).String() + "/" + pathprovider.DescendingID(at.Add(time.Duration(n)*time.Second)).String()
		}
		if err := w.bucket.WriteAll(ctx, key, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(w.dir, filepath.FromSlash(key)), at, at); err != nil {
			t.Fatal(err)
		}
		return key
	}
	spell := func(key string, full bool) uncommitted.Entry {
		if full {
			return uncommitted.Entry{Key: "p" + strconv.Itoa(r.IntN(1e6)), PhysicalAddress: w.ns + "/" + key, AddressType: uncommitted.Full}
		}
		return entry("p"+strconv.Itoa(r.IntN(1e6)), key)
	}
	// stageSome stages new objects on branch, some by two addresses, and
	// deletes or respells some of its committed paths.
	stageSome := func(branch string) {
		for range 1 + r.IntN(4) {
			key := put(now.Add(-3 * 24 * time.Hour))
			full := r.IntN(2) == 0
			w.host.stage(branch, spell(key, full))
			if r.IntN(3) == 0 {
				w.host.stage(branch, spell(key, !full)) // the other spelling too
			}
		}
		w.host.mu.Lock()
		tree := map[string]string{}
		if c, ok := w.host.commits[w.host.branches[branch].head]; ok {
			tree = c.tree
		}
		paths := slices.Sorted(func(yield func(string) bool) {
			for p := range tree {
				if !yield(p) {
					return
				}
			}
		})
		w.host.mu.Unlock()
		for range r.IntN(3) {
			if len(paths) == 0 {
				break
			}
			p := paths[r.IntN(len(paths))]
			if r.IntN(2) == 0 {
				w.host.stage(branch, uncommitted.Entry{Key: p, Tombstone: true})
				continue
			}
			// The same object, by its other spelling, at the same path.
			a, full := tree[p], false
			if rel, ok := cutNS(a, w.ns); ok {
				a = rel
			} else {
				full = true
			}
			e := spell(a, full)
			e.Key = p
			w.host.stage(branch, e)
		}
	}
	var used, optimized, marked int
	for cycle := range cycles {
		now = now.Add(time.Duration(12+r.IntN(36)) * time.Hour)
		stageSome("main")
		w.host.commit("main", retention.Commit{ID: fmt.Sprintf("m%02d", cycle), CreationDate: now.Add(-time.Hour), MetaRangeID: fmt.Sprintf("mr-m%02d", cycle)})
		if r.IntN(2) == 0 {
			b := fmt.Sprintf("b%02d", cycle)
			w.host.createBranch(b, "main")
			stageSome(b)
			w.host.commit(b, retention.Commit{ID: "c" + b, CreationDate: now.Add(-time.Hour), MetaRangeID: "mr-c" + b})
		}
		for _, b := range slices.Sorted(func(yield func(string) bool) {
			for id := range w.host.branches {
				if id[0] == 'b' && !yield(id) {
					return
				}
			}
		}) {
			if r.IntN(3) == 0 {
				w.host.deleteBranch(b)
			}
		}
		present := map[string]bool{}
		for k, err := range listKeys(ctx, w) {
			if err != nil {
				t.Fatal(err)
			}
			present[k] = true
		}
		crep, err := lakegc.Collect(ctx, host, clean)
		if err != nil {
			t.Fatalf("cycle %d: clean: %v", cycle, err)
		}
		orep, err := lakegc.Collect(ctx, host, opt)
		if err != nil {
			t.Fatalf("cycle %d: optimized: %v", cycle, err)
		}
		s := orep.Mark.Summary
		if s.RunKind == sweep.RunOptimized {
			optimized++
		}
		if s.KeepSource == sweep.KeepChanges {
			used++
		}
		want := existing(t, w, "_clean", crep.RunID, present)
		marked += len(want)
		got := existing(t, w, lakegc.DefaultStoragePrefix, orep.RunID, present)
		if !slices.Equal(got, want) {
			t.Fatalf("cycle %d: optimized run %s (%s, keep source %q, %s) marks\n %q\nthe clean run marks\n %q", cycle, orep.RunID, s.RunKind, s.KeepSource, s.CleanReason, got, want)
		}
		// What a HEAD or a staging area references exists.
		w.host.mu.Lock()
		var refs []string
		for _, b := range w.host.branches {
			if c, ok := w.host.commits[b.head]; ok {
				for _, a := range c.tree {
					refs = append(refs, a)
				}
			}
			for _, e := range b.staging {
				refs = append(refs, e.PhysicalAddress)
			}
		}
		w.host.mu.Unlock()
		for _, a := range refs {
			if rel, ok := cutNS(a, w.ns); ok {
				a = rel
			}
			if a != "" && !w.exists(a) {
				t.Fatalf("cycle %d: referenced object %s was deleted", cycle, a)
			}
		}
	}
	t.Logf("%d cycles: %d optimized, %d from the host's changes; %d objects marked", cycles, optimized, used, marked)
	if used == 0 || marked == 0 {
		t.Error("no cycle used the host's changes, or none marked anything")
	}
}

// cutNS returns the key of a full address under ns.
func cutNS(a, ns string) (string, bool) {
	if len(a) > len(ns)+1 && a[:len(ns)+1] == ns+"/" {
		return a[len(ns)+1:], true
	}
	return "", false
}

// listKeys lists the data folder's objects.
func listKeys(ctx context.Context, w *world) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		it := w.bucket.List(&blob.ListOptions{Prefix: "data/"})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield("", err)
				return
			}
			if !yield(obj.Key, nil) {
				return
			}
		}
	}
}

// existing returns the candidates of run under prefix that were present.
func existing(t *testing.T, w *world, prefix, run string, present map[string]bool) []string {
	t.Helper()
	var out []string
	for k, err := range sweep.Candidates(context.Background(), w.bucket, prefix, run) {
		if err != nil {
			t.Fatalf("candidates of %s: %v", run, err)
		}
		if present[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
