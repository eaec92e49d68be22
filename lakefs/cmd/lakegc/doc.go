// Command lakegc collects the garbage of a running lakeFS repository
// without Spark: lakeFS's "Standalone GC", on one machine.
//
//	lakegc gc --endpoint URL --repo NAME [--sweep [--quarantine]] [--optimized] [--min-age 24h] [--memory 256MiB] [--lakefs-concurrency 16] [--json] [--init-namespace] [--lakefs-config FILE] [--shard I/N]
//	lakegc candidates --repo NAME --run ID [--offset N] [--limit 1000] [--json]
//	lakegc explain --repo NAME --run ID [--json] ADDRESS|lakefs://REPO/REF/PATH...
//	lakegc sweep --repo NAME --run ID [--force] [--quarantine] [--delete-concurrency N] [--delete-rate R] [--json]
//	lakegc rules show|set --repo NAME [--file FILE | --keep-tags=false --keep-last BRANCH=N --keep-last-pattern RE=N --retention-days-pattern RE=D --stale-branch-days D]
//	lakegc restore --repo NAME --run ID [--address ADDRESS]... [--json]
//	lakegc purge --repo NAME --older-than 7d [--json]
//	lakegc shards --repo NAME [--json] RUN_ID...
//	lakegc version
//
// gc --sweep --quarantine moves the garbage into the run's quarantine in the
// namespace instead of deleting it; restore puts a run's quarantined objects
// back (all, or those named by --address), never over an object at their
// place; purge deletes the quarantines started (and last swept into) more
// than --older-than ago
// (package sweep/quarantine: its Mover, Restore and Purge). gc, sweep, restore and
// purge hold the repository's lease (package lease) while they run: a second
// one exits 5 naming the holder, or waits up to --lease-wait; --no-lease runs
// without; a run that loses its lease stops. On lakeFS's local blockstore
// the lease is best effort (a local folder has no atomic conditional
// create: two runs started within the same instant could both take it).
//
// # Review, then sweep
//
// A dry run of gc prints its run ID, what a sweep of it would delete (the
// candidates, and their bytes: the first 10,000 statted, the rest
// extrapolated from their mean) and the price of that sweep's requests on
// S3, GCS and Azure, from the providers' published per-request prices in
// cost.go's table (read 2026-12-01; deletes are free on all three, S3's
// DeleteObjects is priced as a POST as an upper bound). "lakegc candidates
// --run ID" lists them, paged: address, size, modification time, slice and a
// reason from the key (slice, linked object, flat layout, early linked
// upload, include prefix). "lakegc explain --run ID" says why the run marked
// or kept each object named (package lakefs/host, Explain). "lakegc sweep
// --run ID" deletes exactly that run's candidates (host.SweepRun); it refuses,
// exit 4, a run that a later run of the repository superseded, since an
// object it found garbage may have become live since, unless --force.
//
// Every command takes --quiet (no progress line, only warnings and
// errors), --log-level (debug, info, warn, error) and --api-timeout (each
// attempt of an ordinary lakeFS call, default 1m); gc and sweep take
// --delete-concurrency (delete calls in flight, fixed; default a window
// that follows the store) and --delete-rate (objects per second, retries
// included). With --json each prints one JSON object on stdout, with an
// "error" field when it fails. A repository without GC rules fails gc with
// exit 3 and the lakectl gc set-config command that sets them.
//
// Install it with go install github.com/lakegc/lakegc/lakefs/cmd/lakegc@latest
// (package lakefs: how its module is released); "lakegc version" prints the
// module's version, and the commit when the build recorded one.
//
// Credentials come from the flags or from lakectl's environment variables
// (LAKECTL_SERVER_ENDPOINT_URL, LAKECTL_CREDENTIALS_ACCESS_KEY_ID,
// LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY); the storage namespace is opened
// with the cloud SDKs' own credentials (S3, GCS, Azure), or, for a
// repository on lakeFS's local blockstore, in the folder named by
// --blockstore-path (or LAKEGC_BLOCKSTORE_PATH).
//
// With --lakefs-config FILE the namespace is opened as lakeFS opens it:
// with the blockstore settings of lakeFS's configuration file and of its
// LAKEFS_BLOCKSTORE_* variables, which win over the file as in lakeFS
// (package lakefs/blockstore): an S3-compatible endpoint, path style,
// region, static keys, session token, profile or credentials file; a GCS
// service account; an Azure account key and domain; the local blockstore's
// path (--blockstore-path, if given, wins). The namespace must be on that
// blockstore's type (exit 2 otherwise). Secrets are never printed: the run
// logs the settings with the secrets as [SECRET].
//
// One run is host.Collect (package lakefs/host, the same run as a library)
// over the repository: lakeFS's uncommitted export and every branch's
// staged objects, lakeFS's prepare_commits, the kept commits' metaranges,
// the mark of every other object of a shape lakeFS writes (or under an
// --include-prefix) older than the export's start minus --min-age, and with
// --sweep only, the deletion of the marked objects. Its documentation tells
// the order and why it is safe: namespace identity (--init-namespace for a
// repository created bare), staged linked objects, staged re-uploads
// lakeFS's listings hide, --optimized runs, deletes on S3 and on the local
// blockstore. The flags are its Options: --lakefs-concurrency is
// Concurrency, --memory MemoryBudget, --blockstore-path BlockstorePath,
// --lakefs-config Blockstore, --no-range-cache NoRangeCache (the range
// cache: a run reads from lakeFS's storage only the ranges new since the
// last, and an --optimized run's mark reads the keys of only the ranges
// that appeared or left since the last run; without the cache every run
// reads every kept range's keys).
//
// # Shards
//
// "lakegc gc --shard i/n" runs shard i of n of a mark (host.Options.Shard
// and Shards; package lakefs/host, "Shards", says why each shard is a whole
// run of its own, with its own export, commits report, run ID and cutoff,
// narrowed to its slices). Without --shard, a pod of a Kubernetes Indexed
// Job runs its shard from the environment: JOB_COMPLETION_INDEX, which
// Kubernetes sets to the pod's index, and JOB_COMPLETIONS, which Kubernetes
// does not set: the Job's manifest sets it to its spec.completions. n pods
// then mark the namespace with no coordinator (examples/k8s in the
// repository has a manifest). Refused, with exit 2: a spec that is not
// i/n with 0 <= i < n (0/0, 3/2, -1/2, a/2), JOB_COMPLETION_INDEX without a
// count, JOB_COMPLETIONS without an index (a Job not Indexed), a --shard
// that disagrees with the environment, --optimized (a sharded run is
// clean), --lease-wait and --keep-runs. A shard takes no lease: the
// repository's lease admits one run at a time, and the shards run at once;
// so nothing keeps a sharded run from running beside another, which is safe
// (each run deletes only its own mark's candidates) but wasteful, and a
// shard prunes no old runs (pruning is for a run under the lease). With --sweep each shard deletes its own candidates; a shard's
// dry run can also be swept later with "lakegc sweep --run ID" for each
// shard's run, in any order: the runs of other shards of the same count do
// not supersede it, whatever their cutoffs (lakegc.LaterRuns); the same
// shard of a later split does. "lakegc
// shards --repo NAME RUN_ID..." prints the combined summary of the n runs
// (host.CombineShards) and refuses a set that is not shards 0 to n-1 of one
// n, each once.
//
// # Extended rules
//
// Beside lakeFS's rules, which lakeFS applies, the command applies lakegc's
// extended rules (package retention, "Extended rules"), kept in
// _lakefs/retention/gc/rules/lakegc.json, a file lakeFS never reads; "lakegc
// rules show" prints both, "lakegc rules set" writes lakegc's. Without that
// file the command keeps tagged commits (a difference from lakeFS, towards
// keeping). It reads the tags and the HEADs of the branches a rule matches
// through lakeFS's API, walks their main ancestry one GetCommit per commit
// (dates to the second, each taken as the last instant of its second), and
// adds the commits the rules keep to lakeFS's set. It only adds: lakeFS's
// prepare_commits has decided its own set, so the stale-branch rule and days
// below lakeFS's default are reported as not applied. "lakegc gc" prints the
// rules it applied and how many commits they added ("host"."rules" in
// --json).
//
// # Output and exit codes
//
// Logs and, on a terminal, one progress line (export, listing, ranges,
// deletes) go to stderr; a summary, or with --json the report of
// lakegc.Collect, goes to stdout; with --json a failed run prints the report of
// what was done, with the error in its "error" field. The command's own
// counts are in "host": lakeFS's HTTP requests (retries included), the
// staged objects statted, and the re-upload check; a dry run's has
// "estimate": its sweep's candidates, bytes ("bytes_from": exact, extrapolated
// from the first 10000 candidates' sizes, or unknown) and requests' price per cloud.
// Without --sweep nothing is deleted.
//
//	0  done: a dry run, or a sweep that deleted every candidate
//	1  the GC failed or was interrupted, or some deletes failed
//	2  usage: a wrong flag, argument or option value, no --blockstore-path
//	   for a repository on the local blockstore, a --lakefs-config that
//	   cannot be read, or a namespace not on its blockstore
//	3  lakeFS refused or could not be reached (credentials, repository, API)
//	4  a run given with --run refused: superseded by a later run (sweep
//	   without --force), unknown, or failed
//	5  another run holds the repository's lease (gc, sweep, restore, purge)
//
// Tests move the GC's clock through LAKEGC_NOW (RFC 3339), read only when
// they call the command in-process; the program ignores it, since a clock
// moved forward would mark objects still in flight.
package main
