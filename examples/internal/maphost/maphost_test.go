package maphost_test

import (
	"context"
	"testing"

	"github.com/lakegc/lakegc/examples/internal/maphost"
	"github.com/lakegc/lakegc/retention/sourcetest"
)

// The crash and fault tests read their worlds' commits through Store: it
// must be an adapter retention reads correctly.
func TestCommitsConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
		s := maphost.New()
		add := func(_ context.Context, f sourcetest.Fixture) error {
			for _, c := range f.Commits {
				s.Commits[c.ID] = c
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
