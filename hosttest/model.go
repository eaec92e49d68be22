package hosttest

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
)

// model is the oracle's own copy of the store, written by the same
// operations.
type model struct {
	branches map[string]*mbranch
	commits  map[string]*mcommit
	objects  map[string]*object // address → the object uploaded there
	links    []*link            // links neither staged nor abandoned
}

type mbranch struct {
	staged map[string]string // path → address
	head   string
}

type mcommit struct {
	tree   map[string]string
	parent string
	at     time.Time
}

// object is an object written to the bucket, and what happened to it.
type object struct {
	history []string
}

// link is a linked put: an address handed out, uploaded, verified and
// staged, each at its time.
type link struct {
	branch, path, address, signed string
	handedOut, uploadAt, verifyAt time.Time
	made                          time.Time // the address's time, as the signer reads it
	stageAt                       time.Time
	uploads                       bool // the client uploads at all
	verified                      linkaddr.Link
	done                          bool // staged, refused or abandoned
}

func newModel() *model {
	return &model{branches: map[string]*mbranch{}, commits: map[string]*mcommit{}, objects: map[string]*object{}}
}

func (m *model) note(address, format string, args ...any) {
	if o := m.objects[address]; o != nil {
		o.history = append(o.history, fmt.Sprintf(format, args...))
	}
}

func (m *model) createBranch(id, from string) {
	b := &mbranch{staged: map[string]string{}}
	if src := m.branches[from]; src != nil {
		b.head = src.head
	}
	m.branches[id] = b
}

func (m *model) branchIDs() []string { return slices.Sorted(maps.Keys(m.branches)) }

// commit records a commit the store made of branch's staging area.
func (m *model) commit(branch, id string, at time.Time) error {
	if _, ok := m.commits[id]; ok {
		return fmt.Errorf("the store reused commit ID %q", id)
	}
	b := m.branches[branch]
	c := &mcommit{tree: map[string]string{}, parent: b.head, at: at}
	if p := m.commits[b.head]; p != nil {
		maps.Copy(c.tree, p.tree)
	}
	maps.Copy(c.tree, b.staged)
	for path, a := range b.staged {
		m.note(a, "%s: committed in %s on %s at %s", at.Format(time.DateTime), id, branch, path)
	}
	m.commits[id] = c
	b.head, b.staged = id, map[string]string{}
	return nil
}

// live returns every object the oracle knows to be live at now, with why:
// staged, in a branch's HEAD or in a first-parent ancestor newer than the
// branch's retention, or uploaded for a link that will be staged. staging
// margin and unchecked say which links will be.
func (m *model) live(now time.Time, unchecked bool) map[string]string {
	out := map[string]string{}
	for _, id := range m.branchIDs() {
		b := m.branches[id]
		for path, a := range b.staged {
			out[a] = fmt.Sprintf("staged on %s at %s", id, path)
		}
		threshold := now.AddDate(0, 0, -int(rules.RetentionDays(id))).Add(time.Minute)
		for c, first := b.head, true; c != ""; c, first = m.commits[c].parent, false {
			mc := m.commits[c]
			if !first && !mc.at.After(threshold) {
				break
			}
			for path, a := range mc.tree {
				if _, ok := out[a]; !ok {
					out[a] = fmt.Sprintf("in commit %s at %s, reached from %s's HEAD within its retention", c, path, id)
				}
			}
		}
	}
	for _, l := range m.links {
		if l.uploads && !l.uploadAt.After(now) && l.willStage(unchecked) && m.branches[l.branch] != nil {
			if _, ok := out[l.address]; !ok {
				out[l.address] = fmt.Sprintf("uploaded for a link to %s at %s that will be staged", l.branch, l.path)
			}
		}
	}
	return out
}

// willStage reports whether the link's VerifyOnce will pass and its
// staging write will stay.
func (l *link) willStage(unchecked bool) bool {
	deadline := l.made.Add(ttl)
	// A write that starts by the deadline may land after it (it takes up
	// to 30 seconds), and be undone: the oracle counts it live until then.
	return !l.verifyAt.After(deadline.Add(-linkaddr.StagingMargin)) && (unchecked || !l.stageAt.After(deadline))
}

// prune forgets the links that are done.
func (m *model) prune() {
	m.links = slices.DeleteFunc(m.links, func(l *link) bool { return l.done })
}

func (o *object) String() string { return strings.Join(o.history, "\n  ") }

type eventKind int

const (
	evOp eventKind = iota
	evUpload
	evVerify
	evStage
)

type event struct {
	at   time.Time
	seq  int // ties in order of scheduling
	kind eventKind
	link *link
}

// events is a min-heap of events by time.
type events []event

// queue is the run's future events.
type queue struct {
	h   events
	seq int
}

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if c := e[i].at.Compare(e[j].at); c != 0 {
		return c < 0
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

func (q *queue) push(ev event) {
	q.seq++
	ev.seq = q.seq
	heap.Push(&q.h, ev)
}

func (q *queue) pop() event { return heap.Pop(&q.h).(event) }

// next returns the time of the next event, if any.
func (q *queue) next() (time.Time, bool) {
	if len(q.h) == 0 {
		return time.Time{}, false
	}
	return q.h[0].at, true
}
