package sweep

import (
	"context"
	"fmt"
	"iter"
	"slices"
)

// Parts is the committed keep set as immutable, named parts: lakeFS's
// ranges, whose ID is the hash of their content. With Parts, a run reads
// only the parts that appeared or left since the previous run (see the
// package documentation, "Clean and optimized runs"): a key's reference
// count, the number of parts that hold it, is kept in the run's records, and
// a key is committed while its count is above zero.
//
// A part ID names the same keys for ever: Mark remembers what a part
// contributed by its ID alone, and takes it back, when the part leaves the
// set, by opening it again. A host must never give an ID to other keys.
// Mark checks what it can: a part read again when it left the set must
// yield the keys it yielded when it came (their number and a checksum, kept
// in the records); when it does not, or cannot be opened any more, the run
// counts every current part again instead.
type Parts struct {
	// IDs are the parts of the committed keep set, in any order; a repeated
	// ID counts once. An ID is a non-empty string of at most MaxPartID
	// bytes.
	IDs []string
	// Open yields the keys of the part id, strictly ascending (byte
	// order), each relative to the namespace as Committed's keys are: a key
	// out of order, a key Committed would refuse, or one longer than 64 KiB
	// fails the run with ErrInvalidInput, and an error of the sequence
	// fails it too, never read as a shorter part. Mark opens the parts of
	// IDs, and the previous run's parts that are not in IDs any more; it
	// may hold several sequences open at once (at most the merge fan-in,
	// 64, each with a batch of up to 32 KiB of its keys, outside the memory
	// budget), and reads them from one goroutine at a time unless
	// ReadAhead says otherwise, while Uncommitted is read on another (see
	// Inputs.Parts). Open must be safe to call again for the same ID. A
	// panic of Open or of a sequence comes out of Mark, on its caller's
	// goroutine, with ReadAhead too.
	Open func(ctx context.Context, id string) iter.Seq2[string, error]
	// Version names the rules by which Open spells a part's keys from
	// what the part holds (how addresses become keys, the namespace they
	// are relative to, and their versions): a run remembers a part's
	// contribution by its ID, so new rules must come with a new Version.
	// A run whose previous run's Version differs counts every part.
	// Optional; at most MaxPartID bytes.
	Version string
	// ReadAhead is how many parts Mark may read at once: of each group of
	// parts it merges, it pulls every part's first batch of keys (which,
	// for a part behind a store, waits for the part's read) from up to
	// ReadAhead goroutines, then merges the group from one. It holds no
	// more than without: one batch a part of the group. 1 or less: one part
	// at a time, as the merge first pulls it. Above 1, Open and distinct
	// sequences must be safe for concurrent use (each sequence is still
	// read by one goroutine at a time).
	ReadAhead int
}

// MaxPartID bounds the length of a part ID.
const MaxPartID = 1024

// Changes is what a host that cannot name parts hands over instead of its
// whole committed keep set: the committed keys added to it and removed from
// it since the run Since. Mark uses them only when it starts from that very
// run (WithPrevious(Since)) and that run's records hold a usable keep index
// of a flat keep set counted as a multiset (one given as Committed, by this
// version); otherwise it reads Committed in full, so a host gives both:
// neither sequence is read unless used.
//
// The flat keep set is a multiset: a key counts once for each time
// Committed yields it. Added and Removed must be exactly the multiset
// difference between what Committed yielded for the run Since and what it
// yields now: a key yielded twice then and once now is removed once, and
// stays committed. Each time Added yields a key counts +1, each time
// Removed does −1, and a key in both cancels. A change that takes a count
// below 0 (removing a key more times than it was given) contradicts the
// records and fails the run with ErrInvalidInput: the next run then runs
// clean, and reads Committed. A wrong change the records cannot show (a
// key removed as many times as it was given while Committed still yields
// it) is not seen: the key leaves the keep set, and its object is deleted,
// live or not.
type Changes struct {
	// Since is the run ID the changes are relative to.
	Since string
	// Added and Removed yield keys in any order, spelled as Committed's,
	// a key as many times as it was added or removed.
	Added, Removed iter.Seq2[string, error]
}

// checkInputs refuses a combination of inputs Mark cannot use.
func checkInputs(in Inputs) error {
	switch {
	case in.Uncommitted == nil:
		return fmt.Errorf("%w: nil input iterator", ErrInvalidInput)
	case in.Committed == nil && in.Parts == nil:
		return fmt.Errorf("%w: nil input iterator", ErrInvalidInput)
	case in.Committed != nil && in.Parts != nil:
		return fmt.Errorf("%w: both Committed and Parts", ErrInvalidInput)
	case in.Changes != nil && in.Parts != nil:
		return fmt.Errorf("%w: Changes with Parts (parts are their own changes)", ErrInvalidInput)
	}
	if p := in.Parts; p != nil {
		if p.Open == nil {
			return fmt.Errorf("%w: Parts without Open", ErrInvalidInput)
		}
		if len(p.Version) > MaxPartID {
			return fmt.Errorf("%w: parts version of %d bytes", ErrInvalidInput, len(p.Version))
		}
		for _, id := range p.IDs {
			if id == "" || len(id) > MaxPartID {
				return fmt.Errorf("%w: part ID of %d bytes", ErrInvalidInput, len(id))
			}
		}
	}
	if c := in.Changes; c != nil {
		if c.Added == nil || c.Removed == nil {
			return fmt.Errorf("%w: Changes with a nil sequence", ErrInvalidInput)
		}
		if c.Since == "" {
			return fmt.Errorf("%w: Changes without Since", ErrInvalidInput)
		}
	}
	return nil
}

// partIDs returns the distinct IDs of p, sorted.
func partIDs(p *Parts) []string {
	ids := slices.Clone(p.IDs)
	slices.Sort(ids)
	return slices.Compact(ids)
}
