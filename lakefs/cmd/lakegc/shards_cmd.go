package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lakegc/lakegc/lakefs/host"
)

func init() { commands["shards"] = shardsCommand }

const shardsHead = `
Usage: lakegc shards --repo NAME [--json] RUN_ID...

Prints the combined summary of the runs of one sharded mark ("lakegc gc
--shard i/n", or the pods of an Indexed Job): the n runs' IDs, in any order.
Runs that are not shards 0 to n-1 of one shard count, each once and
successful, are refused (exit 2; an unknown run, exit 4).

Exit codes: 0 done, 1 failed, 2 usage or not one mark's shards, 3 lakeFS
error, 4 a run unknown.
`

// shardsCommand is "lakegc shards": host.CombineShards over the runs given,
// read from the repository's namespace.
func shardsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	c := &common{name: "lakegc shards"}
	fs := newFlagSet(c.name, shardsHead, &out)
	c.register(fs)
	runs, code := c.parse(fs, &out, args, getenv, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(runs) == 0 {
		return c.usage(stderr, "no run IDs: give the run ID of each shard")
	}
	client, err := c.client()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	repo, err := client.GetRepository(ctx, c.repo)
	if err != nil {
		return c.fail(ctx, stdout, stderr, fmt.Errorf("%w: %w", host.ErrLakeFS, err))
	}
	bucket, err := host.OpenNamespace(ctx, repo.StorageNamespace, c.blockstorePath, c.store)
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	defer bucket.Close()
	sum, err := host.CombineShards(ctx, bucket, runs...)
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	if c.json {
		if !writeJSON(stdout, stderr, sum) {
			return exitFailed
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "repository %s, %d shards: %d garbage, %d kept, %d young, %d unrecognized (%d bytes), %d in other repositories' folders; %d slices listed; cutoffs %s to %s\n",
		c.repo, sum.Shards, sum.NumDeletedObjects, sum.NumKeptObjects, sum.NumYoungObjects, sum.NumUnrecognizedObjects, sum.UnrecognizedBytes,
		sum.NumWalledObjects, sum.SlicesListed, sum.FirstCutoff.Format(time.RFC3339), sum.LastCutoff.Format(time.RFC3339))
	for i, id := range sum.RunIDs {
		fmt.Fprintf(stdout, "shard %d: run %s\n", i, id)
	}
	return exitOK
}
