package main

import (
	"bytes"
	"strings"
	"testing"
)

// A short soak runs one world at least, prints its figures and finds no
// violation.
func TestSoakRunsAWorld(t *testing.T) {
	var out bytes.Buffer
	if code := run(&out, 1, 3, false); code != 0 {
		t.Fatalf("soak exited %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "done after") || !strings.Contains(out.String(), "1 worlds (seeds 3-3), 4 cycles") {
		t.Errorf("soak printed:\n%s", out.String())
	}
}
