// Package gcrace holds a model-based test of lakegc's garbage collection
// racing writers. It has no API: everything is in its tests.
//
// The test builds a small versioned store in memory: branches with staging
// areas, commits with parents and creation dates, uploads through linkaddr
// (get-address, upload, link) into paths from pathprovider, shallow copies
// and renames recorded with copytrack, deletes, commits, merges, resets,
// branch creation and deletion, and retention rules. Every component reads
// one simulated clock, and the bucket (an in-memory gocloud.dev/blob driver)
// stamps objects with it, so link TTLs, copy TTLs, retention days and the
// GC's cutoff are measured in simulated days while a run takes milliseconds.
//
// A seeded random schedule interleaves writer steps with full GC cycles —
// the uncommitted export (resumed from its mark, with copytrack's addresses
// as the trailer), retention's active commits, sweep.Mark and sweep.Sweep —
// and runs writers inside the cycle: between Prepare calls, between the
// branches and the entries the export scans, while the copy records are
// read, between the branches retention reads, while Mark lists the
// namespace, and between the deletes of Sweep.
//
// An oracle, written from the SPEC's GC model, says at any instant which
// objects are reachable: staged on a branch, in a commit that retention
// keeps, copied less than the copy TTL ago, or uploaded to an address
// handed out less than the link TTL ago. The bucket checks every delete
// against it; after each cycle the test also checks that garbage
// unreachable since before the cycle's cutoff is gone. Mutation tests wire
// the cycle wrongly on purpose and assert that the invariant catches it.
package gcrace
