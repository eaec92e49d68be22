package retention

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// A Commit is what ActiveCommits needs to know of a commit.
type Commit struct {
	// ID identifies the commit; it must not be empty.
	ID string
	// Parents are the IDs of the parent commits; a merge has several.
	Parents []string
	// CreationDate is when the commit was made.
	CreationDate time.Time
	// MetaRangeID names the commit's metarange, reported for active
	// commits. A store without metaranges leaves it empty: it is only
	// handed back with the kept commits (ActiveCommit) and written to the
	// commits report.
	MetaRangeID string
	// Version is lakeFS's commit version: before version 1
	// (ParentSwitchVersion) a merge listed its main parent last. A store
	// without commit versions lists a merge's main parent (the history of
	// the branch merged into) first and sets 1: the zero value reads it
	// last.
	Version int
}

// mainParent returns the parent whose history is the commit's own, or ""
// for a commit without parents.
func (c *Commit) mainParent() string {
	switch {
	case len(c.Parents) == 0:
		return ""
	case c.Version < 1:
		return c.Parents[len(c.Parents)-1]
	default:
		return c.Parents[0]
	}
}

// lakeFSParent returns the parent lakeFS's dangling test counts as the
// commit's first parent: Parents[1] for a commit of version 0 with several
// parents. It differs from mainParent only for a version-0 merge of three or
// more parents, whose walk follows the last one.
func (c *Commit) lakeFSParent() string {
	if c.Version < 1 && len(c.Parents) > 1 {
		return c.Parents[1]
	}
	return c.mainParent()
}

// A Branch is a branch's name and the ID of its HEAD commit.
type Branch struct {
	ID, CommitID string
}

// A Tag is a tag's name and the ID of the commit it points to.
type Tag struct {
	ID, CommitID string
}

// Tags is what a [CommitSource] that knows its repository's tags
// implements too: [ActiveCommitsExtended] finds it by a type assertion and,
// with [Extended].KeepTags, keeps every tagged commit. A source without it
// has no tags.
type Tags interface {
	// Tags yields every tag of the repository.
	Tags(ctx context.Context) iter.Seq2[Tag, error]
}

// DefaultBranch is what a [CommitSource] that knows its repository's
// default branch implements too: the stale-branch rule
// ([Extended].StaleBranchDays) never applies to that branch, and
// [ActiveCommitsExtended] refuses the rule for a source without it, and
// when the branch it names is not among the branches.
type DefaultBranch interface {
	// DefaultBranch returns the ID of the repository's default branch.
	DefaultBranch(ctx context.Context) (string, error)
}

// A CommitSource gives ActiveCommits the commits of a repository.
type CommitSource interface {
	// List yields every commit of the repository, once each, in any order.
	List(ctx context.Context) iter.Seq2[Commit, error]
	// Get returns one commit. ActiveCommits calls it only for commits that
	// List did not yield, such as a HEAD committed after List began.
	Get(ctx context.Context, id string) (Commit, error)
}

// An ActiveCommit is a commit that garbage collection keeps, with the
// metarange that lists its objects.
type ActiveCommit struct {
	CommitID, MetaRangeID string
}

// ActiveCommits returns the commits that rules keep at time now, sorted by
// CommitID. The package documentation gives the semantics: every commit
// lakeFS keeps, and the commits lakeFS expires where it departs from its own
// rules (see "Differences from lakeFS").
//
// ActiveCommits reads branches, then commits.List once, then calls
// commits.Get for every HEAD or main parent that List did not yield. A main
// parent that Get cannot return either is an error: without its ancestry the
// result could miss live commits. Every error of branches, commits and ctx is
// returned, wrapped; so are invalid rules (wrapping [ErrInvalidRules]), the
// zero rules, which are no rules (wrapping [ErrNotFound]: keep every commit), a
// commit ID, main parent ID, branch HEAD or Parents[1] of a version-0 merge
// (lakeFS's dangling test reads it) that is empty or longer than 64 KiB, and
// a commit that Get returns under another ID. Get is called once per commit,
// so a CommitSource that keeps naming new ancestors is stopped only by ctx.
//
// Memory is about 110 bytes per commit for lakeFS's hexadecimal IDs, plus the
// result.
func ActiveCommits(ctx context.Context, branches iter.Seq2[Branch, error], commits CommitSource, rules *Rules, now time.Time) ([]ActiveCommit, error) {
	return ActiveCommitsExtended(ctx, branches, commits, rules, nil, now)
}

// ActiveCommitsExtended is [ActiveCommits] with lakegc's extended rules
// beside lakeFS's (see the package documentation, "Extended rules"). With a
// nil or zero ext it is ActiveCommits. Besides ActiveCommits' errors, it
// returns invalid extended rules (wrapping [ErrInvalidRules]), an error of
// the source's [Tags] when ext.KeepTags, and, when ext.StaleBranchDays is
// set, an error if commits is not a [DefaultBranch], names none, or names
// one that is not among branches (when there are any): without it the rule
// could unprotect the default branch. Memory is ActiveCommits',
// plus 4 bytes per commit when a KeepLast rule applies.
func ActiveCommitsExtended(ctx context.Context, branches iter.Seq2[Branch, error], commits CommitSource, rules *Rules, ext *Extended, now time.Time) ([]ActiveCommit, error) {
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	x, err := ext.compile()
	if err != nil {
		return nil, err
	}
	if rules.isZero() {
		return nil, fmt.Errorf("%w: ActiveCommits given 0 days and no branch rules", ErrNotFound)
	}
	if branches == nil || commits == nil {
		return nil, fmt.Errorf("%w: ActiveCommits needs branches and a commit source", ErrInvalidInput)
	}
	defaultBranch := ""
	if x.ext.StaleBranchDays > 0 {
		db, ok := commits.(DefaultBranch)
		if !ok {
			return nil, fmt.Errorf("%w: the stale-branch rule needs a commit source that names the default branch (retention.DefaultBranch)", ErrInvalidInput)
		}
		if defaultBranch, err = db.DefaultBranch(ctx); err != nil {
			return nil, fmt.Errorf("retention: default branch: %w", err)
		}
		if defaultBranch == "" {
			return nil, fmt.Errorf("%w: the stale-branch rule needs the default branch, and the commit source names none", ErrInvalidInput)
		}
	}
	g := graph{ids: newInterner()}
	heads, err := g.readBranches(ctx, branches, rules, x, defaultBranch)
	if err != nil {
		return nil, err
	}
	if defaultBranch != "" && len(heads) > 0 && !slices.ContainsFunc(heads, func(h branchHead) bool { return h.isDefault }) {
		// The branches and the default branch disagree (a default branch
		// renamed or changed between the two reads): the branch that is
		// the default now could be taken for a stale one.
		return nil, fmt.Errorf("retention: the stale-branch rule needs the default branch, and %q is not among the branches", defaultBranch)
	}
	var tagged []int32
	if tags, ok := commits.(Tags); ok && x.ext.KeepTags {
		if tagged, err = g.readTags(ctx, tags); err != nil {
			return nil, err
		}
	}
	if err := g.list(ctx, commits); err != nil {
		return nil, err
	}
	if err := g.fetchMissing(ctx, commits); err != nil {
		return nil, err
	}
	g.ids.dropIndex()
	for _, s := range g.startingPoints(heads, tagged, rules, x, now) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g.walk(s)
	}
	g.keepLasts(heads)
	return g.result(), nil
}

// Bits of graph.flags.
const (
	loaded         uint8 = 1 << iota // the commit's node is filled in
	head                             // the commit is a branch HEAD
	hasChild                         // the commit is the main parent of a loaded commit
	hasLakeFSChild                   // the commit is the lakeFSParent of a loaded commit
	passed                           // a walk went through the commit and on to its ancestry
	active                           // a walk kept the commit
	tagged                           // a tag points to the commit
)

// graph is the main ancestry of a repository, indexed by interned commit
// index: no per-commit map, no per-commit allocation.
type graph struct {
	ids        *interner
	nodes      []node
	flags      []uint8
	metaranges arena
	mrOffs     []uint32
}

type node struct {
	sec    int64 // CreationDate, as Unix seconds and nanoseconds
	nsec   int32
	parent int32 // index of the main parent, or -1
}

// after reports whether commit i was created after t.
func (g *graph) after(i int32, t instant) bool {
	n := &g.nodes[i]
	return n.sec > t.sec || n.sec == t.sec && n.nsec > t.nsec
}

// instant is a time as ActiveCommits compares it.
type instant struct {
	sec  int64
	nsec int32
}

func instantOf(t time.Time) instant { return instant{t.Unix(), int32(t.Nanosecond())} }

func (a instant) compare(b instant) int {
	return cmp.Or(cmp.Compare(a.sec, b.sec), cmp.Compare(a.nsec, b.nsec))
}

// index interns id, growing the per-commit slices for a new one.
func (g *graph) index(id string) (int32, error) {
	i, added, err := g.ids.intern(id)
	if added {
		g.nodes = append(g.nodes, node{parent: -1})
		g.flags = append(g.flags, 0)
		g.mrOffs = append(g.mrOffs, 0)
	}
	return i, err
}

// startPoint is the start of one walk.
type startPoint struct {
	commit    int32
	head      bool // else a dangling commit
	threshold instant
}

type branchHead struct {
	commit    int32
	days      int32
	keepLast  int32
	isDefault bool
}

func (g *graph) readBranches(ctx context.Context, branches iter.Seq2[Branch, error], rules *Rules, x *compiled, defaultBranch string) ([]branchHead, error) {
	var heads []branchHead
	for b, err := range branches {
		if err != nil {
			return nil, fmt.Errorf("retention: list branches: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i, err := g.index(b.CommitID)
		if err != nil {
			return nil, fmt.Errorf("retention: branch %q HEAD %q: %w", b.ID, b.CommitID, err)
		}
		g.flags[i] |= head
		h := branchHead{commit: i, days: rules.RetentionDays(b.ID), isDefault: b.ID == defaultBranch}
		if r := x.rule(b.ID); r != nil {
			// A branch rule of lakeFS's own wins over an extended one.
			if _, own := rules.BranchRetentionDays[b.ID]; !own && r.RetentionDays != nil {
				h.days = *r.RetentionDays
			}
			h.keepLast = r.KeepLast
		}
		heads = append(heads, h)
	}
	return heads, nil
}

// readTags reads the tags and returns their commits.
func (g *graph) readTags(ctx context.Context, tags Tags) ([]int32, error) {
	var out []int32
	for t, err := range tags.Tags(ctx) {
		if err != nil {
			return nil, fmt.Errorf("retention: list tags: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i, err := g.index(t.CommitID)
		if err != nil {
			return nil, fmt.Errorf("retention: tag %q commit %q: %w", t.ID, t.CommitID, err)
		}
		if g.flags[i]&tagged == 0 {
			g.flags[i] |= tagged
			out = append(out, i)
		}
	}
	return out, nil
}

// keepLasts keeps each head's keepLast commits of its main ancestry, the
// HEAD included. Heads are taken by descending count, and a chain stops at a
// commit an earlier chain reached with as many commits or more still to
// keep: with one allowance per commit (4 bytes each, only when some head
// has a count), branches that share their history do not walk it again.
// No chain takes more steps than there are commits, whatever the parents
// say.
func (g *graph) keepLasts(heads []branchHead) {
	if !slices.ContainsFunc(heads, func(h branchHead) bool { return h.keepLast > 0 }) {
		return
	}
	heads = slices.Clone(heads)
	slices.SortStableFunc(heads, func(a, b branchHead) int { return cmp.Compare(b.keepLast, a.keepLast) })
	left := make([]int32, len(g.nodes))
	for _, h := range heads {
		c, n := h.commit, h.keepLast
		for k := 0; c >= 0 && n > 0 && left[c] < n && k < len(g.nodes); k++ {
			left[c] = n
			g.flags[c] |= active
			c, n = g.nodes[c].parent, n-1
		}
	}
}

// ctxCheckEvery is how many commits ActiveCommits reads between checks of
// its context.
const ctxCheckEvery = 1024

func (g *graph) list(ctx context.Context, commits CommitSource) error {
	n := 0
	for c, err := range commits.List(ctx) {
		if err != nil {
			return fmt.Errorf("retention: list commits: %w", err)
		}
		if n++; n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i, err := g.index(c.ID)
		if err != nil {
			return fmt.Errorf("retention: listed commit %q: %w", c.ID, err)
		}
		if g.flags[i]&loaded != 0 {
			continue // listed twice: the first one counts
		}
		if err := g.load(i, &c); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// fetchMissing gets every commit that is a HEAD or the main parent of a
// loaded commit but was not listed. A commit known only as the lakeFSParent
// of another is not fetched: no walk goes through it, and it is a starting
// point only if List yields it. Loading a commit can make one more index
// needed, its main parent, which may be new or an earlier index known so far
// only as a lakeFSParent: it joins the queue. Each commit is fetched once, so
// the work is linear in the commits, whatever order they come in.
func (g *graph) fetchMissing(ctx context.Context, commits CommitSource) error {
	var queue []int32
	for i, f := range g.flags {
		if f&loaded == 0 && f&(head|tagged|hasChild) != 0 {
			queue = append(queue, int32(i))
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if g.flags[i]&loaded != 0 {
			continue // queued twice
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		id := g.ids.id(i)
		c, err := commits.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("retention: get commit %s, not listed: %w", id, err)
		}
		if c.ID != id {
			return fmt.Errorf("retention: get commit %s returned commit %q", id, c.ID)
		}
		if err := g.load(i, &c); err != nil {
			return err
		}
		if p := g.nodes[i].parent; p >= 0 && g.flags[p]&loaded == 0 {
			queue = append(queue, p)
		}
	}
	return nil
}

// load fills in the node of commit c, whose index is i.
func (g *graph) load(i int32, c *Commit) error {
	parent := int32(-1)
	if len(c.Parents) > 0 {
		p, err := g.index(c.mainParent())
		if err != nil {
			return fmt.Errorf("retention: commit %s parent %q: %w", c.ID, c.mainParent(), err)
		}
		g.flags[p] |= hasChild
		parent = p
		q := p
		if lp := c.lakeFSParent(); lp != c.mainParent() {
			if q, err = g.index(lp); err != nil {
				return fmt.Errorf("retention: commit %s parent %q: %w", c.ID, lp, err)
			}
		}
		g.flags[q] |= hasLakeFSChild
	}
	mr, err := g.metaranges.add(appendRecord(g.ids.scratch[:0], c.MetaRangeID))
	if err != nil {
		return fmt.Errorf("retention: commit %s: %w", c.ID, err)
	}
	t := instantOf(c.CreationDate)
	g.nodes[i] = node{sec: t.sec, nsec: t.nsec, parent: parent}
	g.mrOffs[i] = mr
	g.flags[i] |= loaded
	return nil
}

// startingPoints returns every branch HEAD and dangling commit with its
// threshold, oldest threshold first: the order that lets a walk stop where an
// earlier one passed.
func (g *graph) startingPoints(heads []branchHead, tags []int32, rules *Rules, x *compiled, now time.Time) []startPoint {
	thresholds := map[int32]instant{}
	threshold := func(days int32) instant {
		t, ok := thresholds[days]
		if !ok {
			t = instantOf(now.AddDate(0, 0, -int(days)))
			thresholds[days] = t
		}
		return t
	}
	starts := make([]startPoint, 0, len(heads)+len(tags))
	for _, h := range heads {
		protected := true
		if d := x.ext.StaleBranchDays; d > 0 && !h.isDefault {
			// Stale: no commit after the stale threshold. The HEAD is
			// then kept only by its date, as a dangling commit is.
			protected = g.after(h.commit, threshold(d))
		}
		starts = append(starts, startPoint{commit: h.commit, head: protected, threshold: threshold(h.days)})
	}
	// A tag keeps its commit, and its ancestors as a HEAD with the
	// default retention does.
	dangling := threshold(rules.DefaultRetentionDays)
	for _, t := range tags {
		starts = append(starts, startPoint{commit: t, head: true, threshold: dangling})
	}
	// A commit is dangling when no loaded commit has it as its main parent,
	// or none as its lakeFSParent: the union of the two readings, so that
	// every walk either would start is started.
	for i, f := range g.flags {
		if f&(loaded|head) == loaded && f&(hasChild|hasLakeFSChild) != hasChild|hasLakeFSChild {
			starts = append(starts, startPoint{commit: int32(i), threshold: dangling})
		}
	}
	slices.SortStableFunc(starts, func(a, b startPoint) int { return a.threshold.compare(b.threshold) })
	return starts
}

// walk follows the main ancestry from s. Walks run oldest threshold first, so
// a commit an earlier walk passed had a threshold older than or equal to
// s.threshold: every commit beyond it that this walk could keep is kept
// already. But the step into it comes from a different child, so the walk
// decides that commit before it stops.
func (g *graph) walk(s startPoint) {
	c := s.commit
	if s.head || g.after(c, s.threshold) {
		g.flags[c] |= active
	}
	for g.flags[c]&passed == 0 {
		g.flags[c] |= passed
		p := g.nodes[c].parent
		if p < 0 {
			return
		}
		if g.after(c, s.threshold) {
			g.flags[p] |= active
		}
		c = p
	}
}

// result returns the active commits sorted by ID. Their IDs share one string
// allocation.
func (g *graph) result() []ActiveCommit {
	var idx []int32
	size := 0
	for i, f := range g.flags {
		if f&active != 0 {
			idx = append(idx, int32(i))
			size += g.ids.arena.idLen(g.ids.offs[i]) + g.metaranges.idLen(g.mrOffs[i])
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	var buf []byte
	for _, i := range idx {
		buf = g.ids.arena.appendID(buf[:0], g.ids.offs[i])
		buf = g.metaranges.appendID(buf, g.mrOffs[i])
		sb.Write(buf)
	}
	all := sb.String()
	out := make([]ActiveCommit, len(idx))
	pos := 0
	for k, i := range idx {
		idEnd := pos + g.ids.arena.idLen(g.ids.offs[i])
		mrEnd := idEnd + g.metaranges.idLen(g.mrOffs[i])
		out[k] = ActiveCommit{CommitID: all[pos:idEnd], MetaRangeID: all[idEnd:mrEnd]}
		pos = mrEnd
	}
	slices.SortFunc(out, func(a, b ActiveCommit) int { return strings.Compare(a.CommitID, b.CommitID) })
	return out
}
