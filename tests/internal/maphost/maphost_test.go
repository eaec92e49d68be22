package maphost_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/lakegc/lakegc/retention/sourcetest"
	"github.com/lakegc/lakegc/tests/internal/maphost"
)

// The crash and fault tests read their worlds' commits through Store: it
// must be an adapter retention reads correctly.
func TestCommitsConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
		s := maphost.New()
		add := func(_ context.Context, f sourcetest.Fixture) error {
			for _, c := range f.Commits {
				if _, ok := s.Commits[c.ID]; !ok { // commits are immutable
					s.Commits[c.ID] = c
				}
			}
			for _, b := range f.Branches {
				s.Tips[b.ID] = b.Head
			}
			return nil
		}
		if err := add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return sourcetest.Harness{Source: s, Add: add}
	})
}

// Commit, Live and Garbage on a history where each address has one fate.
func TestCommitLiveGarbage(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	cutoff := now.Add(-48 * time.Hour)
	old, young := cutoff.Add(-time.Hour), cutoff
	s := maphost.New()
	s.Staged["main"], s.Staged["dev"] = map[string]string{}, map[string]string{}
	for a, at := range map[string]time.Time{"a1": old, "a2": old, "a3": old, "a4": old, "a5": young, "a6": old} {
		s.Created[a] = at
	}
	s.Staged["main"]["p"] = "a1"
	if id := s.Commit("main", old); id != "c001" || len(s.Staged["main"]) != 0 {
		t.Fatalf("first commit %s, staging left %v", id, s.Staged["main"])
	}
	s.Staged["main"]["p"], s.Staged["main"]["q"] = "a2", "a3"
	if id := s.Commit("main", old); id != "c002" || s.Commits[id].Parents[0] != "c001" {
		t.Fatalf("second commit %s: %+v", id, s.Commits[id])
	}
	s.Staged["dev"]["r"] = "a4" // staged, never committed
	// a5: young; a6: uploaded, never staged.

	if got, want := s.Files["c002"], map[string]string{"p": "a2", "q": "a3"}; !maps.Equal(got, want) {
		t.Errorf("c002 holds %v, want %v", got, want)
	}
	if got, want := s.EverCommitted(), map[string]bool{"a1": true, "a2": true, "a3": true}; !maps.Equal(got, want) {
		t.Errorf("EverCommitted %v, want %v", got, want)
	}
	wantLive := map[string]string{"a2": "in the head of main", "a3": "in the head of main",
		"a4": "staged on dev", "a5": "younger than the cutoff"}
	if got := s.Live(cutoff); !maps.Equal(got, wantLive) {
		t.Errorf("Live %v, want %v", got, wantLive)
	}
	// a1 is only in an old commit: retention decides, not the model.
	if got, want := s.Garbage(cutoff), map[string]bool{"a6": true}; !maps.Equal(got, want) {
		t.Errorf("Garbage %v, want %v", got, want)
	}
}
