package lakegc

import (
	"context"
	"iter"
	"time"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// Host is what a versioned store gives a GC cycle: its staging area, its
// commits, and the addresses of the commits the rules keep. A store that
// implements every interface on one type passes that value in each field:
//
//	lakegc.Host{Staging: store, Commits: store, Committed: store}
//
// The conformance suites uncommitted/sourcetest and retention/sourcetest
// prove a host's Staging and Commits.
//
// A host that runs the export or the retention itself — lakeFS, through its
// prepare_uncommited and prepare_commits calls — sets Export instead of
// Staging, or Active instead of Commits: exactly one of each pair.
type Host struct {
	// Staging is the repository's staging area, which Collect exports.
	// Required unless Export is set.
	Staging uncommitted.Source
	// Export is an uncommitted export the host runs itself, instead of
	// Collect's export of Staging. Collect records the export's start, the
	// anchor of the cutoff, before it calls Export. Copies must then be nil.
	Export Exporter
	// Commits are the repository's branches and commits, to which Collect
	// applies the retention rules (Config.Rules, or the namespace's rules
	// files). A Commits that is also retention.Tags gives the extended
	// rules its tags, and one that is retention.DefaultBranch its default
	// branch (needed by the stale-branch rule); one that is neither is
	// unchanged. Required unless Active is set.
	Commits Commits
	// Active computes the kept commits itself, instead of Collect's
	// retention over Commits; Collect then reads no rules.
	Active ActiveCommitter
	// Committed reads the addresses of the commits the rules keep.
	// Required. One that implements CommittedParts (lakeFS's ranges) is
	// read through it: an optimized cycle then reads only the parts that
	// changed. One that implements CommittedChanges (a host without parts)
	// is asked what changed since the previous run: an optimized cycle
	// that can use them reads them in place of every address.
	Committed Committed
	// Copies, if set, is the host's table of shallow copies: their
	// addresses are exported after every branch, so that a rename racing
	// the export keeps its object. Collect drops the records older than
	// the tracker's TTL before a new export, and refuses an export that
	// ran that long (ErrStaleExport). Only with Staging: a host that runs
	// its own export adds its copies to it.
	Copies *copytrack.Tracker
}

// Commits is the commit side of a repository, as retention reads it.
type Commits interface {
	// Heads yields every branch whose HEAD is a commit, with that commit's
	// ID, hidden branches included. A branch without a commit is left out.
	Heads(ctx context.Context) iter.Seq2[retention.Branch, error]
	// List yields every commit once, in any order.
	List(ctx context.Context) iter.Seq2[retention.Commit, error]
	// Get returns one commit, also one made after List began, and an error
	// for a commit that does not exist.
	Get(ctx context.Context, id string) (retention.Commit, error)
}

// Committed is how a host lists the data of commits.
type Committed interface {
	// CommittedAddresses yields the physical address of every object of
	// every given commit, in any order, duplicates allowed: all commits
	// at once, so that a host whose commits share parts (lakeFS's ranges)
	// reads each part once; each ActiveCommit's MetaRangeID is what
	// Commits gave for it, empty for a store without metaranges, which
	// finds a commit's objects by CommitID. An address is relative to the
	// namespace, or a full URI, judged by the rule of the package documentation
	// ("Namespace identity"): one under Config.Namespace keeps every key
	// its object may have, one that names the namespace in another
	// spelling fails the cycle (ErrNamespaceMismatch), any other is
	// counted as foreign and keeps only its tail of a lakeFS key shape.
	CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error]
}

// CommittedChanges is a Committed that can say what changed in its
// committed addresses since an earlier run (a host without parts; lakeFS's
// are CommittedParts, which takes precedence). Collect calls
// CommittedChanges on every run, after the active commits and before the
// mark, with since the run an optimized mark starts from ("" for a clean
// run) and run the ID of this run (the since of a later one). A host that
// keeps no state for since, and every host for since "", returns nil
// Changes and a nil error: the mark then reads CommittedAddresses in full.
//
// The changes are counted, not a set: Added and Removed must be exactly the
// multiset difference between what CommittedAddresses yielded for the
// active commits of run since and what it yields for active now. An
// address CommittedAddresses yields n times more now than then is in Added
// n times; one it yields n times fewer, in Removed n times. An address of
// two commits counts twice, and a relative and a full address of one
// object are two addresses. Collect makes each address of Added and
// Removed the keys it makes of CommittedAddresses' (see Committed: a full
// address under the namespace gives its relative keys, a foreign one
// what it keeps of it), and Mark counts each key +1 each time Added gives
// it and −1 each time Removed does, from its count in run since's keep
// index (see sweep.Changes); a key is kept while its count is above 0. So a
// key that two addresses hold stays kept when one of them is removed.
//
// A host that gets this wrong can delete live data. An address in Removed
// that CommittedAddresses still yields as often, or one it yields more
// often left out of Added, leaves its keys counted lower than the
// addresses that hold them; when a count reaches 0 while an address still
// holds the key, its object is marked and deleted: the mark no longer
// reads CommittedAddresses, and cannot tell. A host unsure of its changes
// returns nil instead.
//
// What Collect checks: an error, or Changes whose Since is not since (or
// any for since ""), or a nil Added or Removed, fails the cycle before
// anything is deleted. Mark uses the changes only when it starts from the
// run since and that run counted a flat keep set the same way (its keep
// index is a multiset, not the set of a version before this one); otherwise
// it reads CommittedAddresses in full, and the changes are not read. A
// count that falls below 0 (an address removed more times than it was
// given) fails the mark with sweep.ErrInvalidInput, and the next cycle is
// clean. A wrong change that keeps every count at or above 0 is not seen.
type CommittedChanges interface {
	Committed
	CommittedChanges(ctx context.Context, since, run string, active []retention.ActiveCommit) (*sweep.Changes, error)
}

// Exporter is an uncommitted export that a host runs itself.
type Exporter interface {
	// Export runs the export to its end and returns it. It is called once
	// per cycle, after Collect recorded the export's start: every object
	// staged before that start and still staged when Export returns must be
	// in HostExport.Addresses. An error, or a return after ctx ended, fails
	// the cycle before any committed data is read.
	Export(ctx context.Context) (*HostExport, error)
}

// HostExport is a finished export of a host.
type HostExport struct {
	// RunID names the export in the report (Report.ExportRunID).
	RunID string
	// Location, if known, is the URI of the export's files.
	Location string
	// Addresses yields the address of every object the export found
	// staged, relative to the namespace or a full URI (judged as
	// Committed's are), and ends with an error if it cannot yield them
	// all. Required; the mark reads it once, after the active commits.
	Addresses iter.Seq2[string, error]
}

// ActiveCommitter is a host that decides itself which commits its rules
// keep.
type ActiveCommitter interface {
	// ActiveCommits returns the commits kept at time now, at least one: a
	// repository always keeps its branches' heads, so an empty answer is
	// taken for a lost one. Collect calls it after the export.
	ActiveCommits(ctx context.Context, now time.Time) (*HostCommits, error)
}

// HostCommits is the kept commits a host computed.
type HostCommits struct {
	// RunID, if set, names the GC run (Report.RunID) and so the folder of
	// the mark's report: lakeFS's prepare_commits run ID, for example.
	// Empty: Collect makes one.
	RunID string
	// Key, if set, is the host's commits report, relative to the
	// namespace. Empty: Collect writes one.
	Key string
	// Active are the kept commits, given to Committed.CommittedAddresses.
	Active []retention.ActiveCommit
}
