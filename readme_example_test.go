package lakegc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/gctest"
	"github.com/lakegc/lakegc/hostkit"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// This file holds the Go code of README.md, each block between a
// "README: begin" and a "README: end" line, one tab in:
// TestReadmeCodeIsCompiled checks that they are the README's blocks, in
// order, and Example_readme runs them.

// hostStore is what the README calls store: the host's versioned store.
type hostStore interface {
	uncommitted.Source
	lakegc.Commits
	lakegc.Committed
}

func readmeWrite(ctx context.Context, stage, unstage func(context.Context) error) error {
	// README: begin
	// import "github.com/lakegc/lakegc/linkaddr" and "github.com/lakegc/lakegc/pathprovider"
	paths, _ := pathprovider.New() // data/<slice>/<xid>, newest slice first; no option: no error
	signer, err := linkaddr.New([]byte("secret key"), paths)
	if err != nil {
		return err
	}
	once := linkaddr.NewMemRedeemer() // each address links once; the signer's TTL is 24h
	// get-address: a fresh physical address, signed for where it will be linked.
	signed, err := signer.Sign("repo1", "main", "tables/t/part-0.parquet", paths.NewPath())
	if err != nil { // a repository, branch or path that is not UTF-8
		return err
	}
	// ...the client uploads to the address, then asks to link it:
	link, err := signer.VerifyOnce(ctx, once, "repo1", "main", "tables/t/part-0.parquet", signed)
	if err != nil { // tampered, other repo/branch/path, under 15 min of TTL left (ErrExpired), or reused
		return err
	}
	// the host's staging write of link.Address, and its undo if it ends past link.Deadline:
	if err := signer.Stage(ctx, link, stage, unstage); err != nil {
		return err
	}
	// README: end
	return nil
}

func readmeCollect(ctx context.Context, store hostStore, bucket *blob.Bucket) error {
	// README: begin
	// import "github.com/lakegc/lakegc" and "github.com/lakegc/lakegc/retention"
	host := lakegc.Host{Staging: store, Commits: store, Committed: store} // Copies: see package copytrack
	cfg := lakegc.Config{
		Bucket:     bucket,              // gocloud.dev/blob, rooted at the storage namespace
		Namespace:  "s3://bucket/repo1", // spelled as the host spells the full addresses it stores
		Repository: "repo1",
		LinkTTL:    24 * time.Hour, // the signer's TTL: the floor of the minimum age
		// Without rules Collect keeps every commit (and says so at WARN).
		Rules: &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 21}},
	}
	// Once, when the host creates the repository: Collect refuses a bucket without a marker.
	if err := lakegc.InitNamespace(ctx, cfg); err != nil {
		return err
	}
	report, err := lakegc.Collect(ctx, host, cfg) // a dry run: it marks, and deletes nothing
	if err != nil {
		return err // nothing half-done is ever read as finished: run it again
	}
	fmt.Println("a sweep would delete", report.Mark.Summary.NumDeletedObjects, "objects")
	// Review it (lakegc.Candidates, lakegc.Explain), then delete exactly what it marked:
	if _, err := lakegc.SweepRun(ctx, cfg, report.RunID); err != nil { // ErrSuperseded if a later mark exists
		return err
	}
	// README: end
	return nil
}

// readmeTest runs the README's test of a host, and fails unless the
// garbage it wrote is gone.
func readmeTest(ctx context.Context, store hostStore) error {
	// README: begin
	// import "github.com/lakegc/lakegc/gctest" and "gocloud.dev/blob/memblob"
	clock := gctest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bucket := clock.Bucket(memblob.OpenBucket(nil)) // modification times follow the clock
	paths, _ := clock.Paths()                       // so do the slices of new addresses
	garbage := paths.NewPath()                      // an upload never linked
	if err := bucket.WriteAll(ctx, garbage, []byte("x"), nil); err != nil {
		return err
	}
	clock.Advance(72 * time.Hour) // three days later, on the same clock:
	cfg := lakegc.Config{Bucket: bucket, Namespace: "mem://repo1", Clock: clock.Now, Sweep: true}
	// ...InitNamespace, the rules and lakegc.Collect as above: the garbage is gone.
	// README: end
	defer bucket.Close()
	if err := lakegc.InitNamespace(ctx, cfg); err != nil {
		return err
	}
	if err := retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}); err != nil {
		return err
	}
	if _, err := lakegc.Collect(ctx, lakegc.Host{Staging: store, Commits: store, Committed: store}, cfg); err != nil {
		return err
	}
	if ok, err := bucket.Exists(ctx, garbage); err != nil || ok {
		return fmt.Errorf("garbage still there: %t, %v", ok, err)
	}
	return nil
}

// readmeStore is a staging area of branches, and no commits.
type readmeStore map[string]map[string]string // branch → path → address

func (s readmeStore) Branches(ctx context.Context, from string) hostkit.Seq[string] {
	return hostkit.Keys(ctx, s, from)
}

func (s readmeStore) Uncommitted(ctx context.Context, branch, from string) hostkit.Seq[uncommitted.Entry] {
	return hostkit.Staged(ctx, s, branch, from, func(path, addr string) uncommitted.Entry {
		return uncommitted.Entry{Key: path, PhysicalAddress: addr}
	})
}

func (s readmeStore) Heads(ctx context.Context) hostkit.Seq[retention.Branch] {
	return hostkit.Slice[retention.Branch](ctx, nil, nil)
}

func (s readmeStore) List(ctx context.Context) hostkit.Seq[retention.Commit] {
	return hostkit.Slice[retention.Commit](ctx, nil, nil)
}

func (s readmeStore) Get(ctx context.Context, id string) (retention.Commit, error) {
	return hostkit.Get(ctx, map[string]retention.Commit{}, id)
}

func (s readmeStore) CommittedAddresses(ctx context.Context, _ []retention.ActiveCommit) hostkit.Seq[string] {
	return hostkit.Slice[string](ctx, nil, nil)
}

// The README's code, run: a link staged, a dry run and a sweep, and a test
// on the simulated clock.
func Example_readme() {
	ctx := context.Background()
	store := readmeStore{"main": {}}
	stage := func(context.Context) error { store["main"]["tables/t/part-0.parquet"] = "linked"; return nil }
	unstage := func(context.Context) error { delete(store["main"], "tables/t/part-0.parquet"); return nil }
	if err := readmeWrite(ctx, stage, unstage); err != nil {
		panic(err)
	}
	fmt.Println("staged:", len(store["main"]))

	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := readmeCollect(ctx, store, bucket); err != nil {
		panic(err)
	}
	fmt.Println("garbage deleted three days later:", readmeTest(ctx, readmeStore{"main": {}}) == nil)
	// Output:
	// staged: 1
	// a sweep would delete 0 objects
	// garbage deleted three days later: true
}

// readmeBlocks returns the Go blocks of README.md.
func readmeBlocks(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var b *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		switch line := sc.Text(); {
		case b == nil && line == "```go":
			b = &strings.Builder{}
		case b != nil && line == "```":
			blocks, b = append(blocks, b.String()), nil
		case b != nil:
			b.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// fileBlocks returns the blocks of this file between README markers,
// one tab of indentation removed.
func fileBlocks(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var b *strings.Builder
	for _, line := range strings.Split(string(src), "\n") {
		switch strings.TrimSpace(line) {
		case "// README: begin":
			b = &strings.Builder{}
			continue
		case "// README: end":
			if b != nil {
				blocks, b = append(blocks, b.String()), nil
			}
			continue
		}
		if b != nil {
			b.WriteString(strings.TrimPrefix(line, "\t") + "\n")
		}
	}
	return blocks
}

// The README's Go code is this file's, so it compiles as written and
// Example_readme runs it: edit both together.
func TestReadmeCodeIsCompiled(t *testing.T) {
	readme, file := readmeBlocks(t), fileBlocks(t)
	if len(readme) == 0 || len(readme) != len(file) {
		t.Fatalf("README.md has %d Go blocks, readme_example_test.go %d", len(readme), len(file))
	}
	for i := range readme {
		if readme[i] != file[i] {
			rl, fl := strings.Split(readme[i], "\n"), strings.Split(file[i], "\n")
			j := 0
			for j < min(len(rl), len(fl)) && rl[j] == fl[j] {
				j++
			}
			t.Errorf("Go block %d of README.md differs from readme_example_test.go at its line %d:\n README %q\n file   %q",
				i+1, j+1, rl[min(j, len(rl)-1)], fl[min(j, len(fl)-1)])
		}
	}
}
