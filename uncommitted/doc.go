// Package uncommitted exports the staging area of a repository (every
// staged, uncommitted object) to Parquet files, so that a garbage collector
// keeps those objects: lakeFS's prepare-uncommitted step, byte-compatible
// with it.
//
// # A run, in pages
//
// A host calls [Preparer.Prepare] with a nil [Checkpoint] to start a run, then
// again with each returned Result.Checkpoint until it is nil. Each call writes
// at most one file, bounded by a size and a time budget, under
//
//	<prefix>/retention/gc/uncommitted/<run_id>/uncommitted/<name>
//
// and the union of a run's files is exactly the set of staged entries that
// reference data in the repository's storage namespace, as keys relative
// to it. Tombstones are left out. On S3 a relative address that is not a
// clean path (data//x) gives a second row, the key lakeFS before v0.110
// read its object at (aws-sdk-go v1 cleaned request paths: data/x); full
// addresses get the same. A full address that starts with the
// namespace ([CutNamespace]: the scheme and authority compared regardless
// of case, as a URI's are, the path exactly) gives a row for every key
// lakeFS's versions could have stored its object at: the rest of the
// address, lakeFS's raw-path resolution of it and the decoded one its
// versions before September 2025 used (so "data/k%3Dv" and "data/k=v"),
// and for Azure the trimmed, decoded blob name, through any endpoint
// domain of the account. A full address that names the namespace in
// another spelling (an S3 scheme alias such as s3a, a file URI's other
// forms, local:// with the absolute path, "..", doubled slashes,
// percent-escapes, a symbolic link) fails the call with
// [ErrNamespaceMismatch]: the namespace is not spelled as the host writes
// it. A full address outside the namespace, such as an import, is counted
// (Result.Foreign); when its path ends with a key shape lakeFS writes
// ("data/<slice>/<xid>", a flat hex name) that key is exported too, and the
// first 64 distinct such keys of a call are looked up in the bucket: one
// that exists is the namespace's object in another spelling, and fails the
// call with ErrNamespaceMismatch. Every row is
// written once, whatever the budgets and wherever the run was interrupted:
// a checkpoint points at the first entry not yet written, and a file is named
// after the run and the checkpoint its call started from, so a call retried
// after an upload of unknown outcome replaces the file of its first attempt.
// Between calls, a checkpoint travels as a continuation token ([EncodeToken],
// [DecodeToken]) in lakeFS's format, so a lakeFS GC client drives a run of
// this package, and a run started by lakeFS can continue here. The token is
// the standard base64 of the checkpoint's JSON,
// {"branch","path","run_id","key"}. JSON cannot carry a name that is not valid
// UTF-8, so a checkpoint never holds one: a call stops only where the
// checkpoint can name a valid key between the last entry written and the next
// one (and only between branches when the branch's own name is not UTF-8), so
// such names never lose or repeat a row.
//
// The host provides its staging area as a [Source]. A branch deleted during
// the run ([ErrBranchNotFound]) is skipped; any other error fails the call,
// which then leaves no new file, and the same checkpoint can be retried. So
// does a cancelled context, even when the Source stopped quietly. Addresses to
// keep that are not in any branch, such as recent shallow copies, come
// through [WithTrailer], read once every branch was scanned. A host that
// reads lakeFS's staging area converts lakeFS's address types with
// [AddressTypeFromLakeFS].
//
// # Reading a run back
//
// The call that completes a run writes a manifest ([ManifestName]) of the
// run's files and row counts into the run's folder; its name starts with
// '_', so lakeFS's and Spark's readers skip it. [Addresses] yields the
// addresses of a complete run, the input of a GC (sweep's
// Inputs.Uncommitted), and [ReadRun] its rows. Both check the run against
// its manifest before the first row: an absent run (a mistyped run ID, the
// storage prefix "lakefs" for "_lakefs") fails with [ErrNoRun], an
// unfinished one, or one whose files differ from the manifest, with
// [ErrIncomplete]. A run written by stock lakeFS has no manifest; it is
// read only with [AllowUnverified], on the host's word that its Prepare
// loop ran to the end.
//
// Both refuse a damaged file with ErrInvalidFile, possibly after some of
// its rows. Among their checks: every page of a column they read (both
// columns for ReadRun, physical_address for Addresses) whose header
// carries a CRC-32, as parquet-go writes on every page (Prepare's
// included), must match its stored bytes, or rows of altered addresses
// could be handed out; a page whose header has no CRC is not checked. The
// page at a chunk's dictionary_page_offset, which parquet-go's row reader
// (ReadRun's) seeks past and loads apart when a data page first refers to
// it, must be a dictionary page right before the chunk's data pages, so
// that both read the same pages.
//
// Addresses decodes the physical_address column only, without building
// rows, and reads and uncompresses its pages once when they are PLAIN
// values, as this package's and lakeFS's files hold them (ReadRun reads
// them twice: a check, then parquet-go's decoding); both read each file's
// 1 MiB windows 8 ahead, concurrently, in at most 9 MiB a reader (ReadRun
// states the bounds).
//
// # Files
//
// The files have lakeFS's layout: columns physical_address (BYTE_ARRAY,
// UTF8) and creation_date (INT64, Unix seconds), both required, data page
// v1, PLAIN values; their pages are GZIP at DefaultGzipLevel by default,
// as lakeFS writes them, which every Parquet reader (Spark before 3.4
// included) reads. WithCompression(Zstd()) writes ZSTD instead, cheaper to
// write and to read back, and smaller (lakegc.Collect writes it, for its
// own mark alone): Spark reads ZSTD from 3.2 on (Parquet 1.12's own ZSTD),
// but Spark 3.0 and 3.1, which lakeFS's Spark client for Scala 2.12 is
// built against, only through Hadoop's native zstd library, and fail to
// read the files without it. ReadRun and Addresses read both. The files
// stream into the bucket through a blob.Writer; memory is bounded by one
// row group, never by the number of rows.
//
// # Ordering
//
// The export must complete before the GC lists committed data: an object
// committed and unstaged during the export is then seen on one side.
//
// # Cost
//
// An export allocates nothing per row (about fifteen thousand allocations for
// a million rows), reads the clock only every 16 entries, and compresses
// at DefaultGzipLevel (or with Zstd, cheaper still); together they make it
// several times faster than a lakeFS-style writer. The writer is one
// goroutine: encoding on a second one, fed in batches, was measured and was
// no faster on a machine with no idle core, so the simpler design stays.
// Figures, the memory peak and the commands that measure them are in the
// module's BENCHMARKS.md.
//
// # Storage prefix and options
//
// lakeFS keeps its own files under a folder of the storage namespace,
// DefaultStoragePrefix ("_lakefs") unless configured. The packages of this
// module take it one way: a function that names or reads one run's files
// takes it as an argument next to the run ID (Location, ReadRun,
// Addresses); a call configured by options takes WithStoragePrefix
// (NewPreparer). In both, "" means DefaultStoragePrefix.
//
// Every option's zero value means its default; an invalid value (a
// negative size or duration) is an error of NewPreparer wrapping
// ErrInvalidInput.
package uncommitted
