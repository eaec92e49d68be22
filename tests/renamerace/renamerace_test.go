// Package renamerace shows, as a test, the race copytrack closes: a rename
// (shallow copy, then delete of the source) running while the uncommitted
// export scans the staging area, so that the export passes the destination
// before the copy and reaches the source after the delete.
package renamerace

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/uncommitted"
)

const repoID = "repo1"

// staging is a host's staging area: entries per branch, read live by the
// export (as a KV iterator would), with a hook called before each entry is
// yielded so the test can act in the middle of the scan.
type staging struct {
	mu          sync.Mutex
	branches    map[string]map[string]uncommitted.Entry
	beforeYield func(branch, key string)
}

func (s *staging) put(branch string, e uncommitted.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.branches[branch] == nil {
		s.branches[branch] = map[string]uncommitted.Entry{}
	}
	s.branches[branch][e.Key] = e
}

func (s *staging) remove(branch, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.branches[branch], key)
}

func (s *staging) get(branch, key string) uncommitted.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.branches[branch][key]
}

func (s *staging) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		s.mu.Lock()
		var ids []string
		for id := range s.branches {
			if id >= from {
				ids = append(ids, id)
			}
		}
		s.mu.Unlock()
		sort.Strings(ids)
		for _, id := range ids {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// Uncommitted yields the branch's entries in key order, looking up the next
// key after the last one yielded each time, so changes behind the scan are
// missed and changes ahead of it are seen.
func (s *staging) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		after, first := from, true
		for {
			if err := ctx.Err(); err != nil {
				yield(uncommitted.Entry{}, err)
				return
			}
			e, ok := s.next(branch, after, first)
			if !ok {
				return
			}
			if s.beforeYield != nil {
				s.beforeYield(branch, e.Key)
			}
			if !yield(e, nil) {
				return
			}
			after, first = e.Key, false
		}
	}
}

func (s *staging) next(branch, after string, inclusive bool) (uncommitted.Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.branches[branch] {
		if k > after || (inclusive && k == after) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return uncommitted.Entry{}, false
	}
	return s.branches[branch][slices.Min(keys)], true
}

// rename is the host's rename: stage a shallow copy, track it, delete the
// source.
func rename(t *testing.T, s *staging, tr *copytrack.Tracker, srcBranch, src, dstBranch, dst string) {
	t.Helper()
	e := s.get(srcBranch, src)
	if e.PhysicalAddress == "" {
		t.Fatalf("rename: %s:%s is not staged", srcBranch, src)
	}
	copied := e
	copied.Key = dst
	s.put(dstBranch, copied)
	if tr != nil {
		err := tr.Track(context.Background(), copytrack.Copy{Repository: repoID, Branch: dstBranch,
			SrcPath: src, DstPath: dst, PhysicalAddress: e.PhysicalAddress})
		if err != nil {
			t.Fatal(err)
		}
	}
	s.remove(srcBranch, src)
}

// scenario is one way of interleaving a rename with the export.
type scenario struct {
	name           string
	srcBranch, src string
	dstBranch, dst string
	renameBefore   [2]string // rename just before the export yields this branch and key
	betweenCalls   bool      // one row per Prepare call, rename between two calls
}

var scenarios = []scenario{
	{name: "same branch", srcBranch: "main", src: "z.csv", dstBranch: "main", dst: "a.csv",
		renameBefore: [2]string{"main", "m.csv"}},
	{name: "across branches", srcBranch: "main", src: "b.csv", dstBranch: "dev", dst: "b.csv",
		renameBefore: [2]string{"main", "a.csv"}},
	{name: "same branch, between Prepare calls", srcBranch: "main", src: "z.csv", dstBranch: "main", dst: "a.csv",
		renameBefore: [2]string{"main", "m.csv"}, betweenCalls: true},
}

// export runs the scenario and returns the addresses in the export, the
// addresses staged before it, and the address of the renamed object.
func export(t *testing.T, sc scenario, withTracker bool) (exported, staged map[string]bool, renamedAddress string) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := &staging{branches: map[string]map[string]uncommitted.Entry{}}
	staged = map[string]bool{}
	for _, b := range []string{"dev", "main"} {
		for _, k := range []string{"a.csv", "b.csv", "m.csv", "z.csv"} {
			if b == sc.dstBranch && k == sc.dst {
				continue
			}
			addr := fmt.Sprintf("data/g0/%s-%s", b, k)
			s.put(b, uncommitted.Entry{Key: k, PhysicalAddress: addr, CreationDate: now})
			staged[addr] = true
		}
	}
	renamedAddress = s.get(sc.srcBranch, sc.src).PhysicalAddress

	var tr *copytrack.Tracker
	opts := []uncommitted.Option{uncommitted.WithClock(func() time.Time { return now })}
	if withTracker {
		tr = must(copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(func() time.Time { return now })))
		opts = append(opts, uncommitted.WithTrailer(func(ctx context.Context) iter.Seq2[string, error] {
			return tr.Addresses(ctx, repoID)
		}))
	}
	if sc.betweenCalls {
		opts = append(opts, uncommitted.WithMaxFileSize(1)) // one row per call
	}
	renamed := false
	renameNow := func() {
		if !renamed {
			renamed = true
			rename(t, s, tr, sc.srcBranch, sc.src, sc.dstBranch, sc.dst)
		}
	}
	if !sc.betweenCalls {
		s.beforeYield = func(branch, key string) {
			if branch == sc.renameBefore[0] && key == sc.renameBefore[1] {
				renameNow()
			}
		}
	}

	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	p := must(uncommitted.NewPreparer(bucket, opts...))
	repo := uncommitted.Repository{ID: repoID, StorageNamespace: "mem://" + repoID}
	var mark *uncommitted.Checkpoint
	var runID string
	for calls := 0; ; calls++ {
		if calls > 100 {
			t.Fatal("export did not finish in 100 calls")
		}
		res, err := p.Prepare(ctx, repo, s, mark)
		if err != nil {
			t.Fatal(err)
		}
		runID, mark = res.RunID, res.Checkpoint
		if mark == nil {
			break
		}
		if sc.betweenCalls && mark.BranchID == sc.renameBefore[0] && mark.Path == sc.renameBefore[1] {
			renameNow()
		}
	}
	if !renamed {
		t.Fatal("the export never reached the point of the rename")
	}
	exported = map[string]bool{}
	for row, err := range uncommitted.ReadRun(ctx, bucket, uncommitted.DefaultStoragePrefix, runID) {
		if err != nil {
			t.Fatal(err)
		}
		exported[row.PhysicalAddress] = true
	}
	return exported, staged, renamedAddress
}

// TestRenameDuringExport: with copytrack's addresses as the export's
// trailer, the renamed object's address is exported although the scan saw
// neither its source nor its destination.
func TestRenameDuringExport(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			exported, staged, addr := export(t, sc, true)
			if !exported[addr] {
				t.Errorf("the renamed object's address %s is not in the export %v: a GC would delete it", addr, exported)
			}
			if !maps.Equal(exported, staged) {
				t.Errorf("export = %v, want every address staged before the run: %v", exported, staged)
			}
		})
	}
}

// TestRenameDuringExportWithoutTracker is the control: without the trailer
// the same interleaving loses the address, so the scenarios above do hit
// the race (and the trailer is what closes it).
func TestRenameDuringExportWithoutTracker(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			exported, staged, addr := export(t, sc, false)
			if exported[addr] {
				t.Errorf("without the tracker, %s is still exported: the scenario does not reproduce the race", addr)
			}
			delete(staged, addr)
			if !maps.Equal(exported, staged) {
				t.Errorf("export = %v, want every other address staged before the run: %v", exported, staged)
			}
		})
	}
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
