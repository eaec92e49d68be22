// Package quarantine makes a sweep reversible: with
// sweep.WithMover(quarantine.Mover{}), sweep.Sweep moves each candidate
// into the run's quarantine instead of deleting it; Restore puts objects
// back and Purge deletes the quarantines past their days.
//
// The move of a candidate is a server-side copy (bucket.Copy) to
// <storage prefix>/retention/gc/quarantine/<run>/objects/<address>, a check
// that the copy has the original's size (and MD5, when the store gives
// both objects'; two Attributes calls an object), then the delete of the
// original through Sweep's BatchDeleter. A candidate whose copy fails or
// differs is kept at its place and listed in the run's failed/ with the
// reason "quarantine copy: …"; one gone from its place counts as gone
// already. Before the first batch the quarantine's record (quarantine.json,
// when it was started) is written unless it exists, and after each batch's
// copies, before the originals' deletes, a part of its manifest (manifest/,
// the addresses moved, named by the sweep's start time). An object's key in
// the quarantine spells its address, so the move and its record are one
// write: a sweep stopped anywhere leaves each candidate at its place, in the
// quarantine or both (a copy whose original was not deleted yet), and the
// rerun finishes the move.
//
// The quarantine is under the storage prefix, which Mark never lists and
// include prefixes may not reach: its objects are never candidates, and
// Sweep refuses any a report names. On S3 a copy is one CopyObject call,
// which takes objects of up to 5 GB, and a key is at most 1024 bytes: a
// larger candidate, or one whose quarantine key (its address after the
// quarantine folder's ~60 bytes and the storage prefix) is too long, fails
// its copy and is kept.
//
// Restore copies objects back (a conditional write, IfNotExist, through the
// client) and then drops their quarantine copy, never over an object
// already at their place (one with the same bytes is taken as restored).
// Purge deletes the quarantines older than an age, its objects first and
// its record last, so a purge stopped midway is finished by the next. Both
// take sweep's SweepOptions and read the store's errors as Sweep does
// (through a sweep.Store: WithErrorClassifier, and the BatchDeleter's own
// classifier). Errors wrap ErrInvalidInput or ErrNoQuarantine, or, for an
// invalid option, sweep.ErrInvalidInput; messages start with
// "quarantine: ". Every function is safe for concurrent use; a Restore and
// a Purge of the same quarantine at once are not (hold the namespace's
// lease, package lease, as the lakegc command does).
package quarantine
