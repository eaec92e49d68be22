package main

import (
	"context"
	"testing"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/hosttest"
)

// hostStore gives hosttest the store and its adapters.
type hostStore struct{ *store }

func (s hostStore) Host() lakegc.Host {
	return lakegc.Host{Staging: s.store, Commits: s.store, Committed: s.store}
}

// The store's writers race GC cycles, links staged up to 20 minutes after
// their verification, and no live object is lost.
func TestWritersVersusGC(t *testing.T) {
	res, err := hosttest.Run(context.Background(), hostStore{newEmpty(t)}, hosttest.Options{Seed: 1, Cycles: 150, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
}
