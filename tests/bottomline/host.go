package main

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
	"github.com/lakegc/lakegc/uncommitted"
)

// Scale is the size of the synthetic repository. Of every period of 20
// objects of the namespace, 1 is garbage (an object of an expired commit),
// 5 are staged and 14 committed: the target's 1 M, 5 M and 14 M of 20 M.
type Scale struct {
	Objects  int // in the namespace, a multiple of 20
	Slices   int // folders of the data prefix, sharing the objects
	Branches int // each with Commits/Branches commits in a chain
	Commits  int
}

// period and the classes of an object's position in it.
const (
	period       = 20
	stagedPer    = 5
	committedPer = 14
	garbagePer   = 1
)

func (s Scale) validate() error {
	switch {
	case s.Objects <= 0 || s.Objects%period != 0:
		return fmt.Errorf("objects %d: a positive multiple of %d", s.Objects, period)
	case s.Slices <= 0 || s.Slices > s.Objects:
		return fmt.Errorf("slices %d: between 1 and the objects", s.Slices)
	case s.Branches <= 0 || s.Commits%s.Branches != 0 || s.Commits/s.Branches < 12:
		return fmt.Errorf("commits %d over %d branches: at least 12 a branch, as many on each", s.Commits, s.Branches)
	case s.Commits > 1e6:
		return fmt.Errorf("commits %d: at most a million", s.Commits)
	}
	return nil
}

func (s Scale) staged() int    { return s.Objects / period * stagedPer }
func (s Scale) committed() int { return s.Objects / period * committedPer }
func (s Scale) garbage() int   { return s.Objects / period * garbagePer }
func (s Scale) perBranch() int { return s.Commits / s.Branches }

// Positions of the classes in the namespace (object g of slice g/perSlice).
func stagedAt(k int) int    { return k/stagedPer*period + garbagePer + k%stagedPer }
func committedAt(q int) int { return q/committedPer*period + garbagePer + stagedPer + q%committedPer }
func garbageAt(r int) int   { return r * period }

// Each branch is a chain of commits: the last recent ones hold the
// committed objects, the oldest ones the garbage, and between them one
// commit holds nothing: the retention keeps it (it was the branch's head
// when the retention period began), whatever the rules' edge cases.
const recentCommits = 10

// host is a synthetic repository: its staging area, commits and committed
// addresses are generated, none held.
type host struct {
	sc       Scale
	now      time.Time
	perSlice int
	slices   []s3sim.Slice // in the order of the objects, each with its Name
	rangeN   int           // committed objects a range holds (0: DefaultRangeEntries)
	tables   bool          // the store holds the ranges' tables (Options.Parts)
	// ch is what changed since the first cycle; nil in the first.
	ch *churn
}

// objectAge is how old every object of the first cycle is, well past any cutoff.
const objectAge = 90 * 24 * time.Hour

func newHost(sc Scale, now time.Time) (*host, error) {
	if err := sc.validate(); err != nil {
		return nil, err
	}
	h := &host{sc: sc, now: now, perSlice: (sc.Objects + sc.Slices - 1) / sc.Slices}
	mod := now.Add(-objectAge)
	for s := range sc.Slices {
		n := min(h.perSlice, sc.Objects-s*h.perSlice)
		if n <= 0 {
			break
		}
		// Slices started an hour apart, the newest a day before the objects.
		id := pathprovider.DescendingID(mod.Add(-time.Duration(s) * time.Hour)).String()
		prefix := "data/" + id + "/"
		h.slices = append(h.slices, s3sim.Slice{Prefix: prefix, Count: n, Name: s3sim.XIDNames(prefix, mod), ModTime: mod, Size: 1 << 10})
	}
	// Slices of perSlice objects: fewer than asked when they do not divide
	// the objects.
	h.sc.Slices = len(h.slices)
	return h, nil
}

// description returns the namespace's slices, in key order.
func (h *host) description() []s3sim.Slice {
	d := append([]s3sim.Slice(nil), h.slices...)
	for i := range d {
		// The store's default names are these (XIDNames of the prefix and
		// the time), which it writes into an inventory without a string.
		d[i].Name = nil
	}
	sort.Slice(d, func(i, j int) bool { return d[i].Prefix < d[j].Prefix })
	return d
}

// address is the key of object g.
func (h *host) address(g int) string {
	s := g / h.perSlice
	return h.slices[s].Prefix + h.slices[s].Name(g%h.perSlice)
}

// sliceOrder returns the position in description() of each slice.
func (h *host) sliceOrder() []int {
	order := make([]int, len(h.slices))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return h.slices[order[i]].Prefix < h.slices[order[j]].Prefix })
	pos := make([]int, len(order))
	for p, s := range order {
		pos[s] = p
	}
	return pos
}

// garbageCommit is the commit of garbage object r: one of each branch's
// oldest commits, which the rules expire.
func (h *host) garbageCommit(r int) int {
	b := r % h.sc.Branches
	return b*h.sc.perBranch() + (r/h.sc.Branches)%(h.sc.perBranch()-recentCommits-1)
}

// committedCommit is the commit of committed object q: one of each
// branch's recent commits.
func (h *host) committedCommit(q int) int {
	b := q % h.sc.Branches
	return b*h.sc.perBranch() + h.sc.perBranch() - recentCommits + (q/h.sc.Branches)%recentCommits
}

// Rules keep 30 days; the old commits are 60 days old and more, the recent
// ones hours old.
var rules = &retention.Rules{DefaultRetentionDays: 30}

func commitID(c int) string   { return fmt.Sprintf("c%07d", c) }
func branchID(b int) string   { return fmt.Sprintf("b%06d", b) }
func stagedPath(k int) string { return fmt.Sprintf("p/%010d", k) }
func parseNum(s, p string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(s, p))
	if err != nil || !strings.HasPrefix(s, p) {
		return -1
	}
	return n
}

func (h *host) commit(c int) retention.Commit {
	j := c % h.sc.perBranch()
	cm := retention.Commit{ID: commitID(c), MetaRangeID: "mr" + commitID(c), Version: 1}
	if j > 0 {
		cm.Parents = []string{commitID(c - 1)}
	}
	if old := h.sc.perBranch() - recentCommits; j < old {
		cm.CreationDate = h.now.Add(-60*24*time.Hour - time.Duration(old-j)*time.Hour)
	} else {
		cm.CreationDate = h.now.Add(-time.Duration(h.sc.perBranch()-j) * time.Hour)
	}
	return cm
}

// gen yields f(i) for i from from to n-1, then ctx's error if it ended.
func gen[T any](ctx context.Context, from, n, step int, f func(int) T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for i := from; i < n; i += step {
			if i%4096 == 0 && ctx.Err() != nil {
				break
			}
			if !yield(f(i), nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}

// Branches implements uncommitted.Source.
func (h *host) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	first := sort.Search(h.sc.Branches, func(b int) bool { return branchID(b) >= from })
	return gen(ctx, first, h.sc.Branches, 1, branchID)
}

// Uncommitted implements uncommitted.Source: staged object k is on branch
// k mod Branches, and so are the churn's new staged object k and late
// object k (their paths sort after the first cycle's).
func (h *host) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	b := parseNum(branch, "b")
	if b < 0 || b >= h.sc.Branches {
		return func(yield func(uncommitted.Entry, error) bool) {
			yield(uncommitted.Entry{}, fmt.Errorf("branch %q: %w", branch, uncommitted.ErrBranchNotFound))
		}
	}
	created := h.now.Add(-objectAge)
	nb := h.sc.Branches
	return func(yield func(uncommitted.Entry, error) bool) {
		for _, l := range h.stagedLists() {
			n := max(0, (l.n-b+nb-1)/nb) // of the list's objects on b
			first := sort.Search(n, func(j int) bool { return l.path(b+j*nb) >= from })
			for j := first; j < n; j++ {
				if j%4096 == 0 && ctx.Err() != nil {
					yield(uncommitted.Entry{}, ctx.Err())
					return
				}
				k := b + j*nb
				if l.dropped != nil && l.dropped(k) {
					continue
				}
				if !yield(uncommitted.Entry{Key: l.path(k), PhysicalAddress: l.address(k), CreationDate: created}, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(uncommitted.Entry{}, err)
		}
	}
}

// stagedList is one run of staged objects, k from 0 to n-1, each on
// branch k mod Branches, in the order of their paths.
type stagedList struct {
	n       int
	path    func(k int) string
	address func(k int) string
	dropped func(k int) bool // unstaged since (nil: none)
}

func (h *host) stagedLists() []stagedList {
	lists := []stagedList{{n: h.sc.staged(), path: stagedPath, address: func(k int) string { return h.address(stagedAt(k)) }}}
	if ch := h.ch; ch != nil {
		lists[0].dropped = ch.droppedStaged
		lists = append(lists,
			stagedList{n: ch.objects / period * stagedPer, path: newStagedPath, address: func(k int) string { return ch.address(stagedAt(k)) }},
			stagedList{n: len(ch.late), path: latePath, address: func(k int) string { return ch.late[k] }})
	}
	return lists
}

// Heads implements lakegc.Commits: each branch's last commit.
func (h *host) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	return gen(ctx, 0, h.sc.Branches, 1, func(b int) retention.Branch {
		return retention.Branch{ID: branchID(b), CommitID: commitID((b+1)*h.sc.perBranch() - 1)}
	})
}

// List implements lakegc.Commits.
func (h *host) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return gen(ctx, 0, h.sc.Commits, 1, h.commit)
}

// Get implements lakegc.Commits.
func (h *host) Get(ctx context.Context, id string) (retention.Commit, error) {
	c := parseNum(id, "c")
	if c < 0 || c >= h.sc.Commits || id != commitID(c) {
		return retention.Commit{}, fmt.Errorf("commit %q not found", id)
	}
	return h.commit(c), ctx.Err()
}

// CommittedAddresses implements lakegc.Committed: the objects whose commit
// is active, committed and garbage alike (garbage whose commit the rules
// keep is not garbage); after the churn, less the committed objects of the
// region it rewrote, plus its new committed ones. The host gives the same
// set as parts through partsHost.
func (h *host) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		kept := make([]bool, h.sc.Commits)
		for _, a := range active {
			c := parseNum(a.CommitID, "c")
			if c < 0 || c >= h.sc.Commits {
				yield("", fmt.Errorf("commit %q not found", a.CommitID))
				return
			}
			kept[c] = true
		}
		none := func(int) bool { return false }
		dropped := none
		if h.ch != nil {
			dropped = h.ch.droppedCommitted
		}
		for _, class := range []struct {
			n       int
			commit  func(int) int
			at      func(int) int
			dropped func(int) bool // its commits expired since the first cycle
		}{{h.sc.committed(), h.committedCommit, committedAt, dropped}, {h.sc.garbage(), h.garbageCommit, garbageAt, none}} {
			for i := range class.n {
				if i%4096 == 0 && ctx.Err() != nil {
					yield("", ctx.Err())
					return
				}
				if class.dropped(i) {
					continue
				}
				if kept[class.commit(i)] && !yield(h.address(class.at(i)), nil) {
					return
				}
			}
		}
		// The churn's new committed objects, in the branches' heads.
		if ch := h.ch; ch != nil {
			for q := range ch.objects / period * committedPer {
				if q%4096 == 0 && ctx.Err() != nil {
					yield("", ctx.Err())
					return
				}
				if !yield(ch.address(committedAt(q)), nil) {
					return
				}
			}
		}
	}
}
