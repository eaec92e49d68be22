package main

import (
	"fmt"
	"os"
	"time"

	"github.com/lakegc/lakegc/sweep"
)

// progressLine shows the counters of the mark and the sweep on one line of
// a terminal, rewritten in place at most ten times a second.
type progressLine struct {
	out  *os.File
	now  func() time.Time
	last time.Time
	used bool
}

// newProgressLine returns nil when out is not a terminal: piped output
// stays free of control characters.
func newProgressLine(out *os.File) *progressLine {
	info, err := out.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressLine{out: out, now: time.Now}
}

func (p *progressLine) update(pr sweep.Progress) {
	now := p.now()
	if pr.Phase != "done" && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.used = true
	var line string
	if pr.Phase == "delete" || pr.Deleted+pr.AlreadyGone+pr.Failed+pr.Refused > 0 {
		line = fmt.Sprintf("sweep %-6s deleted %d, already gone %d, failed %d, refused %d",
			pr.Phase, pr.Deleted, pr.AlreadyGone, pr.Failed, pr.Refused)
	} else {
		line = fmt.Sprintf("mark  %-6s listed %d, kept %d, marked %d", pr.Phase, pr.Listed, pr.Kept, pr.Marked)
	}
	fmt.Fprintf(p.out, "\r\033[K%s", line)
}

// close clears the line.
func (p *progressLine) close() {
	if p.used {
		fmt.Fprint(p.out, "\r\033[K")
	}
}
