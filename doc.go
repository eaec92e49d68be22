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
//     minus at least the link TTL, the clock skew and the staging margin, so
//     an object uploaded to a signed address just before the export and
//     linked just after it is protected by its age (see "The host contract").
//
// # The host contract
//
// Collect is safe only for a host that keeps its side of the model. Each
// guarantee below names the loss it prevents, and either what checks it or
// why only the host can:
//
//  1. A link's staging write lands by the deadline linkaddr's Verify returns
//     (the end of the TTL, at least linkaddr.StagingMargin after the
//     verification). Otherwise a cycle whose export starts between the
//     verification and the write sees the link nowhere, and deletes the
//     object by its age. Signer.Stage refuses and undoes a late write; the
//     sweep's cutoff also keeps sweep.StagingMargin (the same constant) on
//     top of the clock skew, so a host that verifies with the whole TTL, as
//     lakeFS does, may stage up to the margin late. Tests: linkaddr's
//     TestStage and TestStagingMarginReduced, this package's
//     TestStagingMarginLakeFSLink and TestStagingMarginStage, and the
//     hosttest harness with slow staging.
//  2. An object's modification time is never earlier than the time its
//     address was handed out: no backdated times, no copy that keeps its
//     source's time, no time a client supplies; and the path provider, the
//     signer and Config.Clock read one clock. Otherwise an object in flight
//     looks older than the cutoff and is deleted. The host's alone: a time
//     the store reports cannot be told from a true one. Config.SliceInterval
//     below MinAge (which Collect checks) narrows it: a new address lands in
//     a slice younger than every cutoff, which the mark does not list.
//  3. Every route from an upload into a staging area — signed links,
//     imports, copies by address, multipart uploads completed later — is
//     bound by the link TTL as guarantee 1 is. Otherwise an object staged
//     by a route without the bound can be older than the cutoff while in no
//     input. The host's alone: Collect sees staging areas, not how entries
//     got there (Signer.Stage serves any route that has a linkaddr.Link).
//  4. A Source never skips an entry that stays staged while its branch is
//     scanned, whatever is staged or unstaged around it meanwhile.
//     Otherwise the export misses a staged object. uncommitted/sourcetest
//     checks it (StableEntriesUnderWrites, given Harness.Stage and
//     Unstage), as it checks order, resumption and errors.
//  5. Commits are immutable and their IDs never reused; their dates come
//     from the same clock. Otherwise the GC keeps the objects of one version
//     of a commit and deletes those of the other, or expires a commit by a
//     wrong date. retention/sourcetest checks immutability
//     (CommitsImmutable); the clock is the host's.
//  6. The client uploads to exactly the key the host stages: lakeFS stages
//     the signed address the client uploaded to, signature included, and
//     the namespace holds the object under that key. Otherwise the staged
//     key points at nothing and the uploaded object is garbage. The host's
//     alone: Collect compares keys, not intentions.
//  7. Retention reaches forward only. A commit expired by the rules of one
//     cycle may have lost objects to its sweep; a branch created later from
//     that commit, or a rule made longer, cannot bring them back. Collect
//     guarantees the objects of the commits the rules keep at each cycle, of
//     every staged entry, and of every object younger than the cutoff; a
//     host must not branch from, revert to, or tag a commit older than the
//     retention of every branch it was on (a tag made after a cycle read
//     the tags keeps nothing in that cycle; the HEADs and the commits inside
//     their retention are safe — but with the extended stale-branch rule,
//     retention.Extended.StaleBranchDays, the HEAD of a stale branch is not:
//     it is off unless set, and never applies to the default branch).
//  8. A bucket that dates a new object by its own clock — fileblob until the
//     host sets the time, a store whose clock drifts — is safe only while
//     new addresses land in slices younger than the cutoff. Collect refuses
//     a Config.SliceInterval at or above the minimum age, and a
//     Config.LinkTTL that differs from Config.Signer's TTL: both are part
//     of the cutoff's argument. Test: TestCollectRefusesContractBreaks.
//
// Package hosttest races a host's store against Collect with writers on one
// simulated clock and checks every live object after every cycle: a host
// proves guarantees 1, 4 and 5, and its own adapters, with one call.
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
// through a reader that refuses a missing or unfinished run, applies the
// rules — [Config].Rules and [Config].ExtendedRules if set, else lakeFS's
// rules file and lakegc's extended one from the namespace (package
// retention, "Extended rules") — treats a repository without rules as lakeFS
// does (every commit is kept, and the report and a WARN log say so), and
// returns a [Report] of each phase, which marshals to JSON.
//
// One [Config] holds the settings the packages would otherwise each take: the
// bucket and its namespace URI, one storage prefix, one link TTL (the floor of
// the minimum age; the host's linkaddr.Signer must use the same, which
// Config.Signer checks), one clock. Zero values are the defaults, and invalid
// values are errors wrapping [ErrInvalidInput] before any I/O.
//
// Without Config.Sweep a cycle is a dry run: the report says how many objects
// a sweep deletes and where the mark lists them. Review, then sweep:
// [Candidates] and [CandidatePage] list the mark's candidates statted, with a
// reason told from each key; [Explain] says why the mark marked or kept any
// object, from the run's own records (its summary, candidates and commits
// report, the kept commits read again one at a time), never a second copy of
// the keep set; [SweepRun] (or Config.ResumeMark with Sweep) deletes exactly
// that mark's candidates, and refuses, with [ErrSuperseded], a mark that a
// later mark of the namespace superseded ([LaterRuns]: any other run whose
// summary, successful or not, starts at or after its start or gives no
// start, so two in the same second supersede each other; the other shards
// of a sharded mark do not): an object it found garbage may have become
// live since. Config.SweepSuperseded overrides. The check is not atomic
// with the deletes: Config.Lease (below) keeps a second cycle out.
// Config.ResumeExport continues an export that was interrupted.
// With Config.Quarantine the sweep moves the garbage into the run's
// quarantine instead of deleting it (quarantine.Restore puts it back, quarantine.Purge
// deletes old quarantines); with Config.Lease the cycle holds the
// namespace's lease (package lease), so that a second one fails, naming it.
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
// Package hostkit builds a host's adapters from maps, pages of a store or
// SQL rows. The conformance suites uncommitted/sourcetest and
// retention/sourcetest prove them with one call each (with options for a
// store without lakeFS's address types, metaranges or commit versions), as
// copytrack/storetest proves its KV store; package hosttest races the whole
// store against Collect, and package gctest runs a host's tests on one
// simulated clock.
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
//   - hosttest: a writers-versus-GC harness for a host's store, with an
//     oracle of the model above.
//   - hostkit: the iterator plumbing of a host's adapters.
//   - gctest: one simulated clock for the path provider, the bucket's
//     modification times and Collect.
//
// No package above imports another package of this module: each can be
// adopted alone. Only this root package composes them, and the kits
// (hosttest, hostkit, gctest) use them.
//
// # Compatibility with lakeFS
//
// Every on-storage and on-wire format is byte-compatible with lakeFS: signed
// link addresses, slice and object names, the uncommitted continuation token
// and Parquet files, the GC rules (JSON and protobuf), the commits CSV and the
// GC report (summary.json and the deleted/ Parquet files). A lakeFS fork can
// swap its internals for these packages without migrating data, and lakeFS's
// Spark GC client reads what they write.
//
// The package and its core packages (sweep, uncommitted, retention,
// copytrack, pathprovider, linkaddr, namespace) import no cloud SDK: this
// package depends on 60 packages outside the module besides the standard
// library and what gocloud.dev/blob imports itself (a test keeps it at most
// 65); the SDKs come with the deleters (sweep/s3delete, sweep/azdelete,
// sweep/gcsdelete) and the gocloud drivers a host links in.
package lakegc
