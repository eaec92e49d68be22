package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/lakefs"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/namespace"
)

// nsFlags are the flags of a command that works on a repository's storage
// namespace without a GC run: how to reach lakeFS (which names the
// namespace) and open the namespace.
type nsFlags struct {
	endpoint, accessKeyID, secretAccessKey string
	repo, blockstorePath                   string
	lakeFSConfig                           string
	json                                   bool
	store                                  *blockstore.Config
}

// register adds the flags to fs.
func (n *nsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&n.endpoint, "endpoint", "", "lakeFS `URL` (env "+api.EnvEndpointURL+")")
	fs.StringVar(&n.accessKeyID, "access-key-id", "", "access key ID (env "+api.EnvAccessKeyID+")")
	fs.StringVar(&n.secretAccessKey, "secret-access-key", "", "secret access key (env "+api.EnvSecretAccessKey+")")
	fs.StringVar(&n.repo, "repo", "", "repository `NAME` (required)")
	fs.StringVar(&n.blockstorePath, "blockstore-path", "", "lakeFS's local blockstore folder, for a local:// repository (env "+envBlockstorePath+")")
	fs.StringVar(&n.lakeFSConfig, "lakefs-config", "", "lakeFS's configuration `FILE`: open the storage namespace with its blockstore settings")
	fs.BoolVar(&n.json, "json", false, "print the result as JSON on stdout")
}

// finish reads the environment for the flags not given and checks them.
func (n *nsFlags) finish(getenv func(string) string) error {
	for _, v := range []struct {
		p   *string
		env string
	}{{&n.endpoint, api.EnvEndpointURL}, {&n.accessKeyID, api.EnvAccessKeyID}, {&n.secretAccessKey, api.EnvSecretAccessKey}, {&n.blockstorePath, envBlockstorePath}} {
		if *v.p == "" {
			*v.p = getenv(v.env)
		}
	}
	switch {
	case n.repo == "":
		return errors.New("--repo is required")
	case n.endpoint == "":
		return fmt.Errorf("--endpoint (or %s) is required", api.EnvEndpointURL)
	case n.accessKeyID == "" || n.secretAccessKey == "":
		return fmt.Errorf("an access key pair is required: --access-key-id and --secret-access-key, or %s and %s", api.EnvAccessKeyID, api.EnvSecretAccessKey)
	}
	if n.lakeFSConfig != "" {
		var err error
		if n.store, err = blockstore.Load(n.lakeFSConfig, getenv); err != nil {
			return fmt.Errorf("--lakefs-config: %v", err)
		}
		if n.store.Type == blockstore.TypeLocal && n.blockstorePath == "" {
			n.blockstorePath = n.store.Local.Path
		}
	}
	return nil
}

// open asks lakeFS for the repository's storage namespace and opens it; it
// returns the namespaces full addresses in it start with, too: as lakeFS
// names it, and for a local one with the blockstore's folder as lakeFS's
// addresses spell it. A failure returns the exit code to give.
func (n *nsFlags) open(ctx context.Context) (bucket *blob.Bucket, ns []string, code int, err error) {
	client, err := api.New(n.endpoint, n.accessKeyID, n.secretAccessKey)
	if err != nil {
		return nil, nil, exitUsage, err
	}
	repo, err := client.GetRepository(ctx, n.repo)
	if err != nil {
		return nil, nil, exitLakeFS, err
	}
	bucket, err = host.OpenNamespace(ctx, repo.StorageNamespace, n.blockstorePath, n.store)
	if err != nil {
		code = exitFailed
		if errors.Is(err, namespace.ErrNoLocalRoot) || errors.Is(err, blockstore.ErrInvalidInput) {
			code = exitUsage
		}
		return nil, nil, code, err
	}
	ns = []string{strings.TrimRight(repo.StorageNamespace, "/")}
	if root, err := filepath.Abs(n.blockstorePath); err == nil && n.blockstorePath != "" {
		if full, err := lakefs.AddressNamespace(ns[0], root); err == nil && full != ns[0] {
			ns = append(ns, strings.TrimRight(full, "/"))
		}
	}
	return bucket, ns, exitOK, nil
}

// parseFlags parses args with fs, printing the usage to stdout when asked
// for and to stderr after a wrong flag; code is -1 when the command should
// run.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int) {
	var out strings.Builder
	fs.SetOutput(&out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = io.WriteString(stdout, out.String())
			return exitOK
		}
		_, _ = io.WriteString(stderr, out.String())
		return exitUsage
	}
	return -1
}
