package retention_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log"
	"time"

	"github.com/lakegc/lakegc/retention"
	"gocloud.dev/blob/memblob"
)

func ExampleRules() {
	var rules retention.Rules
	err := json.Unmarshal([]byte(`{
		"default_retention_days": 21,
		"branches": [{"branch_id": "main", "retention_days": 90}, {"branch_id": "tmp", "retention_days": 1}]
	}`), &rules)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rules.RetentionDays("main"), rules.RetentionDays("tmp"), rules.RetentionDays("dev"))

	b, err := rules.MarshalBinary() // the rules file lakeFS reads
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("% x\n", b)

	err = json.Unmarshal([]byte(`{"default_retention_days": 21}`), &rules)
	fmt.Println(errors.Is(err, retention.ErrInvalidRules), err)
	// Output:
	// 90 1 21
	// 08 15 12 08 0a 04 6d 61 69 6e 10 5a 12 07 0a 03 74 6d 70 10 01
	// true retention: invalid rules: branches is required
}

func ExampleRulesStore() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil) // the repository's storage namespace
	defer bucket.Close()

	store := retention.NewRulesStore(bucket)
	if _, err := store.Get(ctx); errors.Is(err, retention.ErrNotFound) {
		fmt.Println("no rules yet")
	}
	err := store.Save(ctx, &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 30}})
	if err != nil {
		log.Fatal(err)
	}
	rules, err := store.Get(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rules.DefaultRetentionDays, rules.BranchRetentionDays)
	// Output:
	// no rules yet
	// 7 map[main:30]
}

// commits is a CommitSource over commits held in memory.
type commits []retention.Commit

func (cs commits) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return func(yield func(retention.Commit, error) bool) {
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (cs commits) Get(ctx context.Context, id string) (retention.Commit, error) {
	for _, c := range cs {
		if c.ID == id {
			return c, nil
		}
	}
	return retention.Commit{}, fmt.Errorf("commit %s not found", id)
}

func branches(bs ...retention.Branch) iter.Seq2[retention.Branch, error] {
	return func(yield func(retention.Branch, error) bool) {
		for _, b := range bs {
			if !yield(b, nil) {
				return
			}
		}
	}
}

func ExampleActiveCommits() {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	daysAgo := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	repo := commits{
		{ID: "c1", CreationDate: daysAgo(100), MetaRangeID: "r1", Version: 1},
		{ID: "c2", Parents: []string{"c1"}, CreationDate: daysAgo(45), MetaRangeID: "r2", Version: 1},
		{ID: "c3", Parents: []string{"c2"}, CreationDate: daysAgo(40), MetaRangeID: "r3", Version: 1},
		// feature forks from c2, an hour ago.
		{ID: "f1", Parents: []string{"c2"}, CreationDate: now.Add(-time.Hour), MetaRangeID: "r4", Version: 1},
	}
	rules := &retention.Rules{DefaultRetentionDays: 30, BranchRetentionDays: map[string]int32{"feature": 1}}

	active, err := retention.ActiveCommits(context.Background(),
		branches(retention.Branch{ID: "main", CommitID: "c3"}, retention.Branch{ID: "feature", CommitID: "f1"}),
		repo, rules, now)
	if err != nil {
		log.Fatal(err)
	}
	// c3 is main's HEAD and f1 feature's. c2, the fork point, is kept by f1,
	// which is within feature's day; main's HEAD is too old to keep it.
	for _, c := range active {
		fmt.Println(c.CommitID, c.MetaRangeID)
	}
	// Output:
	// c2 r2
	// c3 r3
	// f1 r4
}

func ExampleWriteCommitsCSV() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()

	active := []retention.ActiveCommit{{CommitID: "c2", MetaRangeID: "r2"}, {CommitID: "c3", MetaRangeID: "r3"}}
	runID := "cv6jbmnr0ki3d8j9o3c0" // retention.NewRunID(time.Now()) in a real run
	key, err := retention.WriteCommitsCSV(ctx, bucket, "_lakefs", runID, active)
	if err != nil {
		log.Fatal(err)
	}
	report, err := bucket.ReadAll(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(key)
	fmt.Print(string(report))
	// Output:
	// _lakefs/retention/gc/commits/run_id=cv6jbmnr0ki3d8j9o3c0/commits.csv
	// commit_id,expired,metarange_id
	// c2,false,r2
	// c3,false,r3
}

// taggedCommits is a CommitSource that knows its tags and its default
// branch.
type taggedCommits struct {
	commits
	tags []retention.Tag
}

func (tc taggedCommits) Tags(ctx context.Context) iter.Seq2[retention.Tag, error] {
	return func(yield func(retention.Tag, error) bool) {
		for _, t := range tc.tags {
			if !yield(t, nil) {
				return
			}
		}
	}
}

func (tc taggedCommits) DefaultBranch(ctx context.Context) (string, error) { return "main", nil }

func ExampleActiveCommitsExtended() {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	daysAgo := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	repo := taggedCommits{
		commits: commits{
			{ID: "c1", CreationDate: daysAgo(100), MetaRangeID: "r1", Version: 1},
			{ID: "c2", Parents: []string{"c1"}, CreationDate: daysAgo(60), MetaRangeID: "r2", Version: 1},
			{ID: "c3", Parents: []string{"c2"}, CreationDate: daysAgo(45), MetaRangeID: "r3", Version: 1},
			{ID: "c4", Parents: []string{"c3"}, CreationDate: daysAgo(40), MetaRangeID: "r4", Version: 1},
			// An experiment forked from c1, untouched for 90 days.
			{ID: "x1", Parents: []string{"c1"}, CreationDate: daysAgo(90), MetaRangeID: "r5", Version: 1},
		},
		tags: []retention.Tag{{ID: "v1.0", CommitID: "c2"}},
	}
	rules := &retention.Rules{DefaultRetentionDays: 30}
	var ext retention.Extended
	err := json.Unmarshal([]byte(`{
		"version": 1,
		"stale_branch_days": 60,
		"branches": [{"branch": "main", "keep_last": 2}]
	}`), &ext)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(&ext)

	active, err := retention.ActiveCommitsExtended(context.Background(),
		branches(retention.Branch{ID: "main", CommitID: "c4"}, retention.Branch{ID: "experiment", CommitID: "x1"}),
		repo, rules, &ext, now)
	if err != nil {
		log.Fatal(err)
	}
	// c4 is main's HEAD, c3 its last commit but one, c2 is tagged. x1,
	// experiment's HEAD, is stale and older than 30 days: not kept.
	for _, c := range active {
		fmt.Println(c.CommitID)
	}
	// Output:
	// tagged commits kept; "main": last 2 commits; HEADs of branches stale for 60 days unprotected
	// c2
	// c3
	// c4
}
