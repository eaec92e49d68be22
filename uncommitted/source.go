package uncommitted

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"time"
)

// AddressType says how an Entry's PhysicalAddress is to be read. The zero
// value is Relative; any value but Relative and Full is an error
// (ErrUnknownAddressType). lakeFS numbers its address types differently
// (BY_PREFIX_DEPRECATED = 0, RELATIVE = 1, FULL = 2): a host that holds
// lakeFS's values converts them with AddressTypeFromLakeFS.
type AddressType int

const (
	// Relative addresses are keys relative to the repository's storage
	// namespace, such as "data/<slice>/<xid>".
	Relative AddressType = iota
	// Full addresses are complete URIs, such as "s3://bucket/repo/data/x".
	// Only those under the repository's storage namespace are exported.
	Full
)

// String returns "relative", "full", or the number for an unknown type.
func (t AddressType) String() string {
	switch t {
	case Relative:
		return "relative"
	case Full:
		return "full"
	}
	return "AddressType(" + strconv.Itoa(int(t)) + ")"
}

// ErrUnknownAddressType is wrapped by the error of Prepare for an entry
// whose AddressType is neither Relative nor Full, and by that of
// AddressTypeFromLakeFS for a value lakeFS does not define. Guessing
// could drop a live object from the export.
var ErrUnknownAddressType = errors.New("uncommitted: unknown address type")

// Entry is one staged change of a branch, as the host's staging area holds it.
type Entry struct {
	// Key is the logical path of the object in the branch; entries of a
	// branch come in ascending Key order.
	Key string
	// PhysicalAddress is where the object's data lives.
	PhysicalAddress string
	// AddressType says whether PhysicalAddress is Relative or Full; any
	// other value fails the Prepare call. A store whose addresses are all
	// relative keeps no type and leaves it zero (Relative); it proves its
	// Source with sourcetest.RelativeOnly.
	AddressType AddressType
	// CreationDate is when the object was staged; exported as Unix seconds.
	CreationDate time.Time
	// Tombstone marks a staged deletion: it references no data and is
	// not exported. A store that unstages by deleting the entry has none.
	Tombstone bool
}

// Source is the host's staging area of one repository.
//
// Branches yields the IDs of every branch, hidden ones included, in
// ascending order, starting at the first ID >= from. Uncommitted yields the
// staged entries of one branch in ascending Key order, starting at the first
// key >= from; it yields an error wrapping ErrBranchNotFound when the branch
// no longer exists, and Prepare then skips the branch. Both stop when the
// consumer stops, and both should honour ctx.
type Source interface {
	Branches(ctx context.Context, from string) iter.Seq2[string, error]
	Uncommitted(ctx context.Context, branch, from string) iter.Seq2[Entry, error]
}

// ErrBranchNotFound is returned (wrapped or not) by a Source for a branch
// that was deleted during a run. Prepare skips such a branch: a deleted
// branch's staging area protects nothing.
var ErrBranchNotFound = errors.New("uncommitted: branch not found")
