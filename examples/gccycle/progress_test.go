package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/sweep"
)

func TestProgressLineOnlyOnTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := newProgressLine(f); p != nil {
		t.Error("a regular file got a progress line")
	}

	// Written to a file as if it were a terminal: one line, rewritten.
	now := time.Unix(1e9, 0)
	p := &progressLine{out: f, now: func() time.Time { return now }}
	p.update(sweep.Progress{Phase: "list", Listed: 10, Kept: 3})
	now = now.Add(99 * time.Millisecond)
	p.update(sweep.Progress{Phase: "list", Listed: 20, Kept: 6}) // throttled
	now = now.Add(time.Millisecond)
	p.update(sweep.Progress{Phase: "list", Listed: 25, Kept: 7}) // 100 ms after the first
	p.update(sweep.Progress{Phase: "done", Listed: 30, Kept: 9, Marked: 21})
	p.update(sweep.Progress{Phase: "done", Deleted: 20, Failed: 1})
	p.close()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{"listed 10, kept 3", "listed 25, kept 7", "listed 30, kept 9, marked 21", "deleted 20, already gone 0, failed 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "listed 20") {
		t.Errorf("progress output %q has an update that should have been throttled", got)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("progress output %q spans several lines", got)
	}
}
