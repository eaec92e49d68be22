// Command minihost is the smallest host of lakegc: a toy versioned store
// (store.go: branches, commits, a staging area, objects in a directory),
// the adapters lakegc.Collect reads, built with package hostkit, and one GC
// cycle. The store's data model is not lakeFS's — relative addresses only,
// no metaranges, no commit versions — and its adapters pass
// uncommitted/sourcetest and retention/sourcetest as they are. It imports
// nothing of the examples, so that it can be copied whole as the start of
// a host.
//
//	go run ./examples/minihost
package main

import (
	"context"
	"fmt"
	"iter"
	"log"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/hostkit"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// Staging: uncommitted.Source. Every address is relative: AddressType
// stays zero.
func (s *store) Branches(ctx context.Context, from string) hostkit.Seq[string] {
	return hostkit.Keys(ctx, s.staging, from)
}

func (s *store) Uncommitted(ctx context.Context, branch, from string) hostkit.Seq[uncommitted.Entry] {
	return hostkit.Staged(ctx, s.staging, branch, from, func(path string, o object) uncommitted.Entry {
		return uncommitted.Entry{Key: path, PhysicalAddress: o.address, CreationDate: o.staged}
	})
}

// Commits: lakegc.Commits.
func (s *store) Heads(ctx context.Context) hostkit.Seq[retention.Branch] {
	return hostkit.Map(ctx, s.heads, "", func(id, head string) retention.Branch { return retention.Branch{ID: id, CommitID: head} })
}

func (s *store) List(ctx context.Context) hostkit.Seq[retention.Commit] {
	return hostkit.Values(ctx, s.commits, toCommit)
}

func (s *store) Get(ctx context.Context, id string) (retention.Commit, error) {
	c, err := hostkit.Get(ctx, s.commits, id)
	return toCommit(id, c), err
}

// toCommit leaves MetaRangeID empty (the store has no metaranges) and sets
// Version 1 (it has no versions: a merge's main parent is first).
func toCommit(id string, c commit) retention.Commit {
	return retention.Commit{ID: id, Parents: c.parents, CreationDate: c.date, Version: 1}
}

// Committed: lakegc.Committed, every object of every kept commit.
func (s *store) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) hostkit.Seq[string] {
	return hostkit.Concat(ctx, active, func(a retention.ActiveCommit) (iter.Seq[string], error) { return s.Files(a.CommitID) })
}

// run runs a GC cycle over a store with the demo's history, in dir (or a
// temporary directory if dir is ""), as if three days later: a dry run, or
// one that deletes.
func run(ctx context.Context, dir string, sweep bool) (*lakegc.Report, error) {
	s, err := openStore(ctx, dir) // with the demo's history
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cfg := lakegc.Config{Bucket: s.bucket, Namespace: "file://" + s.dir, Repository: "mini", Sweep: sweep,
		Clock: func() time.Time { return time.Now().Add(72 * time.Hour) }, Rules: &retention.Rules{DefaultRetentionDays: 1}}
	// The host marks the repository's folder when it creates it.
	if err := lakegc.InitNamespace(ctx, cfg); err != nil {
		return nil, err
	}
	return lakegc.Collect(ctx, lakegc.Host{Staging: s, Commits: s, Committed: s}, cfg)
}

func main() {
	r, err := run(context.Background(), "", true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exported %d rows, %d active commits, deleted %d objects\n", r.Export.Rows, r.Commits.Active, r.Sweep.Deleted)
}
