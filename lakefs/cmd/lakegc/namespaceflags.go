package main

import (
	"bytes"
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
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
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
	n.access().register(fs)
	fs.StringVar(&n.blockstorePath, "blockstore-path", "", "lakeFS's local blockstore folder, for a local:// repository (env "+envBlockstorePath+")")
	fs.StringVar(&n.lakeFSConfig, "lakefs-config", "", "lakeFS's configuration `FILE`: open the storage namespace with its blockstore settings")
	fs.BoolVar(&n.json, "json", false, "print the result as JSON on stdout")
}

// finish reads the environment for the flags not given and checks them.
func (n *nsFlags) finish(getenv func(string) string) error {
	if err := n.access().resolve(getenv); err != nil {
		return err
	}
	if n.lakeFSConfig != "" {
		var err error
		if n.store, err = n.access().loadStore(n.lakeFSConfig, getenv); err != nil {
			return err
		}
	}
	return nil
}

// access points at n's lakeFS flags.
func (n *nsFlags) access() accessFlags {
	return accessFlags{&n.endpoint, &n.accessKeyID, &n.secretAccessKey, &n.repo, &n.blockstorePath}
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

// parseFlags parses args with fs, its output first written to out, then
// to stdout when the usage was asked for and to stderr after a wrong flag;
// code is -1 when the command should run.
func parseFlags(fs *flag.FlagSet, out *bytes.Buffer, args []string, stdout, stderr io.Writer) (code int) {
	fs.SetOutput(out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = out.WriteTo(stdout)
			return exitOK
		}
		_, _ = out.WriteTo(stderr)
		return exitUsage
	}
	return -1
}

// nsCommand is the set-up of a command that works on a repository's
// storage namespace under its lease (purge, restore): its flag set, the
// namespace's and the lease's flags.
type nsCommand struct {
	name string // "lakegc purge"
	fs   *flag.FlagSet
	out  bytes.Buffer // fs's output
	n    nsFlags
	lf   leaseFlags
}

// newNSCommand is the set-up of command name, whose usage text is usage.
func newNSCommand(name, usage string) *nsCommand {
	c := &nsCommand{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.n.register(c.fs)
	addLeaseFlags(c.fs, &c.lf)
	c.fs.Usage = func() { fmt.Fprint(c.fs.Output(), usage); c.fs.PrintDefaults() }
	return c
}

// parse parses args, which must hold only flags; code is -1 when the
// command should run. The command checks its own flags next, then calls
// n.finish.
func (c *nsCommand) parse(args []string, stdout, stderr io.Writer) (code int) {
	if code := parseFlags(c.fs, &c.out, args, stdout, stderr); code >= 0 {
		return code
	}
	if c.fs.NArg() > 0 {
		return c.usage(stderr, "unexpected argument %q", c.fs.Arg(0))
	}
	return -1
}

// usage reports a usage error on stderr and returns its exit code.
func (c *nsCommand) usage(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, c.name+": "+format+"\n", a...)
	return exitUsage
}

// errorOutput is a command's --json output, which carries its error.
type errorOutput interface{ setError(string) }

// fail reports err on stderr, and with --json out with err on stdout, and
// returns code.
func (c *nsCommand) fail(stdout, stderr io.Writer, out errorOutput, code int, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", c.name, err)
	if c.n.json {
		out.setError(err.Error())
		writeJSON(stdout, stderr, out)
	}
	return code
}

// openHeld opens the namespace (see nsFlags.open) and takes its lease:
// ctx is cancelled when the lease is lost, and done releases the lease and
// closes the namespace. A failure returns the exit code to give.
func (c *nsCommand) openHeld(ctx context.Context) (_ context.Context, bucket *blob.Bucket, ns []string, done func(), code int, err error) {
	bucket, ns, code, err = c.n.open(ctx)
	if err != nil {
		return ctx, nil, nil, nil, code, err
	}
	ctx, release, err := c.lf.hold(ctx, bucket)
	if err != nil {
		bucket.Close()
		return ctx, nil, nil, nil, leaseCode(err), err
	}
	return ctx, bucket, ns, func() { release(); bucket.Close() }, exitOK, nil
}

// sweepCode is the exit code of a failure of purge or restore: usage for
// invalid input (the quarantine's, or sweep's options'), else failed.
func sweepCode(err error) int {
	if errors.Is(err, quarantine.ErrInvalidInput) || errors.Is(err, sweep.ErrInvalidInput) {
		return exitUsage
	}
	return exitFailed
}
