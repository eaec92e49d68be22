// Package copytrack keeps a table of recent shallow copies of staged
// objects, so that a garbage collector racing a rename never deletes the
// source's data.
//
// A shallow copy of a staged object shares the source's physical address,
// and a rename is a copy followed by a delete of the source. A GC that scans
// the staging area branch by branch can read the destination's branch before
// the copy and the source's branch after the delete: it sees neither path,
// and the shared address looks like garbage. The host calls Tracker.Track
// after staging the copy and before deleting the source; the GC's uncommitted
// export reads Tracker.Addresses after every branch was scanned (the
// uncommitted package's WithTrailer option), so any copy that the branch
// scan could have missed is in the export.
//
// Records live in a Store, the host's ordered key-value store (NewMemStore
// for tests and single-process hosts; copytrack/sqlstore for PostgreSQL;
// copytrack/storetest is the conformance suite for the host's own adapter).
// Keys are laid out per repository and in time order, so Expire reads only
// the records it drops plus one. A record lives until Expire drops it (the
// TTL must outlast the longest GC run) or ForgetBranch does once the branch's
// staging area was committed, reset or deleted.
package copytrack
