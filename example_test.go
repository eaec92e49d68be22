package lakegc_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// Example shows the get-address → upload → link flow that keeps objects in
// flight safe from a GC: the service hands out a fresh address signed for where
// it will be linked, and links it at most once, before the link TTL runs out.
func Example() {
	ctx := context.Background()
	paths, err := pathprovider.New() // data/<slice>/<xid>, newest slice first
	if err != nil {
		panic(err)
	}
	signer, err := linkaddr.New([]byte("a secret key"), paths) // TTL 24h, lakeFS wire format
	if err != nil {
		panic(err)
	}
	once := linkaddr.NewMemRedeemer()

	// get-address: the client will upload its data to this physical address.
	signed, err := signer.Sign("repo1", "main", "tables/t/part-0.parquet", paths.NewPath())
	if err != nil {
		panic(err)
	}

	// link: the same repository, branch and path, once.
	link, err := signer.VerifyOnce(ctx, once, "repo1", "main", "tables/t/part-0.parquet", signed)
	fmt.Println("linked:", err == nil)
	// Stage by link.Deadline: Stage undoes a write that lands later.
	staging := map[string]string{}
	err = signer.Stage(ctx, link,
		func(context.Context) error { staging["tables/t/part-0.parquet"] = link.Address; return nil },
		func(context.Context) error { delete(staging, "tables/t/part-0.parquet"); return nil })
	fmt.Println("staged:", err == nil)
	_, err = signer.VerifyOnce(ctx, once, "repo1", "main", "tables/t/part-0.parquet", signed)
	fmt.Println("linked twice:", errors.Is(err, linkaddr.ErrInvalid))
	_, err = signer.Verify("repo1", "dev", "tables/t/part-0.parquet", signed)
	fmt.Println("linked on another branch:", errors.Is(err, linkaddr.ErrInvalid))

	// A GC skips slices newer than the link TTL: the address tells its age.
	a, err := pathprovider.Parse(link.Address)
	fmt.Println("prefix:", a.Prefix, err)
	// Output:
	// linked: true
	// staged: true
	// linked twice: true
	// linked on another branch: true
	// prefix: data <nil>
}

// tinyStore is a versioned store of one branch: a commit and a staging
// area. A real host adapts its own metadata the same way.
type tinyStore struct {
	head   retention.Commit
	tree   []string          // the addresses of the commit's objects
	staged map[string]string // path → address
}

func (s *tinyStore) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return items(ctx, slices.DeleteFunc([]string{"main"}, func(id string) bool { return id < from }))
}

func (s *tinyStore) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	if branch != "main" {
		return items[uncommitted.Entry](ctx, nil, uncommitted.ErrBranchNotFound)
	}
	var entries []uncommitted.Entry
	for _, path := range slices.Sorted(maps.Keys(s.staged)) {
		if path >= from {
			entries = append(entries, uncommitted.Entry{Key: path, PhysicalAddress: s.staged[path]})
		}
	}
	return items(ctx, entries)
}

func (s *tinyStore) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	return items(ctx, []retention.Branch{{ID: "main", CommitID: s.head.ID}})
}

func (s *tinyStore) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return items(ctx, []retention.Commit{s.head})
}

func (s *tinyStore) Get(ctx context.Context, id string) (retention.Commit, error) {
	if id != s.head.ID {
		return retention.Commit{}, fmt.Errorf("no commit %q", id)
	}
	return s.head, ctx.Err()
}

func (s *tinyStore) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	return items(ctx, s.tree) // one commit: it is active
}

// items yields vs, then err if not nil, and stops with ctx's error.
func items[T any](ctx context.Context, vs []T, errs ...error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for _, v := range vs {
			if ctx.Err() != nil {
				break
			}
			if !yield(v, nil) {
				return
			}
		}
		for _, err := range append(errs, ctx.Err()) {
			if err != nil {
				yield(zero, err)
				return
			}
		}
	}
}

// ExampleCollect runs a GC cycle of a tiny store: a dry run first, then a
// sweep of what it marked.
func ExampleCollect() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil) // rooted at the repository's namespace
	defer bucket.Close()
	for _, key := range []string{"data/s/committed", "data/s/staged", "data/s/orphan"} {
		if err := bucket.WriteAll(ctx, key, []byte(key), nil); err != nil {
			panic(err)
		}
	}
	store := &tinyStore{
		head:   retention.Commit{ID: "c1", CreationDate: time.Now(), MetaRangeID: "m1"},
		tree:   []string{"data/s/committed"},
		staged: map[string]string{"tables/t/part-0.parquet": "data/s/staged"},
	}
	host := lakegc.Host{Staging: store, Commits: store, Committed: store}
	cfg := lakegc.Config{
		Bucket:     bucket,
		Namespace:  "mem://repo1",
		Repository: "repo1",
		// The objects were written just now: run the GC as if two days
		// had passed, so that they are older than the minimum age.
		Clock: func() time.Time { return time.Now().Add(48 * time.Hour) },
		// lakeFS names objects data/<slice>/<xid>; this example's names are
		// for the reader, so the operator includes their folder. Without
		// it, they are unrecognized: reported, never deleted.
		Include: []string{"data/s/"},
	}
	// The host marks the repository's folder when it creates it (lakeFS
	// writes its own marker): Collect refuses a bucket without one.
	if err := lakegc.InitNamespace(ctx, cfg); err != nil {
		panic(err)
	}

	report, err := lakegc.Collect(ctx, host, cfg) // a dry run
	if err != nil {
		panic(err)
	}
	fmt.Println("rules found:", report.Rules.Found, "- active commits:", report.Commits.Active)
	fmt.Println("a sweep would delete:", report.Mark.Summary.NumDeletedObjects)
	for key, err := range sweep.Candidates(ctx, bucket, lakegc.DefaultStoragePrefix, report.RunID) {
		fmt.Println("  ", key, err)
	}

	cfg.ResumeMark, cfg.Sweep = report.RunID, true
	swept, err := lakegc.Collect(ctx, lakegc.Host{}, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("deleted:", swept.Sweep.Deleted)
	// Output:
	// rules found: false - active commits: 1
	// a sweep would delete: 1
	//    data/s/orphan <nil>
	// deleted: 1
}
