package lakegc

import (
	"context"
	"iter"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/retention"
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
type Host struct {
	// Staging is the repository's staging area. Required.
	Staging uncommitted.Source
	// Commits are the repository's branches and commits. Required.
	Commits Commits
	// Committed reads the addresses of the commits the rules keep.
	// Required.
	Committed Committed
	// Copies, if set, is the host's table of shallow copies: their
	// addresses are exported after every branch, so that a rename racing
	// the export keeps its object. Collect drops the records older than
	// the tracker's TTL before a new export, and refuses an export that
	// ran that long (ErrStaleExport).
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
	// reads each part once. An address is relative to the namespace, or a
	// full URI: a full one under Config.Namespace is made relative, any
	// other full one is left out (its object is not in the namespace).
	CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error]
}
