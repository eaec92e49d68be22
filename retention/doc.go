// Package retention decides which commits garbage collection keeps.
//
// [Rules] give every branch a number of days (its own, or the repository's
// default); a [RulesStore] keeps them in the repository's bucket in the
// protobuf form lakeFS writes, and [Rules] also reads and writes the JSON form
// of the lakeFS API.
//
// [ActiveCommits] applies the rules to the commit graph, with the semantics of
// lakeFS (treeverse/lakeFS#1932):
//
//   - Only main ancestry is followed. The main parent is Parents[0]; for commits
//     of Version < 1 (before lakeFS's ParentSwitchVersion) it is the last parent.
//   - The walks start at every branch HEAD and at every dangling commit: one that
//     is no branch's HEAD and the main parent of no commit. For a version-0
//     merge of three or more parents, lakeFS's dangling test counts Parents[1]
//     as the parent, not the last one its walk follows; a commit dangling
//     under either reading starts a walk, so both readings' walks are run.
//   - A branch HEAD is always active. With T = now.AddDate(0, 0, -days), each
//     step of the walk from a commit c to its main parent p makes p active iff
//     c.CreationDate is after T. The walk goes over the whole ancestry: creation
//     dates need not grow along history, so a walk never stops at the first old
//     commit.
//   - A dangling commit d uses the default days and is active iff
//     d.CreationDate is after T, as if it had a child created at its own time.
//   - A commit is active when any walk makes it active.
//
// The walks run from the oldest threshold to the newest. A walk that reaches a
// commit an earlier walk went through first decides whether that commit is
// active, then stops: the earlier walk, whose threshold was older or equal,
// already made active everything further that this walk could.
//
// The zero [Rules] are no rules: [ActiveCommits] refuses them with
// [ErrNotFound], and a GC keeps every commit.
//
// # Differences from lakeFS
//
// Every commit lakeFS keeps, ActiveCommits keeps; it keeps more where lakeFS
// departs from the rules above. TestActiveCommitsKeepsWhatLakeFSKeeps checks
// this against a model of lakeFS's code on 17,000 random repositories, and
// counts the differences: about half of those repositories, dense in forks,
// merges and dangling commits, have some, and the first cause below accounts
// for most of them.
//
//   - lakeFS runs its walks in commit ID order (branches sorted by HEAD ID,
//     merged with the dangling commits), not by threshold, and stops a walk at
//     a commit an earlier walk passed with an older or equal threshold before
//     deciding it. A fork point whose only fresh child is on the later walk
//     expires, most often with equal retention: main and feature keep 30
//     days, feature's HEAD a (40 days old) and main's HEAD m (1 day old) are
//     both children of F; a sorts before m, so feature's walk passes F
//     without keeping it and main's walk stops at F. Had feature's HEAD been
//     z, lakeFS would keep F. ActiveCommits keeps F either way. The same
//     happens with different retention: main keeping 30 days with a HEAD 40
//     days old, feature keeping 1 day with a HEAD an hour old, F their fork
//     point; lakeFS expires F when main's HEAD ID sorts first.
//   - lakeFS compares creation times truncated to microseconds, so a commit
//     less than a microsecond after a threshold counts as at it.
//   - For a version-0 merge of three or more parents, lakeFS starts no walk at
//     Parents[1] and one at the last parent (see above).
//
// lakeFS also returns no error for some failures of its commit source
// (ActiveCommits returns every one).
//
// Besides the lakeFS model, the tests compare ActiveCommits with a brute-force
// model that walks the whole ancestry of every starting point, on random
// histories (TestActiveCommitsMatchesModel).
//
// [WriteCommitsCSV] writes the result where lakeFS's GC client reads it, under
// a run ID from [NewRunID]. [ReadCommitsCSV] reads such a report back —
// lakeFS's own too, whose expired commits it leaves out — refusing any other
// content with [ErrInvalidCommitsCSV].
//
// # Memory and cost
//
// ActiveCommits keeps no map entry or heap object per commit. Commit and
// metarange IDs are interned in a chunked byte arena, a lowercase hexadecimal
// ID (lakeFS writes hex SHA-256 digests) as the bytes it spells, half its
// length; parents are 32-bit indexes and dates two integers. That is about 110 bytes per
// commit for lakeFS's IDs, plus the result; the IDs of one call may take up to
// 4 GiB, beyond which it fails rather than guess. Most of its time goes to
// cache misses on the ID hash table, two lookups per commit (the commit and
// its main parent). Figures for a million commits are in the module's
// BENCHMARKS.md.
//
// # Storage prefix and options
//
// lakeFS keeps its own files under a folder of the storage namespace,
// DefaultStoragePrefix ("_lakefs") unless configured. The packages of this
// module take it one way: a function that names or reads one run's files
// takes it as an argument next to the run ID ([WriteCommitsCSV]); a call
// configured by options takes [WithStoragePrefix] ([NewRulesStore]). In
// both, "" means DefaultStoragePrefix.
package retention
