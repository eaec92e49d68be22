// Package copytrack keeps a table of recent shallow copies of staged
// objects, so that a garbage collector racing a rename never deletes the
// source's data.
//
// A shallow copy of a staged object shares the source's physical address,
// and a rename is a copy followed by a delete of the source. A GC that scans
// the staging area branch by branch can read the destination's branch before
// the copy and the source's branch after the delete: it sees neither path,
// and the shared address looks like garbage. lakeFS designed such a table of
// recent copies to close this race (its issue 4562) but did not build it; this
// package is that table. The host calls Tracker.Track
// after staging the copy and before deleting the source; the GC's uncommitted
// export reads Tracker.Addresses after every branch was scanned (the
// uncommitted package's WithTrailer option), so any copy that the branch
// scan could have missed is in the export, whichever side of the rename the
// scan saw. The race itself is a test in this repository,
// tests/renamerace: a rename in the middle of an export (on one branch,
// across branches, and between two Prepare calls) keeps its source address
// with the trailer, and loses it without.
//
// Records live in a Store, the host's ordered key-value store (NewMemStore
// for tests and single-process hosts; copytrack/sqlstore for PostgreSQL;
// copytrack/storetest is the conformance suite for the host's own adapter).
// A record lives until Expire drops it (the TTL, default 24 hours, must
// outlast the longest GC run) or ForgetBranch does once the branch's staging
// area was committed, reset or deleted; ForgetBranch keeps every record
// created at or after its cut-off, so a rename racing the commit stays
// protected.
//
// # Record layout
//
// A key is
//
//	uvarint(len(repository)) | repository | created | counter | process ID
//
// The length prefix keeps repositories apart in a prefix scan ("a" and "a/b",
// or names holding \x00 or \xff, never share one). created is the Unix
// nanoseconds, big-endian with the sign bit flipped, so byte order is time
// order and Expire reads only the records it drops plus one. The counter keeps
// records of equal times in Track order; the random process ID keeps the keys
// of different processes apart, so no record overwrites another.
//
// A value is a version byte, then the branch, source path, destination path
// and physical address, each length-prefixed. A record that does not decode is
// an error wrapping [ErrCorruptRecord] that names its key: List stops there,
// and ForgetBranch deletes nothing.
//
// # Cost
//
// Each record is one Store call: with a database behind the Store, Track and
// each record Expire drops cost a round trip, as the Store interface has no
// batch delete. Figures for the memory store and for PostgreSQL are in the
// module's BENCHMARKS.md.
package copytrack
