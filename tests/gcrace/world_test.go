package gcrace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
)

// The host's configuration. The copy TTL and the GC's MinAge equal the link
// TTL, the tightest safe setting.
const (
	repoID    = "repo1"
	namespace = "mem://repo1"
	linkTTL   = 24 * time.Hour
	copyTTL   = 24 * time.Hour
	minAge    = 24 * time.Hour
	clockSkew = 5 * time.Minute // sweep's default
	maxBranch = 6
)

// simStart is where simulated time begins: ahead of the wall clock, because
// linkaddr's MemRedeemer judges its entries' expiry by the wall clock.
var simStart = time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)

// paths is the small pool of object paths writers use, so that copies,
// overwrites and deletes collide often.
var paths = []string{"a.csv", "b/1.parquet", "b/2.parquet", "c", "dir/ü/x.json", "e", "f/g/h", "z"}

// untouchable are keys in the namespace outside what the GC scans.
var untouchable = []string{"dummy", "other/data/kept", "_lakefs/other/kept"}

// simClock is the one clock every component gets. It only moves forward,
// and only between writer steps (or when the test says so).
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// entry is one path's value in a staging area or a commit's tree. addr is
// relative to the namespace; full says the staging area stores it as a full
// URI; external is an import from outside the namespace (not ours to keep).
type entry struct {
	addr     string
	full     bool
	external bool
	tomb     bool
	staged   time.Time
}

func (e entry) physical() string {
	if e.full && !e.external {
		return namespace + "/" + e.addr
	}
	return e.addr
}

type commit struct {
	id        string
	parents   []string
	date      time.Time
	version   int
	metaRange string
	tree      map[string]entry
}

// mainParent follows retention's rule: Parents[0], or the last parent for
// Version < 1.
func (c *commit) mainParent() string {
	if len(c.parents) == 0 {
		return ""
	}
	if c.version < 1 {
		return c.parents[len(c.parents)-1]
	}
	return c.parents[0]
}

type branch struct {
	head    string
	staging map[string]entry
}

// pending is an address handed out by get-address.
type pending struct {
	branch, path, addr, signed string
	resolved                   time.Time // the address time, as linkaddr sees it
	uploaded, done             bool
	// A link verified but not staged yet: its staging write lands at
	// stageAt, which may be past the link's deadline (then it is undone).
	link    *linkaddr.Link
	stageAt time.Time
}

// copyRec mirrors a copytrack record, for the oracle.
type copyRec struct {
	branch, addr string
	at           time.Time
}

// object is the oracle's knowledge of one uploaded object.
type object struct {
	uploaded time.Time
	deadAt   time.Time // first observation at which it was unreachable; zero while live
	deleted  bool
	// late: uploaded after its address's link TTL, into a slice an
	// optimized run may not list again; only a clean run is sure to find it.
	late bool
}

// world is the small versioned store: branches with staging areas,
// commits, uploads through linkaddr, copies through copytrack, and the
// oracle that says, at any instant, which objects are reachable.
type world struct {
	ctx    context.Context
	clock  *simClock
	sim    *simBucket
	bucket *blob.Bucket
	pp     *pathprovider.Partitioned
	signer *linkaddr.Signer
	redeem linkaddr.Redeemer
	track  *copytrack.Tracker
	rules  retention.Rules

	mu         sync.Mutex
	rng        *rand.Rand
	branches   map[string]*branch
	commits    map[string]*commit
	pendings   []*pending
	copies     []copyRec
	objects    map[string]*object
	step       int
	nextBranch int
	nextCommit int
	nextData   int
	log        []string // the schedule, one line a step
	violations []string
	inGC       string // where in the GC cycle writers are running, for the log
	focus      string // the branch the export is scanning, if any
	origin     string // who runs the current step, for the log

	legacyDeleted int            // flat-layout objects the GC deleted
	interval      time.Duration  // the pathprovider's slice interval
	optRNG        *rand.Rand     // non-nil: marks may start from the latest run
	optimized     int            // GC cycles whose mark was an optimized run
	skipped       int64          // slices those runs did not list
	points        map[string]int // writer steps per point of the GC cycle
}

func newWorld(ctx context.Context, seed uint64) (*world, error) {
	w := &world{
		ctx:      ctx,
		clock:    &simClock{t: simStart},
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		branches: make(map[string]*branch),
		commits:  make(map[string]*commit),
		objects:  make(map[string]*object),
		points:   make(map[string]int),
	}
	w.sim, w.bucket = newSimBucket(w.clock.Now)
	var err error
	partition := 4 + w.rng.IntN(40) // drawn first, as before: seeds keep their schedules
	w.interval = time.Duration(2+w.rng.IntN(12)) * time.Hour
	w.pp, err = pathprovider.New(
		pathprovider.WithClock(w.clock.Now),
		pathprovider.WithPartitionSize(partition),
		pathprovider.WithInterval(w.interval),
	)
	if err != nil {
		return nil, err
	}
	w.signer, err = linkaddr.New([]byte(fmt.Sprintf("key-%d", seed)), w.pp,
		linkaddr.WithTTL(linkTTL), linkaddr.WithClock(w.clock.Now))
	if err != nil {
		return nil, err
	}
	w.redeem = linkaddr.NewMemRedeemer()
	w.track = must(copytrack.New(copytrack.NewMemStore(),
		copytrack.WithTTL(copyTTL), copytrack.WithClock(w.clock.Now)))

	// Retention: "main" may keep longer than the default; every other
	// branch uses the default. (A created branch with longer retention than
	// the branch it forks from, or a deleted branch with shorter retention
	// than the default, would legitimately revive commits a running GC had
	// already expired: the oracle's "dead stays dead" rests on this.)
	d0 := int32(w.rng.IntN(3))
	w.rules = retention.Rules{DefaultRetentionDays: d0, BranchRetentionDays: map[string]int32{}}
	if w.rng.IntN(4) > 0 {
		w.rules.BranchRetentionDays["main"] = d0 + int32(1+w.rng.IntN(3))
	}

	// The repository starts with an imported root commit whose objects use
	// the old flat layout (top-level keys, written 40 days ago), next to
	// objects the GC must never touch: "dummy" and another folder.
	root := &commit{id: w.newCommitID(), date: w.clock.Now(), version: 1, tree: map[string]entry{}}
	root.metaRange = "mr-" + root.id
	w.commits[root.id] = root
	old := simStart.AddDate(0, 0, -40)
	for i, p := range paths[:3] {
		key := fmt.Sprintf("000000000000400080%014x", 0x1e9a+i) // hex of a version 4 UUID, as the flat layout named objects
		w.sim.put(key, old)
		w.objects[key] = &object{uploaded: old}
		root.tree[p] = entry{addr: key, staged: old}
	}
	for _, key := range untouchable {
		w.sim.put(key, old)
	}
	w.branches["main"] = &branch{head: root.id, staging: map[string]entry{}}
	return w, nil
}

func (w *world) newCommitID() string {
	w.nextCommit++
	return fmt.Sprintf("c%05d", w.nextCommit)
}

func (w *world) branchNames() []string {
	names := make([]string, 0, len(w.branches))
	for n := range w.branches {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// view is a branch's visible tree: its HEAD's tree overlaid with staging.
func (w *world) view(b *branch) map[string]entry {
	v := make(map[string]entry)
	for p, e := range w.commits[b.head].tree {
		v[p] = e
	}
	for p, e := range b.staging {
		if e.tomb {
			delete(v, p)
		} else {
			v[p] = e
		}
	}
	return v
}

func (w *world) pickBranch() (string, *branch) {
	names := w.branchNames()
	n := names[w.rng.IntN(len(names))]
	return n, w.branches[n]
}

func (w *world) logf(format string, args ...any) {
	where := ""
	if w.inGC != "" {
		where = " [during " + w.inGC + "]"
	}
	if w.origin != "" {
		where += " [" + w.origin + "]"
	}
	w.log = append(w.log, fmt.Sprintf("step %d t=%s%s: %s", w.step,
		w.clock.Now().Format("01-02T15:04:05.000"), where, fmt.Sprintf(format, args...)))
}

func (w *world) violate(format string, args ...any) {
	w.violations = append(w.violations, fmt.Sprintf("step %d: ", w.step)+fmt.Sprintf(format, args...))
}

// writerStep advances the clock and performs one random write. It is what
// the GC's hooks call to interleave writers with the cycle.
func (w *world) writerStep() { w.writerStepFrom("") }

// writerStepFrom is writerStep with the origin of the step (the concurrent
// writer's steps say so in the schedule).
func (w *world) writerStepFrom(origin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.step++
	w.origin = origin
	defer func() { w.origin = "" }()
	point := w.inGC
	if i := strings.Index(point, " scanning "); i >= 0 {
		point = point[:i+len(" scanning")]
	}
	if i := strings.Index(point, " listing "); i >= 0 {
		point = point[:i+len(" listing")]
	}
	switch {
	case origin != "":
		point = origin
	case point == "":
		point = "between cycles"
	}
	w.points[point]++
	// Exponential-ish gaps with nanosecond jitter: no two events share an
	// instant, so no boundary (TTL, cutoff) is hit exactly.
	gap := time.Duration(w.rng.ExpFloat64()*float64(25*time.Minute)) + time.Duration(w.rng.Int64N(int64(time.Second)))
	w.clock.advance(gap)
	w.landStagingWrites()

	if w.focus != "" && w.rng.IntN(3) == 0 {
		// The export is scanning a branch: renames on it are the race
		// copytrack exists for, so the schedule favours them.
		w.opCopy()
		w.observe()
		return
	}
	switch r := w.rng.IntN(100); {
	case r < 22:
		w.opGetAddress()
	case r < 27:
		w.opUploadLate()
	case r < 45:
		w.opLink()
	case r < 60:
		w.opCopy()
	case r < 70:
		w.opDelete()
	case r < 79:
		w.opCommit()
	case r < 82:
		w.opMerge()
	case r < 85:
		w.opReset()
	case r < 89:
		w.opCreateBranch()
	case r < 92:
		w.opDeleteBranch()
	case r < 94:
		w.opImport()
	default:
		d := time.Duration(w.rng.IntN(10)) * time.Hour
		w.clock.advance(d)
		w.logf("idle %s", d)
	}
	w.observe()
}

func (w *world) upload(addr string) {
	w.nextData++
	if err := w.bucket.WriteAll(w.ctx, addr, fmt.Appendf(nil, "object %d", w.nextData), nil); err != nil {
		w.violate("upload %s: %v", addr, err)
		return
	}
	w.objects[addr] = &object{uploaded: w.clock.Now()}
}

func (w *world) opGetAddress() {
	bn, _ := w.pickBranch()
	p := paths[w.rng.IntN(len(paths))]
	addr := w.pp.NewPath()
	at, err := w.pp.ResolvePathTime(addr)
	if err != nil {
		w.violate("ResolvePathTime(%q): %v", addr, err)
		return
	}
	signed, err := w.signer.Sign(repoID, bn, p, addr)
	if err != nil {
		w.violate("Sign(%q): %v", addr, err)
		return
	}
	pd := &pending{branch: bn, path: p, addr: addr, resolved: at, signed: signed}
	w.pendings = append(w.pendings, pd)
	if w.rng.IntN(5) > 0 {
		pd.uploaded = true
		w.upload(addr)
		w.logf("get-address+upload %s:%s -> %s", bn, p, addr)
	} else {
		w.logf("get-address %s:%s -> %s", bn, p, addr)
	}
}

// opUploadLate uploads to an address handed out earlier (maybe after its
// TTL: then the object is garbage from the start).
func (w *world) opUploadLate() {
	var cands []*pending
	for _, pd := range w.pendings {
		if !pd.uploaded {
			cands = append(cands, pd)
		}
	}
	if len(cands) == 0 {
		return
	}
	pd := cands[w.rng.IntN(len(cands))]
	pd.uploaded = true
	w.upload(pd.addr)
	if o := w.objects[pd.addr]; o != nil && w.clock.Now().Sub(pd.resolved) > linkTTL {
		o.late = true
	}
	w.logf("upload %s (address age %s)", pd.addr, w.clock.Now().Sub(pd.resolved).Round(time.Second))
}

// opLink redeems an uploaded address into its branch's staging area. Half
// the time it picks the oldest one, so that links just under the TTL are
// common (the race the export-anchored cutoff exists for).
func (w *world) opLink() {
	var cands []*pending
	for _, pd := range w.pendings {
		if pd.uploaded && !pd.done {
			cands = append(cands, pd)
		}
	}
	if len(cands) == 0 {
		return
	}
	pd := cands[w.rng.IntN(len(cands))]
	if w.rng.IntN(2) == 0 {
		now := w.clock.Now()
		for _, c := range cands {
			if now.Sub(c.resolved) < linkTTL-linkaddr.StagingMargin {
				pd = c
				break
			}
		}
	}
	pd.done = true
	age := w.clock.Now().Sub(pd.resolved)
	b := w.branches[pd.branch]
	if b == nil {
		w.logf("link %s: branch %s gone", pd.addr, pd.branch)
		return
	}
	link, err := w.signer.VerifyOnce(w.ctx, w.redeem, repoID, pd.branch, pd.path, pd.signed)
	if err != nil {
		if age < linkTTL-linkaddr.StagingMargin-2*time.Second {
			w.violate("VerifyOnce of a fresh address (age %s): %v", age, err)
		}
		w.logf("link %s:%s %s refused (age %s): %v", pd.branch, pd.path, pd.addr, age.Round(time.Second), err)
		return
	}
	addr := link.Address
	if addr != pd.addr || age > linkTTL-linkaddr.StagingMargin+2*time.Second {
		w.violate("VerifyOnce(%s) = %q at age %s", pd.addr, addr, age)
	}
	if w.rng.IntN(3) == 0 {
		// A slow staging write: it lands up to a little more than the
		// staging margin later (past the TTL's end), as the writers' next steps
		// pass that time.
		pd.link = &link
		pd.stageAt = w.clock.Now().Add(time.Duration(w.rng.Int64N(int64(linkaddr.StagingMargin + 2*time.Minute))))
		w.logf("link %s:%s verified, staging at %s", pd.branch, pd.path, pd.stageAt.Format(time.RFC3339))
		return
	}
	b.staging[pd.path] = entry{addr: addr, full: w.rng.IntN(3) == 0, staged: w.clock.Now()}
	w.logf("link %s:%s -> %s (address age %s)", pd.branch, pd.path, addr, age.Round(time.Second))
}

// landStagingWrites lands the slow staging writes that are due: staged
// when they land by the link's deadline, undone (never staged) after it,
// as Signer.Stage does. An object whose staging write lands must still be
// there: the GC may not delete it while it is in flight.
func (w *world) landStagingWrites() {
	now := w.clock.Now()
	for _, pd := range w.pendings {
		if pd.link == nil || now.Before(pd.stageAt) {
			continue
		}
		link := pd.link
		pd.link = nil
		if now.After(link.Deadline) {
			w.logf("link %s:%s staged past its deadline: undone", pd.branch, pd.path)
			continue
		}
		if o := w.objects[link.Address]; o != nil && o.deleted {
			w.violate("GC deleted reachable object %s (in flight: its staging write landed after the delete; uploaded %s)",
				link.Address, o.uploaded.Format(time.RFC3339))
		}
		b := w.branches[pd.branch]
		if b == nil {
			w.logf("link %s:%s: branch gone before staging", pd.branch, pd.path)
			continue
		}
		b.staging[pd.path] = entry{addr: link.Address, full: w.rng.IntN(3) == 0, staged: now}
		w.logf("link %s:%s -> %s (staged late)", pd.branch, pd.path, link.Address)
	}
}

// opCopy makes a shallow copy of a visible object, recorded with
// copytrack; most of the time it is a rename (the source is then deleted).
func (w *world) opCopy() {
	sn, sb := w.pickBranch()
	if fb := w.branches[w.focus]; fb != nil && w.rng.IntN(2) == 0 {
		sn, sb = w.focus, fb
	}
	v := w.view(sb)
	// Mostly staged sources: a committed source stays protected by its
	// commit, a staged one only by the export and the copy records.
	from := v
	if w.rng.IntN(4) > 0 {
		from = sb.staging
	}
	var srcs []string
	for p, e := range from {
		if !e.external && !e.tomb {
			srcs = append(srcs, p)
		}
	}
	if len(srcs) == 0 {
		return
	}
	sort.Strings(srcs)
	src := srcs[w.rng.IntN(len(srcs))]
	dn, db := sn, sb
	if w.rng.IntN(4) == 0 {
		dn, db = w.pickBranch()
	}
	dst := paths[w.rng.IntN(len(paths))]
	if dn == sn && dst == src {
		return
	}
	e := v[src]
	e.staged = w.clock.Now()
	db.staging[dst] = e
	if err := w.track.Track(w.ctx, copytrack.Copy{Repository: repoID, Branch: dn,
		SrcPath: src, DstPath: dst, PhysicalAddress: e.physical()}); err != nil {
		w.violate("Track: %v", err)
	}
	w.copies = append(w.copies, copyRec{branch: dn, addr: e.addr, at: w.clock.Now()})
	// Most copies are renames (moves, when across branches): the source is
	// deleted right after, the race copytrack exists for.
	if w.rng.IntN(10) < 7 {
		w.deletePath(sb, src)
		w.logf("rename %s:%s -> %s:%s (%s)", sn, src, dn, dst, e.addr)
	} else {
		w.logf("copy %s:%s -> %s:%s (%s)", sn, src, dn, dst, e.addr)
	}
}

func (w *world) deletePath(b *branch, p string) {
	if _, ok := w.commits[b.head].tree[p]; ok {
		b.staging[p] = entry{tomb: true, staged: w.clock.Now()}
	} else {
		delete(b.staging, p)
	}
}

func (w *world) opDelete() {
	bn, b := w.pickBranch()
	v := w.view(b)
	if len(v) == 0 {
		return
	}
	ps := make([]string, 0, len(v))
	for p := range v {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	p := ps[w.rng.IntN(len(ps))]
	w.deletePath(b, p)
	w.logf("delete %s:%s (%s)", bn, p, v[p].addr)
}

// forget drops the branch's copy records older than before: the time of
// the commit, reset or branch deletion.
func (w *world) forget(bn string, before time.Time) {
	if _, err := w.track.ForgetBranch(w.ctx, repoID, bn, before); err != nil {
		w.violate("ForgetBranch: %v", err)
	}
	kept := w.copies[:0]
	for _, c := range w.copies {
		if c.branch != bn || !c.at.Before(before) {
			kept = append(kept, c)
		}
	}
	w.copies = kept
}

func (w *world) opCommit() {
	bn, b := w.pickBranch()
	// Branches named a* are long-lived work areas, committed rarely: their
	// staged objects grow old, which is when losing them is possible.
	if len(b.staging) == 0 || (bn[0] == 'a' && w.rng.IntN(4) > 0) {
		return
	}
	c := &commit{id: w.newCommitID(), parents: []string{b.head}, date: w.clock.Now(),
		version: 1, tree: w.view(b)}
	c.metaRange = "mr-" + c.id
	w.commits[c.id] = c
	b.head = c.id
	b.staging = map[string]entry{}
	w.forget(bn, c.date)
	w.logf("commit %s on %s (%d objects)", c.id, bn, len(c.tree))
}

// opMerge commits the source branch's HEAD tree into the target; half the
// merge commits use the old parent order (Version 0: main parent last).
func (w *world) opMerge() {
	sn, sb := w.pickBranch()
	tn, tb := w.pickBranch()
	if sn == tn || sb.head == tb.head {
		return
	}
	tree := make(map[string]entry)
	for p, e := range w.commits[tb.head].tree {
		tree[p] = e
	}
	for p, e := range w.commits[sb.head].tree {
		tree[p] = e
	}
	c := &commit{id: w.newCommitID(), date: w.clock.Now(), tree: tree}
	if w.rng.IntN(2) == 0 {
		c.version, c.parents = 1, []string{tb.head, sb.head}
	} else {
		c.version, c.parents = 0, []string{sb.head, tb.head}
	}
	c.metaRange = "mr-" + c.id
	w.commits[c.id] = c
	tb.head = c.id
	w.logf("merge %s into %s: %s (version %d)", sn, tn, c.id, c.version)
}

func (w *world) opReset() {
	bn, b := w.pickBranch()
	b.staging = map[string]entry{}
	w.forget(bn, w.clock.Now())
	w.logf("reset %s", bn)
}

func (w *world) opCreateBranch() {
	if len(w.branches) >= maxBranch {
		return
	}
	from, fb := w.pickBranch()
	w.nextBranch++
	// Names sort both before and after "main", so that the export's branch
	// cursor is overtaken by some creations and not by others.
	name := fmt.Sprintf("%c%d", "am"[w.rng.IntN(2)], w.nextBranch)
	w.branches[name] = &branch{head: fb.head, staging: map[string]entry{}}
	w.logf("create branch %s from %s (%s)", name, from, fb.head)
}

func (w *world) opDeleteBranch() {
	bn, _ := w.pickBranch()
	if bn == "main" {
		return
	}
	delete(w.branches, bn)
	w.forget(bn, w.clock.Now())
	w.logf("delete branch %s", bn)
}

// opImport stages an object that lives outside the namespace: the export
// must skip it and the GC must never see it.
func (w *world) opImport() {
	bn, b := w.pickBranch()
	p := paths[w.rng.IntN(len(paths))]
	b.staging[p] = entry{addr: fmt.Sprintf("s3://elsewhere/import/%d", w.step), full: true, external: true, staged: w.clock.Now()}
	w.logf("import %s:%s", bn, p)
}

// retained is the oracle's retention: the SPEC's definition, written
// plainly (a walk of the whole main ancestry from every head and every
// dangling commit, the per-step rule), independent of package retention.
func (w *world) retained(now time.Time) map[string]bool {
	keep := make(map[string]bool)
	if w.rules.DefaultRetentionDays == 0 && len(w.rules.BranchRetentionDays) == 0 {
		// No rules (lakeFS stores these as an empty file): every commit
		// is kept.
		for id := range w.commits {
			keep[id] = true
		}
		return keep
	}
	walk := func(start string, days int32) {
		t := now.AddDate(0, 0, -int(days))
		for c := w.commits[start]; c != nil; {
			p := c.mainParent()
			if p == "" {
				return
			}
			if c.date.After(t) {
				keep[p] = true
			}
			c = w.commits[p]
		}
	}
	days := func(b string) int32 {
		if d, ok := w.rules.BranchRetentionDays[b]; ok {
			return d
		}
		return w.rules.DefaultRetentionDays
	}
	heads := make(map[string]bool)
	for bn, b := range w.branches {
		heads[b.head] = true
		keep[b.head] = true
		walk(b.head, days(bn))
	}
	isParent := make(map[string]bool)
	for _, c := range w.commits {
		if p := c.mainParent(); p != "" {
			isParent[p] = true
		}
	}
	t0 := now.AddDate(0, 0, -int(w.rules.DefaultRetentionDays))
	for id, c := range w.commits {
		if heads[id] || isParent[id] {
			continue
		}
		if c.date.After(t0) {
			keep[id] = true
		}
		walk(id, w.rules.DefaultRetentionDays)
	}
	return keep
}

// reachable returns, for every reachable object, why it is reachable.
func (w *world) reachable(now time.Time) map[string]string {
	live := make(map[string]string)
	for bn, b := range w.branches {
		for p, e := range b.staging {
			if !e.tomb && !e.external {
				live[e.addr] = "staged at " + bn + ":" + p
			}
		}
	}
	for id := range w.retained(now) {
		for p, e := range w.commits[id].tree {
			if !e.external {
				if _, ok := live[e.addr]; !ok {
					live[e.addr] = "committed in retained " + id + ":" + p
				}
			}
		}
	}
	for _, c := range w.copies {
		if now.Sub(c.at) <= copyTTL {
			if _, ok := live[c.addr]; !ok {
				live[c.addr] = fmt.Sprintf("copied to %s %s ago", c.branch, now.Sub(c.at).Round(time.Second))
			}
		}
	}
	for _, pd := range w.pendings {
		if pd.uploaded && now.Sub(pd.resolved) <= linkTTL {
			if _, ok := live[pd.addr]; !ok {
				live[pd.addr] = fmt.Sprintf("uploaded to an address handed out %s ago", now.Sub(pd.resolved).Round(time.Second))
			}
		}
	}
	return live
}

// observe records, after a step, which objects became unreachable. Dead
// stays dead in this model (every write that references an object copies
// a reachable one, links are refused after the TTL, retention only shrinks
// with time): a revival means the test's own model is wrong.
func (w *world) observe() {
	now := w.clock.Now()
	live := w.reachable(now)
	for addr, o := range w.objects {
		_, isLive := live[addr]
		switch {
		case o.deadAt.IsZero() && !isLive:
			o.deadAt = now
		case !o.deadAt.IsZero() && isLive:
			w.violate("model error: %s revived (%s) after being unreachable at %s", addr, live[addr], o.deadAt)
		}
	}
}

// checkDelete is the bucket's beforeDelete hook: the moment the GC deletes
// an object, the object must be unreachable.
func (w *world) checkDelete(key, during string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.objects[key]
	if o == nil {
		w.violate("GC deleted %s, which is not a data object", key)
		return nil
	}
	if why, ok := w.reachable(w.clock.Now())[key]; ok {
		w.violate("GC deleted reachable object %s (%s; uploaded %s) during %s",
			key, why, o.uploaded.Format(time.RFC3339), during)
	}
	o.deleted = true
	if !strings.HasPrefix(key, "data/") {
		w.legacyDeleted++
	}
	return nil
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
