// Package contract holds the figures of the host contract that more than one
// package of the module enforces, so that they cannot drift apart: package
// linkaddr refuses links by them and package sweep keeps objects by them,
// and neither imports the other.
package contract

import "time"

// StagingMargin is the time a host has, after a link address passed
// verification, to land the staging write of the link.
//
// Verifying a link and staging it are two steps, not one atomic write: a
// link verified just inside the TTL and staged some minutes later is in no
// input of a GC cycle whose export started in between, and only its age
// protects its object. Both sides keep the margin, so that either one alone
// is enough:
//
//   - linkaddr's Verify refuses an address with less than StagingMargin left
//     of its TTL, and returns the end of the TTL as the deadline of the
//     staging write (which Signer.Stage checks);
//   - sweep's cutoff is the export's start less the minimum age, the clock
//     skew and StagingMargin, so an object uploaded to an address verified
//     with the whole TTL (as lakeFS's own link does) survives a staging
//     write up to StagingMargin after the TTL ran out.
//
// 15 minutes covers a staging write that stalls for minutes (a retried KV
// write, a paused process) and costs a GC a quarter of an hour of garbage
// kept longer.
const StagingMargin = 15 * time.Minute
