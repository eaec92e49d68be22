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
// # Extended rules
//
// lakeFS's rules are a default number of days and a number per branch.
// [Extended] rules, lakegc's own, add to them; [ActiveCommitsExtended]
// applies both, and with no extended rule set it is [ActiveCommits], lakeFS's
// semantics above. They live in their own file beside lakeFS's,
// <prefix>/retention/gc/rules/lakegc.json ([ExtendedStore]): lakeFS keeps
// reading its own file and never reads this one, so a repository's lakeFS
// and its rules are unchanged by them. The file is versioned JSON
// ({"version": 1, ...}, [ExtendedVersion]); an unknown field, a negative
// number, a pattern that does not compile, more than [MaxBranchRules] rules
// or [MaxExtendedSize] bytes are errors wrapping [ErrInvalidRules], and
// reading it allocates at most about that size, plus the compiled patterns:
// their counted repetitions are sized before they are compiled, and
// patterns beyond [MaxPatternProgram] instructions each or [MaxRulesProgram]
// in all are refused too.
//
// The rules, and what each can do to what is kept:
//
//   - KeepTags: a tagged commit is kept, and its ancestry is walked as a
//     branch HEAD with the default retention is (lakeFS issue #7621: lakeFS
//     expires a tagged commit like any other). Keeps more, never less. The
//     tags come from the commit source if it is also [Tags]; a source
//     without tags is unchanged. A tag on a commit the source cannot return
//     is an error, as a missing HEAD is. Off in the zero [Extended]; on in
//     the JSON form unless "keep_tags": false, and so in the lakegc command.
//   - Branch rules ([BranchRule]), by exact name or by a regular expression
//     matching the whole name (Go's RE2: matching is linear in the name),
//     the first matching rule applying. RetentionDays replaces the default
//     for the matched branches lakeFS's rules do not name (lakeFS's own
//     branch rule always wins); like a lakeFS branch rule it may keep less
//     than the default. KeepLast keeps a branch's HEAD and the main parents
//     before it, KeepLast commits in all, whatever their age: keeps more.
//     A merge counts as one commit; the commits it brought in are neither
//     counted nor kept by KeepLast (the merge's own objects are). Only the
//     first matching rule applies, whole: a later rule matching the same
//     branch adds neither its days nor its count.
//   - StaleBranchDays: the HEAD of a branch whose HEAD commit is
//     StaleBranchDays days old or more is no longer kept for being a HEAD;
//     it is judged by its date against the branch's retention, as a
//     dangling commit is. This is the one rule that only ever deletes more:
//     a branch someone still reads but has not committed to loses its HEAD's
//     objects once they are older than its retention. It is off unless set,
//     it never applies to the repository's default branch, and
//     [ActiveCommitsExtended] refuses it for a source that does not name
//     that branch ([DefaultBranch]), or names one the branches do not
//     include, rather than guess. The age is the HEAD commit's, not the
//     branch's: a branch created today at a commit older than
//     StaleBranchDays is stale at once. A branch's KeepLast still applies
//     to a stale branch: give a branch KeepLast 1 to exempt it.
//
// The kept set is the union of what each rule keeps: the walks of lakeFS's
// rules (with the stale HEADs unprotected and RetentionDays applied), the
// walks from tags, and the KeepLast chains. TestActiveCommitsExtendedMatchesModel
// compares it with a brute-force model on random histories with random
// combinations of every rule, and TestExtendedOnlyKeepsMore checks that tags
// and KeepLast never drop a commit lakeFS's rules keep and that the stale
// rule never keeps one they do not nor drops the default branch's HEAD.
//
// Without lakeFS's rules (the zero [Rules]) a GC keeps every commit, as
// lakeFS does, whatever the extended rules say.
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
