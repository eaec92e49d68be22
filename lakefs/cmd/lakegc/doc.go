// Command lakegc collects the garbage of a running lakeFS repository
// without Spark: lakeFS's "Standalone GC", on one machine.
//
//	lakegc gc --endpoint URL --repo NAME [--sweep] [--optimized] [--min-age 24h] [--memory 256MiB] [--lakefs-concurrency 16] [--json] [--init-namespace] [--lakefs-config FILE]
//	lakegc restore --repo NAME --run ID [--address ADDRESS]... [--json]
//	lakegc purge --repo NAME --older-than 7d [--json]
//	lakegc version
//
// gc --sweep --quarantine moves the garbage into the run's quarantine in the
// namespace instead of deleting it; restore puts a run's quarantined objects
// back (all, or those named by --address), never over an object at their
// place; purge deletes the quarantines started more than --older-than ago
// (package sweep: Quarantine, restore and purge). gc, restore and purge hold
// the repository's lease (package lease) while they run: a second one exits
// 5 naming the holder, or waits up to --lease-wait; --no-lease runs without.
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
// --lakefs-config Blockstore.
//
// # Output and exit codes
//
// Logs and, on a terminal, one progress line (export, listing, ranges,
// deletes) go to stderr; a summary, or with --json the report of
// lakegc.Collect, goes to stdout; with --json a failed run prints the report of
// what was done, with the error in its "error" field. The command's own
// counts are in "host": lakeFS's HTTP requests (retries included), the
// staged objects statted, and the re-upload check. Without --sweep nothing
// is deleted.
//
//	0  done: a dry run, or a sweep that deleted every candidate
//	1  the GC failed or was interrupted, or some deletes failed
//	2  usage: a wrong flag, argument or option value, no --blockstore-path
//	   for a repository on the local blockstore, a --lakefs-config that
//	   cannot be read, or a namespace not on its blockstore
//	3  lakeFS refused or could not be reached (credentials, repository, API)
//
// Tests move the GC's clock through LAKEGC_NOW (RFC 3339), read only when
// they call the command in-process; the program ignores it, since a clock
// moved forward would mark objects still in flight.
package main
