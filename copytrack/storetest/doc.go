// Package storetest is the conformance suite for copytrack.Store
// implementations. A host proves its adapter with one call:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) copytrack.Store { return newEmptyStore(t) })
//	}
//
// The suite checks what the Tracker relies on: ascending order of key bytes,
// binary keys, prefix isolation, overwrite, deletion of a missing key, copies
// of the slices going in and out, early break from Scan, concurrent writers,
// and a done context stopping every call before it does the work.
//
// The suite is itself tested against 16 deliberately broken stores, one bug
// each; every check fails for at least one of them, so no check is vacuous.
package storetest
