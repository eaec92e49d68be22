// Package sourcetest is the conformance suite of what package retention
// reads of a host: its branches with their HEADs, and its commits (the
// Source interface, which lakegc.Commits is too). A host proves its adapter
// with one call, giving a function that loads a fixture into a new, empty
// store of its own:
//
//	func TestCommits(t *testing.T) {
//		sourcetest.Run(t, func(t *testing.T, f sourcetest.Fixture) sourcetest.Harness {
//			store := newEmptyStore(t)
//			add := func(ctx context.Context, f sourcetest.Fixture) error {
//				// ... write f.Commits and f.Branches into store ...
//				return nil
//			}
//			if err := add(context.Background(), f); err != nil {
//				t.Fatal(err)
//			}
//			return sourcetest.Harness{Source: store, Add: add}
//		})
//	}
//
// An adapter that leaves out a branch (a hidden one, say) or a commit, loses
// a merge's main parent or a commit's date, cannot Get a commit made after
// List began, lets a commit change (an Add that reuses a stored ID with other
// content, taken), answers a missing commit without an error, or ends quietly on
// a store error or a cancelled context makes retention.ActiveCommits expire
// commits the rules keep, or fail: the suite checks each of these, and
// compares ActiveCommits over the adapter with ActiveCommits over the
// fixture on random histories. The suite's own tests prove that every check
// fails on an adapter with the bug it targets.
//
// A store that derives commit IDs from their content, as lakeFS does,
// cannot keep a fixture's IDs: its host loads the fixture through its own
// write path (in lakeFS, graveler's AddCommit for each commit, in the
// fixture's order, with its parents' new IDs; SetBranch or CreateBranch for
// the branches), with no raw writes to the key-value store, records the ID
// each commit got, and reports them with Harness.IDs. The suite then
// expects the store's IDs wherever the fixture has its own, and still
// catches every bug above, plus a host that writes the fixture's parent or
// HEAD IDs, or reports IDs wrongly.
//
// The fixtures follow lakeFS's data model: each commit has a metarange ID,
// and a version (merges of version 0 list their main parent last). A store
// without them runs the suite with options, and its adapter sets the
// fields as they say — MetaRangeID empty, Version 1 with the main parent
// first — and the suite still catches every bug above that such a store
// can have, plus an adapter that leaves Version zero:
//
//	sourcetest.Run(t, load, sourcetest.WithoutMetaRanges(), sourcetest.WithoutVersions())
package sourcetest
