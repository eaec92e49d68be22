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
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
)

// Exit codes.
const (
	exitOK     = 0 // done: a dry run, or a sweep that deleted every candidate
	exitFailed = 1 // the GC failed or was interrupted, or some deletes failed
	exitUsage  = 2 // wrong flags or arguments
	exitLakeFS = 3 // lakeFS refused or could not be reached (credentials, repository, API)
	// exitRefused: a command refused the run it was given: superseded by
	// a later run (sweep without --force), unknown, or failed.
	exitRefused = 4
)

// Environment variables of the command, beside lakectl's (api.EnvEndpointURL,
// api.EnvAccessKeyID, api.EnvSecretAccessKey).
const (
	envBlockstorePath = "LAKEGC_BLOCKSTORE_PATH"
	// envNow sets the clock of the GC (RFC 3339). Tests only: it makes the
	// GC decide as of another time; main hides it (processEnv).
	envNow = "LAKEGC_NOW"
)

const usage = `lakegc collects the garbage of a lakeFS repository, without Spark.

Usage:
  lakegc gc --endpoint URL --repo NAME [flags]   mark (and with --sweep, delete) the garbage
  lakegc candidates --repo NAME --run ID         list what a dry run marked, and why
  lakegc explain --repo NAME --run ID ADDRESS... why a run marked or kept an object
  lakegc sweep --repo NAME --run ID              delete exactly what a dry run marked
  lakegc rules show|set --repo NAME [flags]      show or set lakegc's extended retention rules
  lakegc restore --repo NAME --run ID            put a quarantined sweep's objects back
  lakegc purge --repo NAME --older-than 7d       delete quarantines past their days
  lakegc shards --repo NAME RUN_ID...            the combined summary of a sharded mark's runs
  lakegc version                                 print the version
  lakegc help                                    print this help

Example:
  export LAKECTL_SERVER_ENDPOINT_URL=https://lakefs.example.com
  export LAKECTL_CREDENTIALS_ACCESS_KEY_ID=AKIA...
  export LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY=...
  lakegc gc --repo my-repo                        # dry run: prints its run ID
  lakegc candidates --repo my-repo --run RUN_ID   # review what it marked
  lakegc sweep --repo my-repo --run RUN_ID        # delete exactly that

Run "lakegc COMMAND --help" for the flags of a command.

Exit codes: 0 done, 1 GC failed (or some deletes failed), 2 usage, 3 lakeFS error (auth, repository, API),
4 refused: a run superseded by a later one (sweep without --force), unknown or failed.
5 another lakegc run holds the repository's lease.
`

// run is the command: args without the program name. It returns the exit
// code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "lakegc", version())
		return exitOK
	case "rules":
		return runRules(ctx, args[1:], getenv, stdout, stderr)
	case "gc":
		o, code := parseGC(args[1:], getenv, stdout, stderr)
		if code >= 0 {
			return code
		}
		return gc(ctx, o, stdout, stderr)
	case "restore":
		return restoreCmd(ctx, args[1:], getenv, stdout, stderr)
	case "purge":
		return purgeCmd(ctx, args[1:], getenv, stdout, stderr)
	default:
		if cmd, ok := commands[args[0]]; ok {
			return cmd(ctx, args[1:], getenv, stdout, stderr)
		}
		fmt.Fprintf(stderr, "lakegc: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

// version is the command's version: the module's, as the build recorded it
// — "v0.1.0" when installed with go install …@v0.1.0, "(devel)" when built
// in a checkout — and the commit it was built from when the build stamped
// one ("-dirty" if the tree had changes).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if modified == "true" {
			rev += "-dirty"
		}
		v += " (" + rev + ")"
	}
	return v
}

// gcOptions are the flags of gc.
type gcOptions struct {
	endpoint, accessKeyID, secretAccessKey string
	repo                                   string
	sweep, json, optimized, initNamespace  bool
	quarantine                             bool // --quarantine: move, not delete
	lease                                  leaseFlags
	keepRuns                               int  // --keep-runs
	noRangeCache                           bool // --no-range-cache
	minAge                                 time.Duration
	memory                                 int64
	blockstorePath                         string
	include                                []string  // --include-prefix, repeated
	now                                    time.Time // zero: time.Now
	progress                               bool      // draw progress bars on stderr
	concurrency                            int       // per-object calls of lakeFS (and candidate checks) in flight
	quiet                                  bool      // --quiet
	logLevel                               slog.Level
	apiTimeout                             time.Duration
	deletes                                deleteFlags
	// store is lakeFS's blockstore settings (--lakefs-config and its
	// LAKEFS_BLOCKSTORE_* variables); nil: each cloud SDK's defaults.
	store *blockstore.Config
	shard shardSpec // --shard, or the Indexed Job's environment (shard.go)
	// inventory is --inventory: an inventory report's manifest's URI.
	inventory string
}

// hostOptions are the options of host.Collect the flags say.
func (o gcOptions) hostOptions(logger *slog.Logger, progress func(host.Progress)) host.Options {
	h := host.Options{
		Repository:        o.repo,
		BlockstorePath:    o.blockstorePath,
		Blockstore:        o.store,
		Sweep:             o.sweep,
		Optimized:         o.optimized,
		Inventory:         o.inventory,
		InitNamespace:     o.initNamespace,
		MinAge:            o.minAge,
		MemoryBudget:      o.memory,
		Include:           o.include,
		Concurrency:       o.concurrency,
		Shard:             o.shard.index,
		Shards:            o.shard.count,
		Logger:            logger,
		DeleteConcurrency: o.deletes.concurrency,
		DeleteRate:        o.deletes.rate,
		Quarantine:        o.quarantine,
		Lease:             o.lease.options(),
		KeepRuns:          o.keepRuns,
		NoRangeCache:      o.noRangeCache,
		Progress:          progress,
	}
	if o.shard.count > 1 {
		// The shards run at once: none takes the repository's lease, and
		// so none prunes.
		h.Lease, h.KeepRuns = nil, 0
	}
	if !o.now.IsZero() {
		offset := time.Until(o.now)
		h.Clock = func() time.Time { return time.Now().Add(offset) }
	}
	return h
}

// parseGC parses gc's flags; code is -1 when gc should run.
func parseGC(args []string, getenv func(string) string, stdout, stderr io.Writer) (o gcOptions, code int) {
	fs := flag.NewFlagSet("lakegc gc", flag.ContinueOnError)
	access := accessFlags{&o.endpoint, &o.accessKeyID, &o.secretAccessKey, &o.repo, &o.blockstorePath}
	access.register(fs)
	fs.BoolVar(&o.sweep, "sweep", false, "delete the garbage; without it, a dry run")
	addQuarantineFlag(fs, &o.quarantine)
	addLeaseFlags(fs, &o.lease)
	addKeepRunsFlag(fs, &o.keepRuns)
	fs.BoolVar(&o.noRangeCache, "no-range-cache", false, "read every kept range from lakeFS's tables, neither reading nor writing lakegc's range cache ("+layout.RangeCache(layout.StoragePrefix)+")")
	fs.DurationVar(&o.minAge, "min-age", 0, "keep every object younger than this before the GC started; at least lakeFS's link TTL, 24h, for which an upload may wait to be linked (default 24h)")
	memory := fs.String("memory", "256MiB", "memory budget of the mark's key buffers, e.g. 64MiB, 1GiB")
	fs.StringVar(&o.blockstorePath, "blockstore-path", "", "lakeFS's local blockstore folder (blockstore.local.path), for a local:// repository (env "+envBlockstorePath+")")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON on stdout")
	fs.BoolVar(&o.initNamespace, "init-namespace", false, "first write lakegc's marker naming the repository's namespace into its folder, for a repository without lakeFS's marker (_lakefs/dummy), such as one created bare for a refs restore: only after checking the namespace is the repository's own folder")
	// lakeFS's blockstore settings, read as lakeFS reads them.
	lakeFSConfig := fs.String("lakefs-config", "", "lakeFS's configuration `FILE`: open the storage namespace with its blockstore settings (endpoint, path style, keys), its LAKEFS_BLOCKSTORE_* variables winning as in lakeFS")
	fs.Func("include-prefix", "collect objects under this key `PREFIX` of the namespace whatever their names (repeatable); only lakeFS's own shapes are collected otherwise", func(p string) error {
		o.include = append(o.include, p)
		return nil
	})
	fs.IntVar(&o.concurrency, "lakefs-concurrency", host.DefaultConcurrency, "per-object calls of lakeFS (stats of staged objects), and checks of candidates against the store, in flight at once")
	registerManners(fs, &o.quiet, &o.logLevel, &o.apiTimeout)
	o.deletes.register(fs)
	shard := fs.String("shard", "", "mark (and sweep) only shard `INDEX/COUNT` of the namespace's slices, e.g. 0/4, as its own run; default from "+envCompletionIndex+" and "+envCompletions+" when set (a Kubernetes Indexed Job)")
	fs.StringVar(&o.inventory, "inventory", "", "take the slices older than an inventory report (less a margin) from the report whose manifest is at `URI` (S3: s3://BUCKET/PATH/manifest.json; Azure: https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH/RULE-manifest.json; GCS, CSV reports: gs://BUCKET/PATH/CONFIG_SNAPSHOT_manifest.json) instead of listing them; its bucket is opened as the namespace's (package inventory says how to configure the report)")
	fs.BoolVar(&o.optimized, "optimized", false, "start the mark from the repository's latest run: list only the slices written since it (less a margin), and judge older ones from its records; a clean run when unsure, and every 7th run")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: lakegc gc --endpoint URL --repo NAME [--sweep [--quarantine]] [--optimized | --inventory URI] [--min-age 24h] [--memory 256MiB] [--json]

Asks lakeFS for its uncommitted export and its kept commits, reads the kept
commits' objects from the repository's storage namespace, and marks every other
object older than --min-age. A dry run unless --sweep. Progress and logs go to
stderr, the summary (or with --json the report) to stdout.

Example:
  lakegc gc --endpoint http://localhost:8000 --repo my-repo --sweep
  lakegc gc --repo my-repo --lakefs-config /etc/lakefs/config.yaml

A dry run prints its run ID, what a sweep would delete (objects, bytes) and
the price of its requests on S3, GCS and Azure; then "lakegc candidates --run
ID" lists the candidates and "lakegc sweep --run ID" deletes exactly them.

With --sweep --quarantine the garbage is moved into the run's quarantine
instead ("lakegc restore" puts it back, "lakegc purge" deletes old
quarantines). The run holds the repository's lease (--lease-wait, --no-lease).

Exit codes: 0 done, 1 GC failed (or some deletes failed), 2 usage, 3 lakeFS error (auth, repository, API),
5 another lakegc run holds the repository's lease.

Flags:
`)
		fs.PrintDefaults()
	}
	// The usage goes to stdout when asked for (-h), to stderr after a
	// wrong flag.
	var out bytes.Buffer
	if code := parseFlags(fs, &out, args, stdout, stderr); code >= 0 {
		return o, code
	}
	accessErr := access.resolve(getenv)
	usageErr := func(format string, a ...any) (gcOptions, int) {
		fmt.Fprintf(stderr, "lakegc gc: "+format+"\n", a...)
		return o, exitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case accessErr != nil:
		return usageErr("%v", accessErr)
	case o.keepRuns < 0:
		return usageErr("--keep-runs %d is negative", o.keepRuns)
	case o.quarantine && !o.sweep:
		// A dry run moves nothing: the flag would say otherwise.
		return usageErr("--quarantine without --sweep: a dry run moves nothing (sweep it later with lakegc sweep --run ID --quarantine)")
	case o.minAge < 0:
		return usageErr("--min-age %v is negative", o.minAge)
	case o.concurrency < 1 || o.concurrency > host.MaxConcurrency:
		return usageErr("--lakefs-concurrency %d is not between 1 and %d", o.concurrency, host.MaxConcurrency)
	case o.apiTimeout <= 0:
		return usageErr("--api-timeout %v is not positive", o.apiTimeout)
	case o.minAge > 0 && o.minAge < lakegc.DefaultLinkTTL:
		// lakeFS links an address up to its LinkAddressTime (24h) after
		// handing it out; until then only the object's age protects it.
		return usageErr("--min-age %v is below lakeFS's link TTL, %v: an upload not linked yet could be deleted", o.minAge, lakegc.DefaultLinkTTL)
	}
	if err := o.deletes.check(); err != nil {
		return usageErr("%v", err)
	}
	var err error
	if o.shard, err = resolveShard(*shard, getenv); err != nil {
		return usageErr("%v", err)
	}
	if o.inventory != "" && o.optimized {
		return usageErr("--inventory with --optimized: a mark from an inventory report is clean")
	}
	if o.shard.count > 1 && o.optimized {
		return usageErr("--optimized with shard %d/%d: a sharded run is always clean", o.shard.index, o.shard.count)
	}
	if o.shard.count > 1 && o.lease.wait > 0 {
		return usageErr("--lease-wait with shard %d/%d: a sharded run takes no lease, so that its shards run at once", o.shard.index, o.shard.count)
	}
	if o.shard.count > 1 && o.keepRuns > 0 && setFlag(fs, "keep-runs") {
		return usageErr("--keep-runs with shard %d/%d: a sharded run holds no lease, so it prunes nothing", o.shard.index, o.shard.count)
	}
	if o.memory, err = parseSize(*memory); err != nil {
		return usageErr("--memory: %v", err)
	}
	if o.memory < minMemory {
		return usageErr("--memory %s is below the mark's minimum, 4KiB", *memory)
	}
	if *lakeFSConfig != "" {
		if o.store, err = access.loadStore(*lakeFSConfig, getenv); err != nil {
			return usageErr("%v", err)
		}
	}
	if v := getenv(envNow); v != "" {
		if o.now, err = time.Parse(time.RFC3339, v); err != nil {
			return usageErr("%s: %v", envNow, err)
		}
	}
	o.progress = !o.quiet && isTerminal(stderr)
	return o, -1
}

// parseSize parses a byte size: a number with an optional unit B, KiB,
// MiB, GiB (or KB, MB, GB as powers of 1000).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size such as 256MiB", s)
	}
	return n * mult, nil
}

// gc runs one GC cycle and prints its summary.
func gc(ctx context.Context, o gcOptions, stdout, stderr io.Writer) int {
	// Logs go through the progress line, which clears itself before each
	// record on a terminal (and only passes them on elsewhere).
	bar := newProgress(stderr, o.progress)
	defer bar.finish()
	logger := newLogger(bar, o.logLevel, o.quiet)
	client, err := api.New(o.endpoint, o.accessKeyID, o.secretAccessKey, api.WithTimeout(o.apiTimeout))
	if err != nil {
		fmt.Fprintf(stderr, "lakegc gc: %v\n", err)
		return exitUsage
	}
	res, err := host.Collect(ctx, client, nil, o.hostOptions(logger, bar.report))
	bar.finish()
	rep, hs := res.Report, &res.Stats
	if err != nil {
		fmt.Fprintf(stderr, "lakegc gc: %v\n", err)
		if errors.Is(err, host.ErrNoRules) {
			fmt.Fprint(stderr, noRulesHint(o.repo))
		}
		if rep != nil && rep.RunID != "" && rep.Mark != nil && rep.Mark.Summary != nil && rep.Mark.Summary.Success {
			fmt.Fprintf(stderr, "lakegc gc: the mark %s finished; its candidates are listed under %s\n", rep.RunID, rep.Mark.Report)
		}
		if o.json {
			// One JSON object on stdout whatever happened: the error and
			// what was done until then.
			printJSON(stdout, stderr, err, rep, hs, nil)
		}
		return errorCode(ctx, err, false)
	}
	var est *costEstimate
	if rep.Sweep == nil && rep.Mark != nil && rep.Mark.Summary != nil {
		// A dry run: what its sweep would free, and cost.
		est = estimate(ctx, client, o.hostOptions(logger, nil), rep.RunID, rep.Mark.Summary.NumDeletedObjects, logger)
	}
	if o.json {
		if !printJSON(stdout, stderr, nil, rep, hs, est) {
			return exitFailed
		}
	} else {
		summarize(stdout, o.repo, rep, hs)
		if est != nil {
			printCost(stdout, est)
		}
	}

	if rep.Sweep != nil && rep.Sweep.Failed+rep.Sweep.Refused > 0 {
		fmt.Fprintf(stderr, "lakegc gc: %d deletes failed and %d were refused; see %s\n", rep.Sweep.Failed, rep.Sweep.Refused, rep.Sweep.Report)
		return exitFailed
	}
	return exitOK
}

// minMemory is the smallest --memory the mark accepts (lakegc.Config's
// MemoryBudget).
const minMemory = 4 << 10

// printJSON prints the report as JSON on stdout, with the error of a failed
// run in its "error" field and the command's own counts in "host"; it
// reports whether it could.
func printJSON(stdout, stderr io.Writer, runErr error, rep *lakegc.Report, hs *host.Stats, est *costEstimate) bool {
	out := struct {
		Error string `json:"error,omitempty"`
		*lakegc.Report
		Host     *host.Stats   `json:"host,omitempty"`
		Estimate *costEstimate `json:"estimate,omitempty"`
	}{Report: rep, Host: hs, Estimate: est}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "lakegc gc: %v\n", err)
		return false
	}
	return true
}

// summarize prints what a cycle did, for people.
func summarize(w io.Writer, repo string, rep *lakegc.Report, hs *host.Stats) {
	m := rep.Mark
	fmt.Fprintf(w, "repository %s: %d kept commits, %d objects listed, %d kept, %d garbage (older than %s)\n",
		repo, rep.Commits.Active, m.Listed, m.Kept, m.Summary.NumDeletedObjects, m.Summary.CutoffTime.Format(time.RFC3339))
	if m.Foreign > 0 && len(m.ForeignSample) > 0 {
		fmt.Fprintf(w, "%d addresses outside the namespace (imports; their objects are not in it), such as %s\n", m.Foreign, m.ForeignSample[0])
	} else if m.Foreign > 0 {
		fmt.Fprintf(w, "%d addresses outside the namespace (imports; their objects are not in it)\n", m.Foreign)
	}
	if sum := m.Summary; sum.NumUnrecognizedObjects > 0 {
		fmt.Fprintf(w, "not of lakeFS's shapes, never collected: %d objects, %d bytes (e.g. %s); all under %sunrecognized/ (--include-prefix to collect some)\n",
			sum.NumUnrecognizedObjects, sum.UnrecognizedBytes, strings.Join(sum.UnrecognizedSample[:min(3, len(sum.UnrecognizedSample))], ", "), m.Report)
	}
	if sum := m.Summary; sum.ShardCount > 1 {
		fmt.Fprintf(w, "shard %d of %d, run %s: only its slices were listed; combine the shards' runs with lakegc shards --repo %s RUN_ID...\n", sum.ShardIndex, sum.ShardCount, rep.RunID, repo)
	}
	if sum := m.Summary; len(sum.Walls) > 0 {
		fmt.Fprintf(w, "other repositories' folders, never collected: %d objects under %s\n", sum.NumWalledObjects, strings.Join(sum.Walls, ", "))
	}
	if hs.Rules != nil {
		fmt.Fprintln(w, hs.Rules)
	}
	r := hs.Reuploads
	fmt.Fprintf(w, "lakeFS: %d requests, %d staged objects statted; %d candidates kept as possible hidden re-uploads (%d checked)\n",
		hs.LakeFSRequests, hs.StagedStatted, r.Kept, r.Checked)
	if c := hs.RangeCache; c != nil && c.Enabled {
		fmt.Fprintf(w, "range cache: %d ranges read from lakeFS's tables, %d from the cache (%d caches ignored, %d not written)", c.Misses, c.Hits, c.Rejected, c.WriteErrors)
		if src := m.Summary.KeepSource; src != "" {
			// The mark's keep set as parts: how many ranges' keys it read.
			fmt.Fprintf(w, "; the mark read the keys of %d ranges (%s)", m.Summary.PartsRead, src)
		}
		if p := c.Pruned; p != nil {
			fmt.Fprintf(w, "; pruned %d caches, %d bytes", p.Caches, p.Bytes)
			if p.KeptAll != "" {
				fmt.Fprintf(w, " (kept every cache: %s)", p.KeptAll)
			}
		}
		fmt.Fprintln(w)
	}
	summarizePruned(w, rep.Pruned)
	if rep.Sweep == nil {
		fmt.Fprintf(w, "dry run %s: nothing deleted; review with: lakegc candidates --repo %s --run %s; delete exactly them with: lakegc sweep --repo %s --run %s\n",
			rep.RunID, repo, rep.RunID, repo, rep.RunID)
		return
	}
	s := rep.Sweep
	if s.Quarantine != "" {
		fmt.Fprintf(w, "moved into the quarantine %s: %d (restore with \"lakegc restore --run %s\")\n", s.Quarantine, s.Deleted, rep.RunID)
	}
	fmt.Fprintf(w, "swept: %d deleted, %d already gone, %d failed, %d refused; report under %s\n",
		s.Deleted, s.AlreadyGone, s.Failed, s.Refused, s.Report)
}
