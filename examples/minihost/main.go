// Command minihost is the smallest host of lakegc: a versioned store in
// memory (branches, commits, a staging area, and the adapters
// lakegc.Collect reads), its objects in a directory, and one GC cycle. It
// imports nothing of the examples, so that it can be copied whole as the
// start of a host (tests/internal/maphost is the tests' copy of its
// store).
//
//	go run ./examples/minihost
package main

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log"
	"maps"
	"os"
	"slices"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// store is the versioned store's metadata; the objects are in a bucket. It
// is not safe for concurrent use, and Collect does not need it to be.
type store struct {
	staged  map[string]map[string]uncommitted.Entry // branch → path → entry
	heads   map[string]string                       // branch → head commit, once it has one
	commits map[string]retention.Commit
	files   map[string]map[string]string // commit → path → address
}

func newStore() *store {
	return &store{staged: map[string]map[string]uncommitted.Entry{}, heads: map[string]string{},
		commits: map[string]retention.Commit{}, files: map[string]map[string]string{}}
}

// commit turns a branch's staging area (which never holds a tombstone:
// a path is unstaged by deleting its entry) into a commit.
func (s *store) commit(b string, now time.Time) {
	c := retention.Commit{ID: fmt.Sprintf("c%d", len(s.commits)+1), CreationDate: now, Version: 1}
	files := map[string]string{}
	if head, ok := s.heads[b]; ok {
		c.Parents, files = []string{head}, maps.Clone(s.files[head])
	}
	for path, e := range s.staged[b] {
		files[path] = e.PhysicalAddress
	}
	s.commits[c.ID], s.files[c.ID], s.heads[b], s.staged[b] = c, files, c.ID, map[string]uncommitted.Entry{}
}

// seq yields items, then err or ctx's error: never stop quietly.
func seq[T any](ctx context.Context, items []T, err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, v := range items {
			if ctx.Err() == nil && !yield(v, nil) {
				return
			}
		}
		if err := cmp.Or(err, ctx.Err()); err != nil {
			yield(*new(T), err)
		}
	}
}

func (s *store) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	ids := slices.Sorted(maps.Keys(s.staged))
	i, _ := slices.BinarySearch(ids, from)
	return seq(ctx, ids[i:], nil)
}

func (s *store) Uncommitted(ctx context.Context, b, from string) iter.Seq2[uncommitted.Entry, error] {
	staged, ok := s.staged[b]
	if !ok {
		return seq[uncommitted.Entry](ctx, nil, fmt.Errorf("branch %s: %w", b, uncommitted.ErrBranchNotFound))
	}
	var entries []uncommitted.Entry
	for _, path := range slices.Sorted(maps.Keys(staged)) {
		if path >= from {
			entries = append(entries, staged[path])
		}
	}
	return seq(ctx, entries, nil)
}

func (s *store) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	var heads []retention.Branch
	for _, id := range slices.Sorted(maps.Keys(s.heads)) {
		heads = append(heads, retention.Branch{ID: id, CommitID: s.heads[id]})
	}
	return seq(ctx, heads, nil)
}

func (s *store) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return seq(ctx, slices.Collect(maps.Values(s.commits)), nil)
}

func (s *store) Get(ctx context.Context, id string) (retention.Commit, error) {
	if c, ok := s.commits[id]; ok {
		return c, ctx.Err()
	}
	return retention.Commit{}, fmt.Errorf("commit %q not found", id)
}

func (s *store) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	var addrs []string
	for _, a := range active {
		files, ok := s.files[a.CommitID]
		if !ok {
			return seq[string](ctx, nil, fmt.Errorf("commit %q not found", a.CommitID))
		}
		addrs = slices.AppendSeq(addrs, maps.Values(files))
	}
	return seq(ctx, addrs, nil)
}

// run writes a little history into a bucket in dir, then runs a GC cycle
// over it as if three days later: a dry run, or one that deletes.
func run(ctx context.Context, dir string, sweep bool) (*lakegc.Report, error) {
	paths, _ := pathprovider.New() // no option: cannot fail
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	s := newStore()
	s.staged["main"] = map[string]uncommitted.Entry{}
	upload := func(path, data string) {
		addr := paths.NewPath()
		err = cmp.Or(err, bucket.WriteAll(ctx, addr, []byte(data), nil))
		s.staged["main"][path] = uncommitted.Entry{Key: path, PhysicalAddress: addr, CreationDate: time.Now()}
	}
	upload("report.csv", "v1")
	s.commit("main", time.Now().Add(-time.Hour))
	upload("report.csv", "v2") // v1 is now only in c1, which the rules expire
	upload("scratch.tmp", "never committed")
	delete(s.staged["main"], "scratch.tmp")
	s.commit("main", time.Now())
	upload("draft.csv", "staged, not committed")
	if err = cmp.Or(err, retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1})); err != nil {
		return nil, err
	}
	// The host marks the repository's folder when it creates it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "file://" + dir}); err != nil {
		return nil, err
	}
	return lakegc.Collect(ctx, lakegc.Host{Staging: s, Commits: s, Committed: s}, lakegc.Config{
		Bucket: bucket, Namespace: "file://" + dir, Repository: "mini", Sweep: sweep,
		Clock: func() time.Time { return time.Now().Add(72 * time.Hour) },
	})
}

func main() {
	dir, err := os.MkdirTemp("", "minihost-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r, err := run(context.Background(), dir, true)
	if err != nil {
		log.Panic(err) // runs the deferred RemoveAll
	}
	fmt.Printf("exported %d rows, %d active commits, marked %d objects, deleted %d\n",
		r.Export.Rows, r.Commits.Active, r.Mark.Summary.NumDeletedObjects, r.Sweep.Deleted)
}
