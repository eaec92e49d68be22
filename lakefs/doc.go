// Package lakefs is the home of lakegc's lakeFS parts — its API client
// (lakefs/api), its metarange reader (lakefs/metarange), its blockstore
// settings (lakefs/blockstore), the host that collects a running lakeFS's
// repository through its API (lakefs/host, as a library) and the lakegc
// command over it (lakefs/cmd/lakegc) — and the recipe for hosting
// lakegc.Collect inside a lakeFS process, as a fork of lakeFS does. Its one function, [AddressNamespace], spells a
// repository's namespace the way lakeFS spells full addresses in it.
//
// # An in-process lakeFS host
//
// A fork calls lakegc.Collect with a lakegc.Host over its own graveler
// (pkg/graveler of lakeFS's source; the names below are lakeFS's):
//
// Staging (uncommitted.Source). Branches yields every branch, hidden ones
// included: Graveler.ListBranches(ctx, repo, graveler.WithShowHidden(true))
// (without the option, hidden branches — graveler.WithHidden(true) at
// CreateBranch, used by lakeFS's imports and by tools — are left out, and
// their staged objects deleted). A branch's staging area is its
// Branch.StagingToken and every token of Branch.SealedTokens: lakeFS seals
// the staging token when a commit starts and drops the sealed ones when it
// succeeds, so while a commit runs (or after one failed) staged objects live
// under sealed tokens. Read each token with
// Graveler.StagingManager.List(ctx, token, batchSize), in key order; a nil
// Value is a tombstone (Entry.Tombstone), any other is a serialized
// catalog.Entry (catalog.ValueToEntry) whose Address and AddressType
// (uncommitted.AddressTypeFromLakeFS) make the Entry. Tokens can hold the
// same key, and a Source's keys are strictly ascending per branch, so give
// each token its own ID in Branches rather than merging them (the value a
// newer token hides is the one an unfinished commit is writing): the
// branch's ID, a NUL byte (no branch ID has one, so the IDs keep the
// branches' order) and the token itself, the IDs of a branch sorted.
// Uncommitted then lists the token its ID names, as it was when Branches
// listed it, even if a commit sealed or dropped it since (a dropped token's
// entries are in the commit; a token made after the listing holds only
// objects staged after the export began, which the cutoff keeps). Reading
// the staging manager, not Graveler.DiffUncommitted, also keeps the staged
// re-uploads identical to a committed object, which lakeFS's own export and
// its diff leave out. A branch deleted during the run answers
// graveler.ErrBranchNotFound: yield uncommitted.ErrBranchNotFound.
//
// Commits (lakegc.Commits). Heads: the same ListBranches, each
// BranchRecord's BranchID and CommitID. List: RefManager.ListCommits (or
// GCCommitIterator). Get: Graveler.GetCommit, an error for a missing commit.
// A retention.Commit takes the commit's CreationDate, MetaRangeID, Parents
// and Version (graveler.CommitVersionInitial is 0: a merge's main parent
// last; CommitVersionParentSwitch is 1: first). Prove the adapter with
// retention/sourcetest: lakeFS derives commit IDs from their content, so
// load each fixture through RefManager.AddCommit (which, unlike
// Graveler.AddCommit, takes a commit without parents), in the fixture's
// order with its parents' new IDs, then RefManager.CreateBranch or
// SetBranch with graveler.Branch{CommitID, StagingToken:
// graveler.GenerateStagingToken(repo, branch), Hidden}, and report the IDs
// AddCommit returned through sourcetest.Harness.IDs — no raw writes to the
// key-value store. A host may instead set Active and let lakeFS apply its
// rules: Graveler.SaveGarbageCollectionCommits returns the run's
// CommitsCSVLocation, the report the lakegc command reads.
//
// Committed (lakegc.Committed): the kept commits' metaranges, read once per
// range with package lakefs/metarange through the fork's own storage;
// CommittedManager.List(ctx, storageID, namespace, metaRangeID) also works
// but reads every commit's ranges in full, the ranges they share again and
// again.
//
// Config. Bucket is the namespace opened as package namespace or
// blockstore.Config.OpenBucket open it. Namespace must be spelled as the
// block adapter spells the full addresses it hands out, or full addresses
// under it will not count as the repository's and their objects will be
// deleted: ask the adapter — the block.Adapter's ResolveNamespace(storageID,
// storageNamespace, "", block.IdentifierTypeRelative) and the result's
// Format(), without its trailing "/" — or use [AddressNamespace]. On S3,
// GCS and Azure that is the repository's namespace itself; on the local
// blockstore it is not: for the namespace "local://repo1" over
// blockstore.local.path /var/lakefs, lakeFS's addresses read
// "local:///var/lakefs/repo1/…", and a Namespace of "local://repo1" loses
// every linked object. (lakeFS's object API, formatting a linked object's
// stored full address once more, even shows the blockstore's path twice,
// "local:///var/lakefs/var/lakefs/repo1/…", which the lakegc command
// accepts too; a host reading graveler's values sees addresses as stored.)
//
// # Installing the command, and releases
//
// This folder is its own module, github.com/lakegc/lakegc/lakefs, which
// requires the library's module, github.com/lakegc/lakegc, at the version
// released with it, and replaces and excludes nothing (go install refuses a module
// whose go.mod has a replace or exclude directive). Once both are tagged:
//
//	go install github.com/lakegc/lakegc/lakefs/cmd/lakegc@latest   # or @v0.1.0
//
// In a checkout, the repository's go.work joins the modules: go build,
// go vet and go test from the top folder (./... ./lakefs/...) build this
// module against the library beside it, whatever version go.mod names. With
// GOWORK=off this module builds against the published version its go.mod
// requires; before that version is tagged it cannot (the go command reports
// the version as unavailable, or a missing go.sum entry for it), so use the
// workspace. A checkout build in the workspace records no commit
// ("lakegc version" prints "(devel)"); one installed at a version prints that
// version.
//
// The release rule: the two modules are tagged together, at the same
// version, the library first. Tag the top folder's commit vX.Y.Z and
// publish the tag; then, in this folder, set go.mod's requirement of
// github.com/lakegc/lakegc to vX.Y.Z and run GOWORK=off go mod tidy, which
// records the library's checksum in go.sum (this module's go.sum needs it
// even to build: the library's module could hold these packages' paths);
// commit, tag that commit lakefs/vX.Y.Z, and publish it. A lakefs/ tag whose
// go.mod names an untagged library version, or whose go.sum lacks its
// checksum, cannot be installed. Until v0.1.0 is tagged, go.mod already
// names it.
package lakefs
