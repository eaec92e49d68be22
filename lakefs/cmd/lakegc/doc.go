// Command lakegc collects the garbage of a running lakeFS repository
// without Spark: lakeFS's "Standalone GC", on one machine.
//
//	lakegc gc --endpoint URL --repo NAME [--sweep] [--optimized] [--min-age 24h] [--memory 256MiB] [--json]
//	lakegc version
//
// Credentials come from the flags or from lakectl's environment variables
// (LAKECTL_SERVER_ENDPOINT_URL, LAKECTL_CREDENTIALS_ACCESS_KEY_ID,
// LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY); the storage namespace is opened
// with the cloud SDKs' own credentials (S3, GCS, Azure), or, for a
// repository on lakeFS's local blockstore, in the folder named by
// --blockstore-path (or LAKEGC_BLOCKSTORE_PATH).
//
// One run is lakegc.Collect over the repository, in its safe order:
//
//  1. the export of the staged objects, whose start anchors the cutoff:
//     lakeFS's own prepare_uncommited, its continuation loop driven to its
//     end here (so the run is known to be complete although stock lakeFS
//     writes no manifest), then every branch's uncommitted changes, hidden
//     branches included, each added or changed object statted through the
//     API for its physical address;
//  2. lakeFS's prepare_commits: lakeFS applies its GC rules to every commit,
//     those of deleted branches included, and writes its commits report,
//     read back from the namespace (a repository without rules is refused:
//     lakeFS keeps everything then);
//  3. the kept commits' metaranges and ranges, read from the namespace
//     (package metarange), each range once;
//  4. the mark: every object of the namespace of a shape lakeFS writes (or
//     under an --include-prefix), outside other repositories' folders, in
//     neither input and older than the export's start minus --min-age; its
//     report goes under _lakefs/retention/gc/unified/<run_id>/, lakeFS's
//     layout, with the objects it did not recognize in unrecognized/;
//  5. with --sweep only, the deletion of the marked objects.
//
// With --optimized the mark starts from the repository's latest run (one of
// lakegc's; a run of lakeFS's Spark client has no records to start from, and
// makes the run clean): it lists only the slices written since that run, less
// a margin of a day and an hour, and judges the older ones from the records
// the run left beside its report. It runs clean when unsure, and every
// seventh run (package sweep, "Clean and optimized runs").
//
// # Staged linked objects
//
// On lakeFS's local blockstore, an object linked through the staging API is
// stored with a full address that does not start with the namespace as
// lakeFS's export compares it, so lakeFS's export leaves staged linked
// objects out, and a GC reading only that export would delete them. lakegc
// therefore also lists each branch's uncommitted changes and stats each
// added or changed object, on every blockstore: the cost is one API call per
// staged object (bounded by the staging areas, not by the repository), and
// the addresses are spilled to a temporary file, not held in memory. A
// linked object's address carries its signature (",<signature>"); both that
// key and the key without it are kept.
//
// # Output and exit codes
//
// Logs and, on a terminal, one progress line (export, listing, ranges,
// deletes) go to stderr; a summary, or with --json the report of
// lakegc.Collect, goes to stdout; with --json a failed run prints the report of
// what was done, with the error in its "error" field. Without --sweep nothing
// is deleted.
//
//	0  done: a dry run, or a sweep that deleted every candidate
//	1  the GC failed or was interrupted, or some deletes failed
//	2  usage: a wrong flag, argument or option value, or no --blockstore-path
//	   for a repository on the local blockstore
//	3  lakeFS refused or could not be reached (credentials, repository, API)
//
// Tests move the GC's clock through LAKEGC_NOW (RFC 3339), read only when
// they call the command in-process; the program ignores it, since a clock
// moved forward would mark objects still in flight.
package main
