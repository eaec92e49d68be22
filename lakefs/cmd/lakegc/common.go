package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
)

// commands are the subcommands beside gc and version, each in its own
// file: name → the command, given its arguments after the name.
var commands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int{}

// common are the flags every command that reads a repository shares: how
// to reach lakeFS and the namespace, and the command's manners.
type common struct {
	name                                   string // "lakegc sweep"
	endpoint, accessKeyID, secretAccessKey string
	repo                                   string
	blockstorePath                         string
	lakeFSConfig                           string
	store                                  *blockstore.Config
	json, quiet                            bool
	logLevel                               slog.Level
	apiTimeout                             time.Duration
	progress                               bool // stderr is a terminal and not --quiet
	include                                []string
}

// register adds the common flags to fs.
func (c *common) register(fs *flag.FlagSet) {
	c.access().register(fs)
	fs.StringVar(&c.blockstorePath, "blockstore-path", "", "lakeFS's local blockstore folder, for a local:// repository (env "+envBlockstorePath+")")
	fs.StringVar(&c.lakeFSConfig, "lakefs-config", "", "lakeFS's configuration `FILE`: open the namespace with its blockstore settings")
	fs.BoolVar(&c.json, "json", false, "print the result as JSON on stdout")
	fs.Func("include-prefix", "the run's --include-prefix (repeatable): what it collected beside lakeFS's own shapes", func(p string) error {
		c.include = append(c.include, p)
		return nil
	})
	registerManners(fs, &c.quiet, &c.logLevel, &c.apiTimeout)
}

// access points at c's lakeFS flags.
func (c *common) access() accessFlags {
	return accessFlags{&c.endpoint, &c.accessKeyID, &c.secretAccessKey, &c.repo, &c.blockstorePath}
}

// accessFlags point at a command's flags that say how to reach lakeFS and
// the repository: gc, the commands of common and those of nsFlags share
// them.
type accessFlags struct {
	endpoint, accessKeyID, secretAccessKey, repo, blockstorePath *string
}

// register adds --endpoint, --access-key-id, --secret-access-key and
// --repo to fs. The environment's values are read after parsing, not given
// as the flags' defaults, which the usage would print: the secret key too.
func (a accessFlags) register(fs *flag.FlagSet) {
	fs.StringVar(a.endpoint, "endpoint", "", "lakeFS `URL` (env "+api.EnvEndpointURL+")")
	fs.StringVar(a.accessKeyID, "access-key-id", "", "access key ID (env "+api.EnvAccessKeyID+")")
	fs.StringVar(a.secretAccessKey, "secret-access-key", "", "secret access key (env "+api.EnvSecretAccessKey+")")
	fs.StringVar(a.repo, "repo", "", "repository `NAME` (required)")
}

// resolve takes the endpoint, the key pair and the blockstore folder from
// the environment where no flag gave them, then checks that the
// repository, the endpoint and the key pair are known.
func (a accessFlags) resolve(getenv func(string) string) error {
	for _, v := range []struct {
		p   *string
		env string
	}{{a.endpoint, api.EnvEndpointURL}, {a.accessKeyID, api.EnvAccessKeyID}, {a.secretAccessKey, api.EnvSecretAccessKey}, {a.blockstorePath, envBlockstorePath}} {
		if *v.p == "" {
			*v.p = getenv(v.env)
		}
	}
	switch {
	case *a.repo == "":
		return errors.New("--repo is required")
	case *a.endpoint == "":
		return fmt.Errorf("--endpoint (or %s) is required", api.EnvEndpointURL)
	case *a.accessKeyID == "" || *a.secretAccessKey == "":
		return fmt.Errorf("an access key pair is required: --access-key-id and --secret-access-key, or %s and %s", api.EnvAccessKeyID, api.EnvSecretAccessKey)
	}
	return nil
}

// loadStore reads lakeFS's blockstore settings from its configuration
// file (--lakefs-config) and getenv, and takes a local blockstore's folder
// from them when no flag or variable gave it.
func (a accessFlags) loadStore(file string, getenv func(string) string) (*blockstore.Config, error) {
	store, err := blockstore.Load(file, getenv)
	if err != nil {
		return nil, fmt.Errorf("--lakefs-config: %v", err)
	}
	if store.Type == blockstore.TypeLocal && *a.blockstorePath == "" {
		*a.blockstorePath = store.Local.Path
	}
	return store, nil
}

// registerManners adds --quiet, --log-level and --api-timeout to fs.
func registerManners(fs *flag.FlagSet, quiet *bool, level *slog.Level, timeout *time.Duration) {
	fs.BoolVar(quiet, "quiet", false, "no progress line and no logs but warnings and errors")
	*level = slog.LevelInfo
	fs.TextVar(level, "log-level", slog.LevelInfo, "lowest level of the logs on stderr: debug, info, warn or error")
	fs.DurationVar(timeout, "api-timeout", api.DefaultTimeout, "bound of each attempt of an ordinary call of lakeFS's API")
}

// parse parses args into c and the command's own flags; code is -1 when
// the command should run, and rest its arguments.
func (c *common) parse(fs *flag.FlagSet, out *bytes.Buffer, args []string, getenv func(string) string, stdout, stderr io.Writer) (rest []string, code int) {
	if code := parseFlags(fs, out, args, stdout, stderr); code >= 0 {
		return nil, code
	}
	if err := c.access().resolve(getenv); err != nil {
		return nil, c.usage(stderr, "%v", err)
	}
	if c.apiTimeout <= 0 {
		return nil, c.usage(stderr, "--api-timeout %v is not positive", c.apiTimeout)
	}
	if c.lakeFSConfig != "" {
		var err error
		if c.store, err = c.access().loadStore(c.lakeFSConfig, getenv); err != nil {
			return nil, c.usage(stderr, "%v", err)
		}
	}
	c.progress = !c.quiet && isTerminal(stderr)
	return fs.Args(), -1
}

// parseRun is parse for a command of one run that takes no arguments: it
// requires --run, runID.
func (c *common) parseRun(fs *flag.FlagSet, out *bytes.Buffer, runID *string, args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	rest, code := c.parse(fs, out, args, getenv, stdout, stderr)
	switch {
	case code >= 0:
		return code
	case len(rest) > 0:
		return c.usage(stderr, "unexpected argument %q", rest[0])
	case *runID == "":
		return c.usage(stderr, "--run is required: the run ID a dry run of lakegc gc printed")
	}
	return -1
}

// usage reports a usage error on stderr and returns its exit code.
func (c *common) usage(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, c.name+": "+format+"\n", a...)
	return exitUsage
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newLogger is the command's logger on w (the progress line, on a
// terminal): text records from level up, from warnings up when quiet.
func newLogger(w io.Writer, level slog.Level, quiet bool) *slog.Logger {
	if quiet {
		level = max(level, slog.LevelWarn)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// client makes the lakeFS client of c.
func (c *common) client() (*api.Client, error) {
	return api.New(c.endpoint, c.accessKeyID, c.secretAccessKey, api.WithTimeout(c.apiTimeout))
}

// hostOptions are the host's options of c.
func (c *common) hostOptions(logger *slog.Logger) host.Options {
	return host.Options{Repository: c.repo, BlockstorePath: c.blockstorePath, Blockstore: c.store, Logger: logger, Include: c.include}
}

// exitCode is the exit code of a command's error.
func exitCode(ctx context.Context, err error) int { return errorCode(ctx, err, true) }

// errorCode is the exit code of err; a refused run (superseded, unknown or
// failed) is exitRefused when refusals is set, else a failure like any
// other (gc, which is given no run).
func errorCode(ctx context.Context, err error, refusals bool) int {
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		// Interrupted: whichever call was cut short, lakeFS neither
		// refused nor was unreachable.
		return exitFailed
	case errors.Is(err, host.ErrLakeFS):
		return exitLakeFS
	case errors.Is(err, lease.ErrHeld):
		return exitBusy
	case refusals && (errors.Is(err, lakegc.ErrSuperseded) || errors.Is(err, sweep.ErrNoRun) || errors.Is(err, sweep.ErrRunFailed)):
		return exitRefused
	case errors.Is(err, lakegc.ErrInvalidInput), errors.Is(err, host.ErrInvalidInput), errors.Is(err, namespace.ErrNoLocalRoot), errors.Is(err, blockstore.ErrInvalidInput):
		// An option the host refuses, a local repository without
		// --blockstore-path, or a namespace not on --lakefs-config's
		// blockstore.
		return exitUsage
	}
	return exitFailed
}

// fail reports err on stderr, and with --json as {"error": …} on stdout,
// and returns its exit code.
func (c *common) fail(ctx context.Context, stdout, stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", c.name, err)
	if c.json {
		writeJSON(stdout, stderr, struct {
			Error string `json:"error"`
		}{err.Error()})
	}
	return exitCode(ctx, err)
}

// writeJSON writes v indented on stdout; false if it could not.
func writeJSON(stdout, stderr io.Writer, v any) bool {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "lakegc: %v\n", err)
		return false
	}
	return true
}

// newFlagSet is a flag set whose usage text goes to out, with a usage head.
func newFlagSet(name, head string, out *bytes.Buffer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), strings.TrimLeft(head, "\n")+"\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}
