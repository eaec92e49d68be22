package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/host"
)

// progress draws one status line on a terminal, redrawn in place with '\r',
// at most every redrawEvery; logs written through it clear the line first.
// Off a terminal it only passes the logs through.
type progress struct {
	w  io.Writer
	on bool

	mu    sync.Mutex
	line  string
	drawn bool
	last  time.Time
}

const redrawEvery = 100 * time.Millisecond

func newProgress(w io.Writer, on bool) *progress { return &progress{w: w, on: on} }

// Write writes a log record above the status line.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	n, err := p.w.Write(b)
	if p.on && p.line != "" {
		fmt.Fprint(p.w, p.line)
		p.drawn = true
	}
	return n, err
}

func (p *progress) set(line string, force bool) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = line
	if now := time.Now(); force || now.Sub(p.last) >= redrawEvery {
		p.last = now
		fmt.Fprint(p.w, "\r\033[K"+line)
		p.drawn = true
	}
}

// report shows a run's progress (host.Options.Progress).
func (p *progress) report(r host.Progress) {
	switch r.Kind {
	case host.ProgressCollect:
		p.collect(r.Collect)
	case host.ProgressStaged:
		p.set(fmt.Sprintf("staged: %d objects statted", r.Staged), false)
	case host.ProgressRanges:
		s := r.Ranges
		p.set(fmt.Sprintf("ranges: %d metaranges, %d ranges read (%d shared; %d from the range cache), %d entries, %d outside the namespace", s.MetaRanges, s.Ranges, s.SharedRanges, s.Cache.Hits, s.Entries, s.Outside), s.Done)
	}
}

// collect shows Collect's progress.
func (p *progress) collect(c lakegc.Progress) {
	s := c.Counters
	switch c.Phase {
	case lakegc.PhaseExport:
		p.set("export: lakeFS exports the staged objects…", true)
	case lakegc.PhaseCommits:
		p.set("commits: lakeFS applies the retention rules…", true)
	case lakegc.PhaseMark:
		if s.Phase == "" || s.Phase == "start" {
			p.set("mark: starting…", false)
			break
		}
		p.set(fmt.Sprintf("listing: %d objects listed, %d kept, %d marked", s.Listed, s.Kept, s.Marked), false)
	case lakegc.PhaseSweep:
		p.set(fmt.Sprintf("deleting: %d deleted, %d already gone, %d failed", s.Deleted, s.AlreadyGone, s.Failed), false)
	}
}

// finish ends the status line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	p.line = ""
}
