package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/hosttest"
	"github.com/lakegc/lakegc/uncommitted"
)

// hostStore gives hosttest the writes of the store.
type hostStore struct{ *store }

func (s hostStore) Host() lakegc.Host {
	return lakegc.Host{Staging: s.store, Commits: s.store, Committed: s.store}
}

func (s hostStore) CreateBranch(_ context.Context, id, from string) error {
	s.staged[id] = map[string]uncommitted.Entry{}
	if head, ok := s.heads[from]; ok {
		s.heads[id] = head
	}
	return nil
}

func (s hostStore) DeleteBranch(_ context.Context, id string) error {
	delete(s.staged, id)
	delete(s.heads, id)
	return nil
}

func (s hostStore) Stage(_ context.Context, branch, path, address string) error {
	staged, ok := s.staged[branch]
	if !ok {
		return fmt.Errorf("no branch %s", branch)
	}
	staged[path] = uncommitted.Entry{Key: path, PhysicalAddress: address}
	return nil
}

func (s hostStore) Unstage(_ context.Context, branch, path string) error {
	delete(s.staged[branch], path)
	return nil
}

func (s hostStore) Commit(_ context.Context, branch string, at time.Time) (string, error) {
	s.commit(branch, at)
	return s.heads[branch], nil
}

// The store's writers race GC cycles, links staged up to 20 minutes after
// their verification, and no live object is lost.
func TestWritersVersusGC(t *testing.T) {
	res, err := hosttest.Run(context.Background(), hostStore{newStore()}, hosttest.Options{Seed: 1, Cycles: 150, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
}
