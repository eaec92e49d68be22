package lakegc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"iter"
	"slices"

	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// CommittedParts is a Committed whose data is immutable, named parts, as
// lakeFS's commits are sets of ranges. When Host.Committed implements it,
// Collect gives the mark the parts instead of every address (see
// sweep.Parts): an optimized cycle then reads only the parts that appeared
// or left since the previous run, and the others not at all.
type CommittedParts interface {
	Committed
	// CommittedParts returns the parts of the given commits (IDs, and Open,
	// which yields a part's addresses). An ID names the same addresses for
	// ever. A part's addresses are spelled as CommittedAddresses' are,
	// relative or full; the relative ones must come strictly ascending (byte
	// order), and Open must serve the parts of earlier calls too, while a
	// run's records may name them (sweep.Parts). Collect reads a part twice
	// (once for the full addresses and the relative ones it must also keep
	// cleaned, whose keys it sorts in memory; once for the rest, in order),
	// so a part's full addresses should be few; two reads that differ in
	// those addresses fail the cycle with ErrInvalidInput. The parts'
	// Version names the host's rules of spelling a part's addresses: new
	// rules, a new Version (the next cycle then reads every part). The
	// parts' ReadAhead is the mark's (sweep.Parts.ReadAhead): above 1, Open
	// and distinct sequences must be safe for concurrent use, and Collect
	// reads up to that many parts at once, each still from one goroutine
	// at a time.
	CommittedParts(ctx context.Context, active []retention.ActiveCommit) (*sweep.Parts, error)
}

// committedParts is the mark's Parts of a host's parts: each part's keys,
// judged by the namespace's rule as Committed's addresses are, ascending.
func (c *cycle) committedParts(ctx context.Context, cp CommittedParts) (*sweep.Parts, error) {
	hp, err := cp.CommittedParts(ctx, c.active)
	if err != nil {
		return nil, fmt.Errorf("committed parts: %w", err)
	}
	if hp == nil || hp.Open == nil {
		return nil, fmt.Errorf("%w: the host's committed parts have no Open", ErrInvalidInput)
	}
	// The keys of a part follow from the host's version of it, the rules
	// below and the namespace its full addresses are judged against: a
	// change of any of them makes the next run count every part.
	v := sha256.Sum256([]byte(partKeyRules + "\x00" + c.ns.String() + "\x00" + hp.Version))
	return &sweep.Parts{IDs: hp.IDs, Version: hex.EncodeToString(v[:]), ReadAhead: hp.ReadAhead, Open: func(ctx context.Context, id string) iter.Seq2[string, error] {
		return c.partKeys(ctx, hp, id)
	}}, nil
}

// partKeyRules names the rules by which partKeys spells a part's keys (see
// relativeAddresses); it changes with them.
const partKeyRules = "lakegc part keys 1"

// irregular reports whether address a is not kept by its own spelling
// alone: a full address, or a relative one that lakeFS may also resolve
// cleaned.
func (c *cycle) irregular(a string) bool {
	if nsaddr.IsFull(a) {
		return true
	}
	_, cleaned := c.ns.CleanedRelative(a)
	return cleaned
}

// partKeys yields the keys of the host's part id, ascending: the keys of its
// irregular addresses, found first and sorted, merged with its relative
// addresses as they come. The two reads of the part must find the same
// irregular addresses (a hash of them, in order): a second read with one
// the first did not have would lose that address's keys, so the part fails.
// Distinct sequences may be read concurrently when the host's Open allows
// it: what they share (the namespace, the count of foreign addresses) is
// safe for concurrent use.
func (c *cycle) partKeys(ctx context.Context, hp *sweep.Parts, id string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var extra []string
		first, second := fnv.New64a(), fnv.New64a()
		note := func(h hash.Hash64, a string) {
			h.Write([]byte(a))
			h.Write([]byte{0})
		}
		odd := func(yield func(string, error) bool) {
			for a, err := range hp.Open(ctx, id) {
				if err != nil || c.irregular(a) {
					if err == nil {
						note(first, a)
					}
					if !yield(a, err) || err != nil {
						return
					}
				}
			}
		}
		for k, err := range c.relativeAddresses(ctx, "committed part "+id, odd) {
			if err != nil {
				yield("", err)
				return
			}
			extra = append(extra, k)
		}
		slices.Sort(extra)
		extra = slices.Compact(extra)
		for a, err := range hp.Open(ctx, id) {
			if err != nil {
				yield("", fmt.Errorf("committed part %s: %w", id, err))
				return
			}
			if c.irregular(a) {
				note(second, a)
			}
			if nsaddr.IsFull(a) {
				continue // its keys are in extra
			}
			for len(extra) > 0 && extra[0] <= a {
				if extra[0] < a && !yield(extra[0], nil) {
					return
				}
				extra = extra[1:]
			}
			if !yield(a, nil) {
				return
			}
		}
		if first.Sum64() != second.Sum64() {
			yield("", fmt.Errorf("%w: committed part %s: its two reads differ in their full or cleaned addresses", ErrInvalidInput, id))
			return
		}
		for _, k := range extra {
			if !yield(k, nil) {
				return
			}
		}
	}
}
