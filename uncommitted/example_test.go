package uncommitted_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
	"gocloud.dev/blob/memblob"
)

// staging is a host's staging area: two branches, one with a staged
// deletion and an object imported from outside the namespace.
type staging map[string][]uncommitted.Entry

func (s staging) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, b := range []string{"dev", "main"} {
			if b >= from && !yield(b, nil) {
				return
			}
		}
	}
}

func (s staging) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for _, e := range s[branch] {
			if e.Key >= from && !yield(e, nil) {
				return
			}
		}
	}
}

func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil) // rooted at the storage namespace
	defer bucket.Close()
	staged := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	src := staging{
		"dev": {
			{Key: "logs/1.json", PhysicalAddress: "data/gqj0/cv1", CreationDate: staged},
			{Key: "logs/2.json", Tombstone: true},
		},
		"main": {
			{Key: "a.csv", PhysicalAddress: "data/gqj0/cv2", CreationDate: staged},
			{Key: "b.csv", PhysicalAddress: "s3://bucket/repo1/data/gqj1/cv3", AddressType: uncommitted.Full, CreationDate: staged},
			{Key: "c.csv", PhysicalAddress: "s3://imports/c.csv", AddressType: uncommitted.Full, CreationDate: staged},
		},
	}
	repo := uncommitted.Repository{ID: "repo1", StorageNamespace: "s3://bucket/repo1"}
	p, err := uncommitted.NewPreparer(bucket,
		// One row a page, to show the pages. A page stops before the next
		// entry, so the last one may be empty (c.csv is outside the namespace).
		uncommitted.WithMaxFileSize(1),
		uncommitted.WithRunID(func() string { return "run1" }),
	)
	if err != nil {
		fmt.Println(err)
		return
	}

	var mark *uncommitted.Checkpoint // nil: start a new run
	for page := 1; ; page++ {
		res, err := p.Prepare(ctx, repo, src, mark)
		if err != nil {
			fmt.Println(err)
			return
		}
		token := uncommitted.EncodeToken(res.Checkpoint) // what an API returns
		fmt.Printf("page %d: %d row(s) in %s, continue: %q\n", page, res.Rows, res.Location, token)
		if mark, err = uncommitted.DecodeToken(token); err != nil || mark == nil {
			break
		}
	}
	// The GC's input: the run's addresses, once its manifest shows it is
	// complete (sweep.Inputs.Uncommitted takes this sequence as it is).
	for addr, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", "run1") {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(addr)
	}
	// A mistyped storage prefix names no run: an error, not an empty export.
	for _, err := range uncommitted.Addresses(ctx, bucket, "lakefs", "run1") {
		fmt.Println(errors.Is(err, uncommitted.ErrNoRun), err)
	}
	// Unordered output:
	// page 1: 1 row(s) in s3://bucket/repo1/_lakefs/retention/gc/uncommitted/run1/uncommitted/, continue: "eyJicmFuY2giOiJkZXYiLCJwYXRoIjoibG9ncy8yLmpzb24iLCJydW5faWQiOiJydW4xIiwia2V5IjoiIn0="
	// page 2: 1 row(s) in s3://bucket/repo1/_lakefs/retention/gc/uncommitted/run1/uncommitted/, continue: "eyJicmFuY2giOiJtYWluIiwicGF0aCI6ImIuY3N2IiwicnVuX2lkIjoicnVuMSIsImtleSI6IiJ9"
	// page 3: 1 row(s) in s3://bucket/repo1/_lakefs/retention/gc/uncommitted/run1/uncommitted/, continue: "eyJicmFuY2giOiJtYWluIiwicGF0aCI6ImMuY3N2IiwicnVuX2lkIjoicnVuMSIsImtleSI6IiJ9"
	// page 4: 0 row(s) in s3://bucket/repo1/_lakefs/retention/gc/uncommitted/run1/uncommitted/, continue: ""
	// data/gqj0/cv1
	// data/gqj0/cv2
	// data/gqj1/cv3
	// true uncommitted: no such run run1: no file and no manifest in lakefs/retention/gc/uncommitted/run1/uncommitted/
}
