package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lakegc/lakegc/retention"
)

// TestPartsAreTheFlatSet: the ranges hold exactly the committed addresses
// the flat host yields, each range strictly ascending, before and after
// the churn; the churn changes only the ranges that overlap its region.
func TestPartsAreTheFlatSet(t *testing.T) {
	ctx := context.Background()
	h, err := newHost(Scale{Objects: 20_000, Slices: 20, Branches: 10, Commits: 120}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h.rangeN = 300
	var active []retention.ActiveCommit
	for c := range h.sc.Commits {
		if j := c % h.sc.perBranch(); j >= h.sc.perBranch()-recentCommits-1 {
			active = append(active, retention.ActiveCommit{CommitID: commitID(c)})
		}
	}
	flat := func() []string {
		var keys []string
		for k, err := range h.CommittedAddresses(ctx, active) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}
	parts := func() ([]string, []string) {
		var keys, ids []string
		for _, d := range h.ranges() {
			ids = append(ids, d.id())
			var prev string
			for k, err := range h.keys(ctx, d) {
				if err != nil {
					t.Fatal(err)
				}
				if prev != "" && k <= prev {
					t.Fatalf("range %+v: %q after %q", d, k, prev)
				}
				prev = k
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		return keys, ids
	}
	want := flat()
	got, before := parts()
	if !slices.Equal(got, want) {
		t.Fatalf("first cycle: ranges hold %d keys, the flat set %d", len(got), len(want))
	}
	ch, err := newChurn(h, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	h.ch = ch
	want = flat()
	got, after := parts()
	if !slices.Equal(got, want) {
		t.Fatalf("after the churn: ranges hold %d keys, the flat set %d", len(got), len(want))
	}
	changed := 0
	for i := range after {
		if after[i] != before[i] {
			changed++
		}
	}
	if r := h.rangeN; changed == 0 || changed > (ch.dropHi-ch.dropLo)/r+2 {
		t.Errorf("the churn's region of %d objects changed %d ranges of %d", ch.dropHi-ch.dropLo, changed, r)
	}
}

// FuzzParseRange: a range object parses only as what its description
// encodes, never panics.
func FuzzParseRange(f *testing.F) {
	f.Add(rangeDesc{Index: 3, Lo: 150, Hi: 200, DropLo: 160, DropHi: 170, NewLo: 4, NewHi: 9}.encode())
	f.Add([]byte(rangeMagic + " 1 2 3 4 5 6 7"))
	f.Add([]byte("bottomline range v1 -1 0 0 0 0 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseRange(b)
		if err == nil && string(d.encode()) != string(b) {
			t.Fatalf("%q parsed as %+v", b, d)
		}
	})
}
