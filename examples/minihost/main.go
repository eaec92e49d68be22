// Command minihost is the smallest host of lakegc: a versioned store in
// memory (store.go: branches, commits, a staging area, and the adapters
// lakegc.Collect reads), its objects in a directory, and one GC cycle.
//
//	go run ./examples/minihost
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// run writes a little history into a bucket in dir, then runs a GC cycle
// over it as if three days later: a dry run, or one that deletes.
func run(ctx context.Context, dir string, sweep bool) (*lakegc.Report, error) {
	paths, err := pathprovider.New()
	if err != nil {
		return nil, err
	}
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	s := newStore()
	upload := func(path, data string) {
		addr := paths.NewPath()
		err = cmp.Or(err, bucket.WriteAll(ctx, addr, []byte(data), nil))
		s.branches["main"].staged[path] = uncommitted.Entry{Key: path, PhysicalAddress: addr, CreationDate: time.Now()}
	}
	upload("report.csv", "v1")
	s.commit("main", time.Now().Add(-time.Hour))
	upload("report.csv", "v2") // v1 is now only in c1, which the rules expire
	upload("scratch.tmp", "never committed")
	delete(s.branches["main"].staged, "scratch.tmp")
	s.commit("main", time.Now())
	upload("draft.csv", "staged, not committed")
	err = cmp.Or(err, retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}))
	if err != nil {
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
