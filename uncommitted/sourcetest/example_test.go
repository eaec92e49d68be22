package sourcetest_test

import (
	"context"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/lakegc/lakegc/uncommitted/sourcetest"
)

// flatStaging is how a host whose key-value store keeps every staged entry
// under one key, "<branch>\x00<path>", gives uncommitted its Source: the
// branches are the distinct first parts, and a branch's entries a prefix
// scan. The test below is all it takes to prove such an adapter; it caught
// the first version's separator, '/', which sorts branch "a-b" before "a".
type flatStaging struct {
	kv map[string]uncommitted.Entry // "<branch>\x00<path>" → entry
}

func (s *flatStaging) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		last := ""
		for _, k := range slices.Sorted(maps.Keys(s.kv)) {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			b, _, _ := strings.Cut(k, "\x00")
			if b != last && b >= from && !yield(b, nil) {
				return
			}
			last = b
		}
		if err := ctx.Err(); err != nil {
			yield("", err)
		}
	}
}

func (s *flatStaging) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		found := false
		for _, k := range slices.Sorted(maps.Keys(s.kv)) {
			if err := ctx.Err(); err != nil {
				yield(uncommitted.Entry{}, err)
				return
			}
			path, ok := strings.CutPrefix(k, branch+"\x00")
			found = found || ok
			if ok && path >= from && !yield(s.kv[k], nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(uncommitted.Entry{}, err)
		} else if !found {
			yield(uncommitted.Entry{}, uncommitted.ErrBranchNotFound)
		}
	}
}

// A branch with no staged entry would have no key, and look deleted: the
// store keeps a tombstone under "<branch>\x00" for each branch.
func TestFlatStaging(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
		s := &flatStaging{kv: map[string]uncommitted.Entry{}}
		for _, b := range f.Branches {
			s.kv[b.ID+"\x00"] = uncommitted.Entry{Tombstone: true}
			for _, e := range b.Entries {
				s.kv[b.ID+"\x00"+e.Key] = e
			}
		}
		deleteBranch := func(_ context.Context, id string) error {
			maps.DeleteFunc(s.kv, func(k string, _ uncommitted.Entry) bool { return strings.HasPrefix(k, id+"\x00") })
			return nil
		}
		return sourcetest.Harness{Source: s, DeleteBranch: deleteBranch}
	})
}
