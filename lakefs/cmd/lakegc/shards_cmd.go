package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
)

// runShards is "lakegc shards --repo NAME RUN_ID...": the combined summary
// of the runs of one sharded mark (host.CombineShards), read from the
// repository's namespace. It refuses runs that are not shards 0 to n-1 of
// one n, each once.
func runShards(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakegc shards", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	var endpoint, key, secret, repo, blockstorePath, lakeFSConfig string
	var asJSON bool
	fs.StringVar(&endpoint, "endpoint", "", "lakeFS `URL` (env "+api.EnvEndpointURL+")")
	fs.StringVar(&key, "access-key-id", "", "access key ID (env "+api.EnvAccessKeyID+")")
	fs.StringVar(&secret, "secret-access-key", "", "secret access key (env "+api.EnvSecretAccessKey+")")
	fs.StringVar(&repo, "repo", "", "repository `NAME` (required)")
	fs.StringVar(&blockstorePath, "blockstore-path", "", "lakeFS's local blockstore folder, for a local:// repository (env "+envBlockstorePath+")")
	fs.StringVar(&lakeFSConfig, "lakefs-config", "", "lakeFS's configuration `FILE`: open the namespace with its blockstore settings")
	fs.BoolVar(&asJSON, "json", false, "print the combined summary as JSON")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: lakegc shards --repo NAME [--json] RUN_ID...

Prints the combined summary of the runs of one sharded mark ("lakegc gc
--shard i/n", or an Indexed Job's pods): their run IDs in any order, all n of
them. Runs that are not shards 0 to n-1 of one n, each once and successful,
are refused.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = out.WriteTo(stdout)
			return exitOK
		}
		_, _ = out.WriteTo(stderr)
		return exitUsage
	}
	for _, v := range []struct {
		p   *string
		env string
	}{{&endpoint, api.EnvEndpointURL}, {&key, api.EnvAccessKeyID}, {&secret, api.EnvSecretAccessKey}, {&blockstorePath, envBlockstorePath}} {
		if *v.p == "" {
			*v.p = getenv(v.env)
		}
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "lakegc shards: "+format+"\n", a...)
		return code
	}
	switch {
	case repo == "":
		return fail(exitUsage, "--repo is required")
	case fs.NArg() == 0:
		return fail(exitUsage, "no run IDs: give the run ID of each shard")
	case endpoint == "" || key == "" || secret == "":
		return fail(exitUsage, "--endpoint and an access key pair are required (or %s, %s and %s)", api.EnvEndpointURL, api.EnvAccessKeyID, api.EnvSecretAccessKey)
	}
	var store *blockstore.Config
	if lakeFSConfig != "" {
		var err error
		if store, err = blockstore.Load(lakeFSConfig, getenv); err != nil {
			return fail(exitUsage, "--lakefs-config: %v", err)
		}
		if store.Type == blockstore.TypeLocal && blockstorePath == "" {
			blockstorePath = store.Local.Path
		}
	}
	client, err := api.New(endpoint, key, secret)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	r, err := client.GetRepository(ctx, repo)
	if err != nil {
		return fail(exitLakeFS, "%v", err)
	}
	bucket, err := host.OpenNamespace(ctx, r.StorageNamespace, blockstorePath, store)
	if err != nil {
		if errors.Is(err, namespace.ErrNoLocalRoot) || errors.Is(err, blockstore.ErrInvalidInput) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailed, "%v", err)
	}
	defer bucket.Close()
	sum, err := host.CombineShards(ctx, bucket, fs.Args()...)
	if err != nil {
		if errors.Is(err, host.ErrInvalidInput) || errors.Is(err, sweep.ErrInvalidInput) || errors.Is(err, sweep.ErrNoRun) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailed, "%v", err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return fail(exitFailed, "%v", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "repository %s, %d shards: %d garbage, %d kept, %d young, %d unrecognized (%d bytes), %d in other repositories' folders; %d slices listed; cutoffs %s to %s\n",
		repo, sum.Shards, sum.NumDeletedObjects, sum.NumKeptObjects, sum.NumYoungObjects, sum.NumUnrecognizedObjects, sum.UnrecognizedBytes,
		sum.NumWalledObjects, sum.SlicesListed, sum.FirstCutoff.Format("2006-01-02T15:04:05Z07:00"), sum.LastCutoff.Format("2006-01-02T15:04:05Z07:00"))
	for i, id := range sum.RunIDs {
		fmt.Fprintf(stdout, "shard %d: run %s\n", i, id)
	}
	return exitOK
}
