// Command paths shows the two smallest lakegc primitives at work: it hands out
// a few physical addresses with pathprovider, signs one for an upload with
// linkaddr, verifies it as a link step would, and shows tampered or reused
// addresses being refused.
//
//	go run ./examples/paths
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paths:", err)
		os.Exit(1)
	}
}

// run prints the demo to w.
func run(w io.Writer) error {
	// A clock the demo moves by hand, so it shows a slice rollover and an
	// expiry without waiting. It starts two hours ago.
	now := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Hour)
	clock := func() time.Time { return now }
	paths, err := pathprovider.New(
		pathprovider.WithPartitionSize(3),
		pathprovider.WithInterval(time.Hour),
		pathprovider.WithClock(clock),
	)
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "1. Addresses from pathprovider (a slice holds 3; the clock ticks 1s a path, and jumps 2h before the 5th):")
	var last string
	for i := range 6 {
		now = now.Add(time.Second)
		if i == 4 {
			now = now.Add(2 * time.Hour)
		}
		last = paths.NewPath()
		a, err := pathprovider.Parse(last)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   %s   slice started %s, object made %s\n",
			last, a.SliceTime.Format(time.TimeOnly), a.ObjectTime.Format(time.TimeOnly))
	}
	fmt.Fprintln(w, "   Newer slices sort first (to the second), so a GC listing the namespace meets the newest data first.")

	signer, err := linkaddr.New([]byte("demo key: keep yours secret"), paths,
		linkaddr.WithTTL(24*time.Hour), linkaddr.WithClock(clock))
	if err != nil {
		return err
	}
	const repo, branch, path = "repo1", "main", "tables/events/part-0001.parquet"
	signed, err := signer.Sign(repo, branch, path, last)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n2. Signed for %s@%s:%s\n   %s\n", repo, branch, path, signed)

	fmt.Fprintln(w, "\n3. The link step verifies it:")
	report := func(what string, link linkaddr.Link, err error) {
		if err != nil {
			fmt.Fprintf(w, "   %-38s refused: %v\n", what, err)
			return
		}
		fmt.Fprintf(w, "   %-38s accepted: %s, to stage by %s\n", what, link.Address, link.Deadline.Format(time.DateTime))
	}
	link, err := signer.Verify(repo, branch, path, signed)
	report("same repository, branch and path", link, err)
	link, err = signer.Verify(repo, branch, "tables/other.parquet", signed)
	report("another path", link, err)
	tampered := strings.Replace(signed, "data/", "date/", 1)
	link, err = signer.Verify(repo, branch, path, tampered)
	report("tampered address", link, err)

	redeemer := linkaddr.NewMemRedeemer()
	ctx := context.Background()
	link, err = signer.VerifyOnce(ctx, redeemer, repo, branch, path, signed)
	report("first link (VerifyOnce)", link, err)
	link, err = signer.VerifyOnce(ctx, redeemer, repo, branch, path, signed)
	report("second link of the same address", link, err)

	now = now.Add(25 * time.Hour)
	link, err = signer.Verify(repo, branch, path, signed)
	report("25 hours later", link, err)
	return nil
}
