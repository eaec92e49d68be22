package linkaddr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Redeemer remembers which addresses were already linked, so each signed
// address links once. Redeem reports whether address is redeemed for the
// first time, and records it; until is the wall-clock time after which the
// address fails Verify anyway, so the record may be dropped after it. A
// Redeemer backed by the host's database makes single use hold across
// processes. Implementations must be safe for concurrent use.
type Redeemer interface {
	Redeem(ctx context.Context, address string, until time.Time) (first bool, err error)
}

// VerifyOnce is Verify followed by the redemption of the address in r: of any
// number of calls with the same valid address, concurrent or not, exactly one
// succeeds; the others fail with ErrInvalid. Addresses that fail Verify are
// not redeemed. An error of r is returned wrapped, and not as ErrInvalid.
// The link must then be staged by its Deadline: see Stage.
func (s *Signer) VerifyOnce(ctx context.Context, r Redeemer, repository, branch, path, signed string) (Link, error) {
	if r == nil {
		return Link{}, errors.New("linkaddr: nil Redeemer")
	}
	l, remaining, err := s.verify(repository, branch, path, signed)
	if err != nil {
		return Link{}, fmt.Errorf("linkaddr: verify: %w", err)
	}
	// until is on the wall clock even when the Signer has its own clock.
	first, err := r.Redeem(ctx, l.Address, time.Now().Add(remaining))
	if err != nil {
		return Link{}, fmt.Errorf("linkaddr: redeem: %w", err)
	}
	if !first {
		return Link{}, fmt.Errorf("linkaddr: redeem: %w: address already linked", ErrInvalid)
	}
	return l, nil
}

// Stage runs write, the host's staging write of a verified link, and checks
// on the Signer's clock that it returned by l.Deadline. Past the deadline the
// garbage collector may have deleted the object (see "Staging in time" in
// the package documentation), so a staged entry that landed later may point
// at nothing:
//
//   - a deadline already passed when Stage is called fails it before write
//     runs, with an error wrapping ErrExpired;
//   - a write that returns after the deadline is undone: Stage calls undo
//     (with a context that is not cancelled with ctx), which must remove
//     the entry write staged, and fails with an error wrapping ErrExpired;
//     if undo fails too, the error wraps its error as well and says that
//     the late entry is still staged;
//   - a write that fails fails Stage with its error, wrapped; undo is not
//     called.
//
// The host then refuses the link, and its client uploads again to a new
// address. Stage is safe for concurrent use; write and undo are the host's.
func (s *Signer) Stage(ctx context.Context, l Link, write, undo func(context.Context) error) error {
	switch {
	case write == nil || undo == nil:
		return errors.New("linkaddr: stage: nil write or undo")
	case l.Deadline.IsZero():
		return fmt.Errorf("linkaddr: stage: %w: a link without a deadline, not returned by Verify", ErrInvalid)
	}
	if now := s.now(); now.After(l.Deadline) {
		return fmt.Errorf("linkaddr: stage: %w: the deadline %v passed before the staging write (now %v)",
			ErrExpired, l.Deadline.UTC(), now.UTC())
	}
	if err := write(ctx); err != nil {
		return fmt.Errorf("linkaddr: stage: %w", err)
	}
	now := s.now()
	if !now.After(l.Deadline) {
		return nil
	}
	late := fmt.Errorf("%w: the staging write of %s returned at %v, after the deadline %v",
		ErrExpired, l.Address, now.UTC(), l.Deadline.UTC())
	if err := undo(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("linkaddr: stage: %w; undo failed, the late entry is still staged: %w", late, err)
	}
	return fmt.Errorf("linkaddr: stage: %w; the entry was undone", late)
}

// NewMemRedeemer returns a Redeemer that keeps records in memory, for a host
// that links in one process. It is safe for concurrent use. A record is kept
// until its until has passed by the wall clock (time.Now), and dropped lazily
// after that, so memory stays proportional to the addresses still valid.
func NewMemRedeemer() Redeemer {
	return &memRedeemer{until: make(map[string]time.Time), sweepAt: minSweep}
}

// minSweep is the size below which the records are never swept.
const minSweep = 1024

type memRedeemer struct {
	mu      sync.Mutex
	until   map[string]time.Time
	sweepAt int // sweep when the map reaches this size
}

func (m *memRedeemer) Redeem(ctx context.Context, address string, until time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.until[address]; ok && !now.After(old) {
		return false, nil
	}
	m.until[address] = until
	if len(m.until) >= m.sweepAt {
		m.sweep(now)
	}
	return true, nil
}

// sweep drops the records whose until has passed. Sweeping again only when
// the map has doubled keeps the cost amortised O(1) per Redeem.
func (m *memRedeemer) sweep(now time.Time) {
	for a, until := range m.until {
		if now.After(until) {
			delete(m.until, a)
		}
	}
	m.sweepAt = max(minSweep, 2*len(m.until))
}
