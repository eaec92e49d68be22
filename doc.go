// Package lakegc is the root of a library of garbage-collection primitives for
// versioned object stores: data lakes with branches, commits and a staging area
// over a bucket, in the style of lakeFS. It holds no code of its own; a host
// imports the packages it needs and plugs in its own KV and blob adapters.
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
// newer than the link TTL. Package sweep computes exactly that on one machine,
// in bounded memory, and deletes it.
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
// No package imports another package of this module: each can be adopted alone.
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
