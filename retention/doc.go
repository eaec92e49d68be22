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
//     is no branch's HEAD and the main parent of no commit.
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
// already made active everything further that this walk could. lakeFS stops
// before deciding the meeting commit, which expires the fork point of a
// short-retention branch whose fresh HEAD forks from a commit that a
// long-retention branch reached only through an old child; ActiveCommits keeps
// it.
//
// [WriteCommitsCSV] writes the result where lakeFS's GC client reads it, under
// a run ID from [NewRunID].
package retention
