// Package sourcetest is the conformance suite of uncommitted.Source, the
// host's staging area. A host proves its adapter with one call, giving a
// function that loads a fixture into a new, empty store of its own:
//
//	func TestSource(t *testing.T) {
//		sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
//			store := newEmptyStore(t)
//			// ... write f.Branches and their Entries into store ...
//			return sourcetest.Harness{Source: store, DeleteBranch: store.DeleteBranch}
//		})
//	}
//
// An adapter that yields branches or entries out of byte order, skips some
// when it resumes from a name, leaves out a hidden branch, turns an entry
// into a tombstone or drops its address type, skips an entry that stays
// staged while writers stage and unstage others during the scan (paging by
// offset, with Harness.Stage and Unstage), yields nothing for a deleted
// branch instead of uncommitted.ErrBranchNotFound, or ends quietly on a
// store error or a cancelled context makes the export miss staged objects,
// and a GC then deletes them. The suite checks each of these, with names
// that sort differently as bytes, as UTF-16, case-insensitively, path by
// path and under database collations, and compares random resumptions with
// a model. The suite's own tests prove that every check fails on an adapter
// with the bug it targets.
//
// The fixtures follow lakeFS's data model: some entries have full addresses
// (uncommitted.Full), some are tombstones. A store that has no tombstones
// (it unstages by deleting the entry) loads none and passes as it is: a
// Source may leave tombstones out. A store whose addresses are all
// relative keeps no address type; it runs the suite with RelativeOnly, and
// its Source leaves Entry.AddressType zero (Relative):
//
//	sourcetest.Run(t, load, sourcetest.RelativeOnly())
package sourcetest
