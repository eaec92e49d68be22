package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// On a terminal, every log record is written on a cleared line, never after
// the progress line's text, and the progress line is drawn again after it;
// off a terminal only the records are written. Records written from many
// goroutines beside redraws stay whole lines.
func TestProgressNeverInterleavesLogs(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true)
	logger := newLogger(p, 0, false)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				p.set(strings.Repeat("#", i+1)+" listing", j%10 == 0)
				logger.Info("lakegc: a record", "worker", i, "n", j)
			}
		}()
	}
	wg.Wait()
	p.finish()
	// Split at the line clears: each piece is a progress line, or a
	// progress line's text then nothing, or whole log lines then a
	// progress line.
	for _, piece := range strings.Split(out.String(), "\r\033[K") {
		for _, line := range strings.SplitAfter(piece, "\n") {
			if strings.Contains(line, "listing") && strings.Contains(line, "msg=") {
				t.Fatalf("a log record shares a line with the progress line: %q", line)
			}
			if strings.Contains(line, "msg=") && !strings.HasPrefix(line, "time=") {
				t.Fatalf("a log record does not start its line: %q", line)
			}
		}
	}
	if n := strings.Count(out.String(), "msg="); n != 400 {
		t.Errorf("%d records, want 400", n)
	}
	// Off a terminal: the records only.
	out.Reset()
	p = newProgress(&out, false)
	p.set("listing", true)
	newLogger(p, 0, false).Info("lakegc: a record")
	if strings.Contains(out.String(), "listing") || strings.Contains(out.String(), "\r") {
		t.Errorf("off a terminal: %q", out.String())
	}
	// --quiet keeps warnings only.
	out.Reset()
	l := newLogger(&out, 0, true)
	l.Info("info")
	l.Warn("warn")
	if strings.Contains(out.String(), "info") || !strings.Contains(out.String(), "warn") {
		t.Errorf("quiet: %q", out.String())
	}
}
