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
func (s *Signer) VerifyOnce(ctx context.Context, r Redeemer, repository, branch, path, signed string) (string, error) {
	if r == nil {
		return "", errors.New("linkaddr: nil Redeemer")
	}
	address, remaining, err := s.verify(repository, branch, path, signed)
	if err != nil {
		return "", err
	}
	// until is on the wall clock even when the Signer has its own clock.
	first, err := r.Redeem(ctx, address, time.Now().Add(remaining))
	if err != nil {
		return "", fmt.Errorf("linkaddr: redeem: %w", err)
	}
	if !first {
		return "", fmt.Errorf("%w: address already linked", ErrInvalid)
	}
	return address, nil
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
