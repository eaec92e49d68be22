// Package lakegc is the root of a library of garbage-collection primitives for
// versioned object stores: data lakes with branches, commits and a staging area
// over a bucket, in the style of lakeFS. A host imports the packages it needs
// and plugs in its own KV and blob adapters; [Collect] composes them into one
// safe GC cycle.
//
// # The GC model
//
// A repository's storage namespace (for example s3://bucket/repo1) holds object
// data. An object there is garbage when it is in none of:
//
//  1. committed: referenced by a commit that retention keeps (package retention);
//  2. uncommitted: referenced by a branch's staging area (package uncommitted),
//     or by a recent shallow copy (package copytrack);
//  3. in flight: uploaded to an address handed out less than the link TTL ago
//     and not yet linked (packages linkaddr and pathprovider).
//
// So garbage = namespace listing − committed − uncommitted, skipping slices
// newer than the link TTL, of the objects the repository's writer made: keys
// of lakeFS's shapes or under Config.Include, outside other repositories'
// folders; anything else listed is reported and kept (package sweep, "What is
// collected"). Package sweep computes exactly that on one machine, in bounded
// memory, and deletes it.
//
// # Ordering constraints
//
// The order of the steps is part of the safety argument, and getting it wrong
// deletes live data:
//
//   - the uncommitted export must finish before committed data is listed, so an
//     object committed (and unstaged) during the export is seen on one side;
//   - copy records are read after every branch was scanned, so a rename (copy,
//     then delete of the source) that races the scan is caught by the record;
//   - the sweep's cutoff is anchored at the start of the uncommitted export,
//     minus at least the link TTL, so an object uploaded to a signed address
//     just before the export and linked just after it is protected by its age.
//
// # One GC cycle
//
// [Collect] runs a whole cycle in that order: the uncommitted export (copy
// records last), the rules, the active commits and their report, the mark,
// and — only with [Config].Sweep — the sweep. The host gives it a [Host]: its
// staging area (an uncommitted.Source), its branches and commits ([Commits]),
// and the addresses of the commits the rules keep ([Committed]), plus its
// copy tracker if it has one. A host that runs the export or the retention
// itself, as lakeFS does through its prepare_uncommited and prepare_commits
// calls, gives [Host].Export instead of Staging, or [Host].Active instead of
// Commits; Collect keeps the order all the same: the export's start
// recorded before the host's export begins, the export finished before the
// kept commits are asked for and before any committed address is read, and
// an empty list of kept commits refused. Collect does the rest: it records the export's
// start, makes the run IDs, loops the export to completion, reads it back
// through a reader that refuses a missing or unfinished run, treats a
// repository without rules as lakeFS does (every commit is kept), and returns
// a [Report] of each phase, which marshals to JSON.
//
// One [Config] holds the settings the packages would otherwise each take: the
// bucket and its namespace URI, one storage prefix, one link TTL (the floor of
// the minimum age; the host's linkaddr.Signer must use the same), one clock.
// Zero values are the defaults, and invalid values are errors wrapping
// [ErrInvalidConfig] before any I/O.
//
// Without Config.Sweep a cycle is a dry run: the report says how many objects
// a sweep deletes and where the mark lists them. Config.ResumeMark then sweeps
// that mark, and Config.ResumeExport continues an export that was interrupted.
// A cycle interrupted anywhere leaves nothing a later one could misread:
// running Collect again, afresh or resuming, is safe.
//
// # Namespace identity
//
// The mark takes for garbage what the bucket lists and no input names, so
// Bucket, Namespace and the addresses the host stores must name the same
// place. Collect proves what it can before anything is marked:
//
//   - the bucket holds a repository marker at its root: lakeFS's
//     (<StoragePrefix>/dummy, or for lakeFS before v0.108 dummy at the
//     top level holding lakeFS's words), or lakegc's
//     (<StoragePrefix>/lakegc.json, written by [InitNamespace] when the
//     host creates the repository, naming the namespace). None is
//     [ErrNoNamespaceMarker]: a bucket rooted at a parent folder or a
//     shared bucket's root has none, and a top-level dummy of other
//     content (a tenant's file, or lakeFS's current marker in a bucket
//     rooted at a repository's _lakefs folder) is none. lakegc's marker of
//     another namespace is [ErrNamespaceMismatch]. lakeFS's marker proves
//     only that some repository is rooted there, not which;
//   - every full address of every input (committed, the export, copy
//     records) is judged by one rule: one that starts with Namespace as
//     spelled (its scheme and authority in any ASCII case) keeps every key
//     some lakeFS version or adapter could have stored its object at (the
//     raw and the decoded path; for S3 also the path as lakeFS before
//     v0.110 cleaned it — aws-sdk-go v1 cleaned each request's path, so
//     data//x named data/x, which a relative address on S3 keeps too;
//     for Azure the trimmed, decoded blob name,
//     through any endpoint domain of the account); one that names the same
//     place in another spelling — s3a or s3n for s3, file:/x, file:///x and
//     file://localhost/x, local:// with the folder's absolute path,
//     userinfo before the host (s3://user@bucket/x), "." and ".."
//     segments, doubled slashes, percent-escapes, a symbolic link in either
//     path, an absolute path that may hold a local://repo1 namespace
//     (local:///var/lakefs/repo1/x: spell such a namespace with its
//     absolute path) — is [ErrNamespaceMismatch];
//   - a full address outside the namespace, such as an import, is counted
//     (MarkReport.Foreign, ExportReport.Foreign); when its path ends with a
//     key shape lakeFS writes (data/<slice>/<xid>, a flat hex name) that
//     key is kept too, and the first 64 distinct such keys of each input
//     are looked up in the bucket: one that exists means the host spells
//     the namespace in a way no rule above knows, and is
//     [ErrNamespaceMismatch].
//
// What this does not prove: that a bucket holding lakeFS's marker is this
// repository's folder rather than another repository's, or that a
// namespace whose addresses are all relative is spelled right (relative
// addresses carry no spelling). A host that stores only relative
// addresses relies on the marker alone.
//
// The conformance suites uncommitted/sourcetest and retention/sourcetest prove
// a host's adapters with one call each, as copytrack/storetest proves its KV
// store.
//
// # Packages
//
//   - pathprovider: physical addresses under time-descending slices
//     (data/<slice>/<xid>), and parsing them back.
//   - linkaddr: HMAC-signed, expiring upload addresses, with key rotation and
//     single use.
//   - copytrack: a table of shallow copies, so a GC racing a rename never
//     deletes the source; copytrack/storetest proves a host's KV adapter.
//   - uncommitted: a resumable export of every staged object to Parquet, in
//     budgets of size and time.
//   - retention: GC rules, their storage, the active-commits algorithm and the
//     commits report.
//   - sweep: mark candidates and sweep them on one machine, in bounded memory,
//     writing lakeFS's report.
//
// No package imports another package of this module: each can be adopted
// alone. Only this root package composes them.
//
// # Compatibility with lakeFS
//
// Every on-storage and on-wire format is byte-compatible with lakeFS: signed
// link addresses, slice and object names, the uncommitted continuation token
// and Parquet files, the GC rules (JSON and protobuf), the commits CSV and the
// GC report (summary.json and the deleted/ Parquet files). A lakeFS fork can
// swap its internals for these packages without migrating data, and lakeFS's
// Spark GC client reads what they write.
package lakegc
