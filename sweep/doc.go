// Package sweep is a garbage collector for a lakeFS-style storage namespace
// that runs on one machine, in bounded memory, and reads and writes the
// reports of lakeFS's Spark client, so either side can sweep what the other
// marked: lakeFS's Spark client in sweep-only mode deletes what Mark marked,
// and Sweep deletes what a Spark mark run marked.
//
// This documentation is the contract: what Mark and Sweep promise, their
// options, errors and report. Why they work as they do is in the module's
// docs/sweep-design.md.
//
// # Mark
//
// A clean run of Mark marks
//
//	candidates = recognized objects of the namespace listing − those in other repositories' folders
//	             − uncommitted − committed − objects younger than the cutoff
//
// The namespace listing is every object under the data folder
// (data/<slice>/<id>, listed slice by slice, several at once: see
// "Concurrency and retries") plus the top-level objects, except lakeFS's
// "dummy" marker; nothing under the storage prefix (_lakefs/) or in other
// folders is ever listed. Of what is listed, only the repository's own
// objects are judged (see "What is collected"). A folder under the data
// folder whose name is empty ("data//", made by a stray object such as
// "data//x") is not a slice, and is listed in full like any other folder.
//
// The cutoff is min(Inputs.ExportStart, Mark's start) − MinAge − ClockSkew −
// StagingMargin, in whole seconds. MinAge must be at least the host's link
// TTL (ErrUnsafeMinAge otherwise); StagingMargin is 15 minutes, linkaddr's
// too. A slice whose start time, decoded from its name, is at or after the
// cutoff is not listed. Every other object's age is the modification time
// the listing reports for it (the store's LastModified): an object whose
// listed time is at or after the cutoff, or unknown, is kept, and counted as
// young (Progress.Young, Summary.NumYoungObjects), apart from the older
// objects kept by reference (Progress.Kept, Summary.NumKeptObjects). A key
// listed more than once is kept when any listed copy is young or of unknown
// age.
//
// The keep set is Inputs.Uncommitted and the committed keep set, read
// while the namespace is listed: a committed keep set given as parts at the
// same time as Uncommitted, on a goroutine of Mark's own, a flat one after
// Uncommitted, on the goroutine that called Mark. A failure of any of them
// stops the others. The committed keep set is given in one of two ways:
// flat, every key in Inputs.Committed (with, optionally, Inputs.Changes,
// what changed in it since a previous run), or as immutable named parts,
// Inputs.Parts (lakeFS's ranges), each part's keys sorted. Either way a run
// records a counted keep index from which the next optimized run starts
// (see "Clean and optimized runs").
// Keep keys match listed keys byte for byte, without any normalisation; a
// keep key that cannot match a listed key (a full URI, a leading '/', an
// empty key) fails the mark with ErrInvalidInput. Both sides are sorted
// within WithMemoryBudget, spilling to temporary files in a locked folder
// of WithTempDir that the next Mark removes if this one is killed, and
// merge-joined. A side whose keys are not strictly ascending where they must
// be fails the run; a listing that breaks its own rules does too, with
// ErrBadListing: a delimited listing (the top level, the data folder) that
// returns an object below a delimiter, a key outside the listed prefix, or
// a folder listed twice.
//
// A host whose keep set cannot name every live object (lakeFS's listings
// hide staged re-uploads of committed bytes) can have Mark ask about each
// candidate before it writes it: WithCandidateCheck gets the candidates in
// batches, in order, after the inputs were read; a key it spares counts as
// kept (but as a candidate for the canary, which judges the keep set), and
// its slice is listed again by the next optimized run, so that the check
// sees it again.
//
// # What is collected
//
// Mark deletes only what it identifies as the repository's own:
//
//   - Positive identification. Every listed object is first recognized or
//     not: its key has a shape lakeFS writes — "data/<slice>/<xid>", a
//     linked object's "data/<slice>/<xid>,<signature>", a top-level name of
//     32 lowercase hex digits (the flat layout before lakeFS v0.86),
//     "data/<staging token>/<nanoid>" (early linked uploads); see
//     DefaultRecognizer — or lies under a prefix the operator
//     included (WithInclude). A host whose pathprovider writes other shapes
//     replaces the recognizer (WithRecognizer). An unrecognized object,
//     young or old, is never a candidate and never joins the keep set or
//     the records: it is counted (Progress.Unrecognized; the summary's
//     num_unrecognized_objects, unrecognized_bytes, and the smallest 20 of
//     their keys in unrecognized_sample), logged, and listed in the run's
//     unrecognized/ folder.
//   - Other repositories are walls. A listed key "<P>_lakefs/…", P the data
//     folder or a folder below it (or the configured storage prefix's name
//     in place of _lakefs), is another repository's storage folder: nothing
//     under P is a candidate, nor recorded for the next run. Such objects
//     are counted (Progress.Walled, num_walled_objects) and the folders
//     listed (walls, the first 20) and logged; a slice holding a wall is
//     listed again by the next optimized run.
//   - A canary. Before any candidate is written, Mark fails with
//     ErrImplausibleMark, with the figures, when the keep set names many
//     keys this run could list but the listing found almost none of them,
//     or when the candidates are nearly every old object listed while the
//     keep set is large. Young listed objects count in neither test. The
//     thresholds are Canary's, overridable with WithCanary.
//
// A foreign file named like lakeFS's keys (hex of a version 4 UUID at the
// top level, or data/<xid>/<xid>) that no input references is taken for the
// repository's own, so a namespace must not be shared with another writer
// of those names.
//
// # Clean and optimized runs
//
// A clean run lists every slice older than the cutoff. An optimized run,
// asked for with WithPrevious (LatestRun finds the latest run of the
// namespace), starts from a previous successful run of the same namespace:
//
//   - Slices whose start time is at or after the previous run's newest
//     listed slice (its first_slice) less the slice margin are listed and
//     marked as in a clean run, and so are the top-level objects of the old
//     flat layout, the loose objects under the data folder, and folders
//     there that are not slices.
//   - Older slices are not listed. Their candidates are the keys the
//     previous run kept there (its keep index's listed keys), less the
//     current keep set, plus the previous run's candidates there unless its
//     sweep.json says it deleted every one (none failed or refused). The
//     keys of those slices that the keep set still holds are carried over
//     into this run's records.
//   - A slice where the previous run kept an object for its age (young, or
//     of unknown age) is listed again.
//
// The keep index. Every run but a shard's records its committed keep set
// with each key's reference count: the number of parts that hold it (with
// Inputs.Parts), or the number of times Inputs.Committed yielded it (a flat
// keep set: a key given by several commits, or in two spellings the host
// maps to one key, counts once for each). A key is committed while its
// count is above 0. An optimized run counts from the
// previous run's index when it can, and reads only what changed:
//
//   - with Parts, when the previous index counted parts of the same
//     Parts.Version (the rules that spell a part's keys): the parts that
//     appeared since (each key +1) and those that left the set (−1), merged
//     with the index; a changed part shares most keys with the one it
//     replaced, and their counts cancel. A part that left must yield the
//     keys it yielded when it came (their number and a CRC-32C of them,
//     recorded): when it does not, or cannot be opened, the run counts
//     every current part instead (logged), never a part as empty;
//   - with Committed and Changes, when Changes.Since is the previous run and
//     its index counted a flat keep set so (its kind is "multiset"):
//     Changes.Added (+1 each time it yields a key) and Changes.Removed (−1
//     each time), each sorted, merged with the index; a count below 0 (a
//     change that contradicts the index) fails the run with
//     ErrInvalidInput, and the next run, whose previous run failed, is
//     clean. An index of kind "set", written by an older version that
//     counted a flat keep set's keys once however often they were given,
//     is never combined with Changes: the run reads Committed in full
//     (logged);
//   - otherwise, and in every clean run, in full: every part, merged k ways
//     (each part's keys are sorted, so nothing is sorted), or every key of
//     Committed, sorted. Summary.KeepSource and PartsRead say which.
//
// The index is two records. The committed index holds every committed key,
// listed or not (an address committed before its object is listed keeps
// its count), in blocks of at most 4,096 keys (64 KiB), each under a header
// that says its first and last keys and how many of its keys are listed and
// recognized. The staged index holds the keys the run kept for the staged
// keys (the uncommitted ones and the young listed ones), each with its
// committed count. Both have a listed flag on each key the run found in its
// slice older than the cutoff and kept. The uncommitted keys are read in
// full every run.
//
// An optimized run sorts no committed key, reads no part that did not
// change and decodes no block of the committed index that nothing changed
// in. A block is copied to this run's committed index undecoded, its
// header's numbers added to the run's, when every key of it is in a slice
// the run does not list and that is older than its cutoff, no wall reaches
// into it, no listed key and no change of the counts falls in its range,
// and every staged key in its range is in the previous staged index; else
// it is decoded and joined. A key that left staging is judged from the
// staged index (its count, its listed flag), with no lookup in the
// committed one. So the work of an optimized run is
// O(U + K + L + B + D·4096): the uncommitted keys (U, read, sorted, and
// joined with the previous staged index), the keys of what changed (K),
// what it lists (L), the committed index's B blocks (read and written as
// bytes: a sequential copy of its size, a few bytes a key, through
// WithTempDir's disk) and the D blocks decoded. A clean run writes the
// index from scratch; a run that recounts every part, reads Committed in
// full, or checks carried keys with the recognizer again decodes every
// block. The cost of each kind of run is in docs/sweep-design.md.
//
// The slice margin (WithSliceMargin) defaults to DefaultSliceInterval + the
// link TTL + the clock skew: 25 hours 5 minutes with the defaults. A host
// whose pathprovider uses a longer interval must set a longer margin. Too
// small a margin leaks the garbage of objects uploaded late into a slice,
// until the next clean run; it never marks a live object. An optimized run
// trusts that the slices it does not list are unchanged since the previous
// run but for deletions, and that no object arrives in a slice later than
// the margin.
//
// A previous run that failed, has no or unreadable records, or used another
// storage or data prefix, min age, slice margin, include prefixes, or a
// custom recognizer where this run has none (or the reverse), whose cutoff
// is after this run's, or that listed no slice, makes a clean run, logged
// and said in Summary.CleanReason; WithCleanEvery makes every n-th run of a
// chain clean (DefaultCleanEvery, 7). The summary says the run's kind
// (run_kind), its previous run (previous_run_id) and how many slices older
// than the cutoff it listed and skipped (slices_listed, slices_skipped),
// fields lakeFS ignores. A key carried over from the previous run's records
// is judged only if this run's recognizer accepts it too: the previous run
// recorded only keys its recognizer accepted, and its state says the
// version of the built-in recognition rules it used (recognizer_rules),
// so a run of the same version, include prefixes and no custom recognizer
// carries them unchecked; a state of other rules, or of none, has every
// carried key checked again (the run stays optimized), and so does a custom
// recognizer, a function the state cannot compare. The slices are judged
// once each: a slice's keys are contiguous in key order.
//
// In an optimized run, Progress.Listed and Unrecognized, and the summary's
// unrecognized counts, are of the listed objects only; Kept, Walled and
// Marked, and the summary's other counts, include the keys judged from the
// previous run's records.
//
// Each run leaves what the next needs in
// <prefix>/retention/gc/unified/<run_id>/_lakegc/, which lakeFS's readers
// never read: state.json (version 3: the settings an optimized run must
// share with it, and the slices where it kept young objects or found a
// wall, at most 1,000 of them, beyond which the next run is clean), index
// (the committed index), staged (the staged index) and, with Parts, parts
// (every part counted, with the number of its keys and their CRC-32C).
// Their formats are in docs/sweep-design.md. The candidates and the
// records other than the state stream to the store during the join and
// are closed (their uploads finished) at once; the state is written only
// once all of them are complete, and the summary after it. A run whose upload
// fails fails: it has no state, and the next run from it is clean.
//
// A record that is missing, cut short or altered (its magic, its
// checksum), or that disagrees with the state, makes the run clean, which
// says why. The indexes' entries are checked as the join reads them: a key
// over 64 KiB or out of order, a count or flag the writer cannot write, a
// block that its header contradicts, a key the two indexes count
// differently, or a number of entries other than the state's fails the run
// (only a faulty writer makes such an index whose checksum holds); a block
// copied whole is not decoded, so its entries are checked when a later run
// decodes it. A keep key over 64 KiB (no store takes one) fails a mark with
// ErrInvalidInput. Records of version 1 (a live record of the kept slice
// keys, no index) are still read: the run after them counts its keep set in
// full. Records of version 2 (one keep index, before the committed and
// staged indexes) are not: the run after them is clean.
//
// # Inventory reports
//
// With WithInventory, Mark takes the older slices from an inventory report
// the store made of the namespace (package inventory of this module reads
// S3's and Azure's) instead of listing them:
//
//   - A slice that started before the report's time (Inventory.Time) less
//     the slice margin, and before the cutoff, is not listed: its objects
//     are the report's keys under its folder, judged exactly as a
//     listing's — by the recognizer, the walls (a report key
//     "<P>_lakefs/…" walls P), and their age, which is the report's
//     modification time. The top level, the loose objects and the folders
//     under the data folder that are not slices, and the newer slices are
//     listed through the store, as in a clean run; a report's key
//     anywhere else is ignored: the store's listing of that place wins.
//   - The report is trusted as an optimized run trusts its previous run's
//     records: no object arrives in a slice later than the margin after
//     it started, so a report taken after that holds all of the slice.
//     Nothing the report misses is a candidate. An object written again at
//     its address after the report would be judged by the report's row,
//     its old time, where a listing keeps it as young: lakeFS never writes
//     an address twice, but [Restore] puts quarantined objects back so.
//     Mark therefore keeps every address that a quarantine's manifest
//     part written since the report's time less the slice margin names
//     (and fails on a part it cannot read): what was moved since, and so
//     maybe restored; the next optimized run lists their slices again. A
//     quarantine purged before a report newer than its restores is used
//     takes that protection with it.
//   - An object the report names that the store no longer has is gone
//     already: it may be a candidate, whose delete is a no-op (Sweep
//     counts it deleted or already gone), unless a quarantine moved it
//     since. Objects written again since the report aside, the candidates
//     are exactly those of a mark that lists every slice, plus such
//     objects: those of the slices taken from the report, recognized,
//     older than the cutoff, in no keep set and no other repository's
//     folder. Their counts are in the summary's young and kept counts
//     likewise.
//   - An error of the report, at any row, fails the mark.
//   - A run from an inventory is clean: it ignores WithPrevious (its
//     clean_reason says so), and leaves the records an optimized run can
//     start from. With WithShard, a shard takes from the report its own
//     slices only (each shard reads the whole report).
//
// The summary names the report (inventory), its time (inventory_time) and
// the objects read from it (inventory_objects); slices_skipped counts the
// slices taken from it. Progress.Inventory counts the objects read, and
// those of the slices taken count in Listed too. The report is read on a
// goroutine of its own while the rest is listed, and its keys are sorted
// within the memory budget as the loose objects' are.
//
// # Sharding a mark across machines
//
// WithShard(i, n) restricts a Mark to shard i of n; a host's own job system
// runs the n shards, on as many machines, each with its own run ID:
//
//   - a slice, a folder under the data folder whose name is a 20-character
//     xid, belongs to shard SliceShard(name, n): the 64-bit FNV-1a hash of
//     the name's bytes (offset basis 14695981039346656037, prime
//     1099511628211), as an unsigned integer, modulo n, which a host in any
//     language can compute;
//   - shard 0 also lists the top-level objects of the old flat layout, the
//     loose objects directly under the data folder, and the folders there
//     that are not slices;
//   - every shard lists the names under the data folder (one delimited
//     listing, a page per 1000 folders) to find its slices, and reads and
//     sorts the whole keep set.
//
// Given the same inputs (the same ExportStart, and so the same cutoff as
// long as each shard starts after the export) and options, the shards'
// candidates are disjoint and their union is what one clean Mark marks:
// sweeping each shard's run, in any order and on any machine, is sweeping
// that one run. To merge their summaries, add num_deleted_objects,
// num_young_objects, num_kept_objects, num_unrecognized_objects,
// unrecognized_bytes, num_walled_objects and slices_listed, and take the
// newest of their first_slice (the latest start time; ties: the smaller
// name). A shard's run is also safe on its own.
//
// summary.json says which shard a run was (shard_index, shard_count; the
// index is left out for shard 0). A sharded run is always clean: it ignores
// WithPrevious (its clean_reason says so) and leaves no records under
// _lakegc/. A full run asked to start from a shard's run runs clean, and
// LatestRun passes over shards' runs.
//
// # The report
//
// A run's report is lakeFS's, at <prefix>/retention/gc/unified/<run_id>/:
//
//   - deleted/: Parquet, one UTF8 column "address" (PLAIN, data page v1,
//     Snappy), keys relative to the namespace; a deleted/ written by Spark,
//     with _SUCCESS and several parts, Snappy, GZIP or uncompressed, is read
//     too ([Candidates]);
//   - summary.json, written last: run_id, success, first_slice, start_time,
//     cutoff_time, num_deleted_objects, and Mark's own fields, which
//     lakeFS ignores (see Summary);
//   - unrecognized/: Parquet as deleted/, with the columns address, size
//     and last_modified (milliseconds, null when the listing had no time)
//     of the listed objects the recognizer did not accept, in no order;
//     written once the listing is done (its upload runs beside the join,
//     and ends before the state and the summary), even when the mark
//     fails after (its canary included), and read by no lakeFS reader;
//   - after a sweep, failed/ (address, error) and sweep.json.
//
// A failed Mark leaves success:false and no candidates.
//
// # Sweep
//
// Sweep deletes the candidates of a successful run in batches through a
// BatchDeleter (by default bucket.Delete; packages s3delete, azdelete and
// gcsdelete use S3's DeleteObjects, Azure's Blob Batch and concurrent GCS
// deletes), with a concurrency that follows the store (see "Concurrency and
// retries"), an optional rate limit ([WithDeleteRate], a ceiling that
// retries count against too) and up to five attempts per key on transient
// errors, judged by the store's own answer (see BatchDeleter): a refusal
// lands in failed/ at once, throttling is retried. A key still failing after
// its five attempts lands in failed/ too: a throttling storm longer than the
// retries fails keys, never the sweep, and the next Sweep tries them again;
// a key already gone is not a failure. It refuses, and reports, any
// candidate outside what Mark scans, that the recognizer does not accept
// (give Sweep the WithRecognizer and WithInclude options Mark had), or that
// lies in another repository's folder (see Sweep). Sweeping twice is safe.
//
// A mark and a sweep as a host runs them, with their output, are in the
// repository's examples/gccycle (go run ./examples/gccycle -sweep).
//
// # Moving instead of deleting
//
// With [WithMover], Sweep hands each batch to a Mover before the deletes,
// and deletes only the originals it moved; package sweep/quarantine's
// Mover moves them into the run's quarantine, which its Restore puts back
// and its Purge deletes. Such packages work through a [Store], which reads
// and retries the store's answers as Sweep does.
//
// # Concurrency and retries
//
// Mark's listing requests (a page of up to 1000 keys of one slice) and
// Sweep's DeleteBatch calls each go through a window of requests in flight
// that follows the store: it widens while the caller mostly waits for
// answers, halves (once per round) on a throttled answer (ResourceExhausted:
// S3's SlowDown and 503, 429, Azure's ServerBusy; see BatchDeleter), and
// other errors leave it. It widens by one request a round, but for Mark's
// listing window at first: that one doubles each round until the first
// throttled answer or four times its start (32 by default), as TCP's slow
// start does. A window starts at DefaultListConcurrency (8) listing
// requests and DefaultDeleteConcurrency (16) delete calls, within
// [WithListConcurrencyRange] and [WithDeleteConcurrencyRange] (by default
// up to 32 and 64; never above 1024); [WithListConcurrency] and
// [WithDeleteConcurrency] fix it instead. A slice is listed by one request
// at a time, so a store that rates prefixes apart sees at most one listing
// request a prefix at once: the window sets how many slices are listed at
// once, and its upper bound bounds them. A page is the bucket's ListPage,
// or a PageLister's ([WithPageLister]; package s3list decodes S3's pages
// for a tenth of the SDK's CPU): the window, retries and checks of the
// listing stay the same.
//
// A request that fails with a transient error (throttled, Unknown, Internal,
// DeadlineExceeded) is tried again after a backoff of [WithBackoff], from
// DefaultMinBackoff (1 s) doubling up to DefaultMaxBackoff (2 min), each
// wait drawn from the upper half. A listing page gets ten attempts (about
// three to six minutes of waits), while a permanent error (a refusal, a
// missing bucket) fails Mark at once. A delete batch's keys get five
// attempts (up to 15 s of waits); then they land in failed/.
//
// # Local namespaces
//
// With [WithLocalListing], Mark reads the folders of a local (fileblob)
// namespace itself, each once, 256 entries per request of the window, and
// lists the keys fileblob lists, symbolic links as objects, never
// followed; what it cannot match exactly goes through the bucket (or the
// PageLister of [WithPageLister]). Unlike fileblob, it fails the listing on an error of the file
// system (a transient one after the retries of a page) rather than skip a
// folder; a file or folder gone before it is read is not listed, nor is a
// folder replaced by a symbolic link.
//
// # Cost
//
// Mark's memory is bounded by [WithMemoryBudget], not by the number of keys,
// and on Linux the bound is what a container's memory limit sees: from 64 MiB
// up, the peak resident memory of the process grows by at most the budget
// plus 64 MiB while Mark runs. The list of folders under the data folder
// counts against the budget (about 120 bytes an entry beyond its name); a
// folder the budget cannot hold an entry for is listed alone, at once,
// slower, so memory stays bounded however many folders there are. The
// default budget (256 MiB) has room for about 200,000 entries or more, and
// holds 20 million keys, 15 million of them kept. Figures and the commands
// that reproduce them are in the module's BENCHMARKS.md.
//
// # Storage prefix and options
//
// lakeFS keeps its own files under a folder of the storage namespace,
// DefaultStoragePrefix ("_lakefs") unless configured. The packages of this
// module take it one way: a function that names or reads one run's files
// takes it as an argument next to the run ID (ReadSummary, Candidates); a
// call configured by options takes WithStoragePrefix (Mark, Sweep,
// NewStore). ""
// means DefaultStoragePrefix, except for Candidates, which refuses it.
//
// Mark takes MarkOptions and Sweep SweepOptions; an Option is both, and an
// option of one only does not compile with the other. Every option's zero
// value means its default; an invalid value is an error wrapping
// ErrInvalidInput, returned by Mark or Sweep before they touch the bucket
// (CheckOptions tells it beforehand).
//
// # Dependencies
//
// Package sweep imports no cloud SDK: besides the standard library and what
// gocloud.dev/blob imports itself, it depends on 60 packages outside the
// module (parquet-go and its codecs, golang.org/x/time/rate; a test keeps it
// at most 64). GCS's error
// type, which tells a refusal from a missing object, comes with
// gocloud.dev/blob and sweep reads it itself; Azure's is read by
// azdelete.Classifier (see ErrorClassifier).
package sweep
