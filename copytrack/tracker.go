package copytrack

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync/atomic"
	"time"
)

var (
	// ErrInvalidInput is wrapped by the errors of New for a nil Store or an
	// invalid option, of Track for a Copy it cannot store, and of
	// ForgetBranch for a zero cut-off time.
	ErrInvalidInput = errors.New("copytrack: invalid input")
	// ErrCorruptRecord is returned when a record in the Store does not decode.
	// The error names the record's key; the record is never skipped.
	ErrCorruptRecord = errors.New("copytrack: corrupt record")
)

// DefaultTTL is how long a copy record is kept when no WithTTL option is
// given. It must outlast the longest GC run, from the start of its
// uncommitted export to the end of its sweep.
const DefaultTTL = 24 * time.Hour

// expireBatch is how many keys Expire collects before deleting them.
const expireBatch = 1000

// The range of times whose Unix nanoseconds fit in an int64.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// Copy is one shallow copy: DstPath on Branch now shares PhysicalAddress with
// SrcPath. PhysicalAddress is what a GC must keep, in the form the host gives
// to its uncommitted export (a relative address or a full URI).
type Copy struct {
	Repository, Branch, SrcPath, DstPath, PhysicalAddress string
	// CreatedAt is when the copy was made; Track sets it from the clock
	// when it is zero. List returns it in UTC, to the nanosecond.
	CreatedAt time.Time
}

// Tracker records shallow copies of staged objects in a Store, so that a GC
// whose branch scan races a rename (copy, then delete of the source) still
// finds the source's physical address. A Tracker is safe for concurrent use,
// and several Trackers (in several processes) may share one Store.
// The zero value is not usable: call New.
type Tracker struct {
	store Store
	ttl   time.Duration
	now   func() time.Time
}

// Option configures a Tracker. A zero value means the option's default; an
// invalid value makes New fail with an error wrapping ErrInvalidInput.
type Option func(*Tracker) error

// WithTTL sets how old a record must be for Expire to drop it (0: the
// default DefaultTTL). A negative d is invalid: expiring records at once
// would let a running GC delete a live object.
func WithTTL(d time.Duration) Option {
	return func(t *Tracker) error {
		switch {
		case d < 0:
			return fmt.Errorf("negative TTL %v", d)
		case d == 0:
			t.ttl = DefaultTTL
		default:
			t.ttl = d
		}
		return nil
	}
}

// TTL returns how old a record must be for Expire to drop it: a GC whose
// uncommitted export runs longer than that may miss a copy record.
func (t *Tracker) TTL() time.Duration { return t.ttl }

// WithClock sets the clock used for zero CreatedAt values and by Expire
// (nil: the default time.Now).
func WithClock(now func() time.Time) Option {
	return func(t *Tracker) error {
		if now == nil {
			now = time.Now
		}
		t.now = now
		return nil
	}
}

// New returns a Tracker keeping its records in store. The store should hold
// nothing but copy records (give the Tracker its own table or key space).
// A nil store or an invalid option is an error wrapping ErrInvalidInput;
// nil options are ignored.
func New(store Store, opts ...Option) (*Tracker, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil Store", ErrInvalidInput)
	}
	t := &Tracker{store: store, ttl: DefaultTTL, now: time.Now}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(t); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
	}
	return t, nil
}

// processID tells this process's record keys apart from another's; seqCounter
// orders the keys of equal times in Track order.
var (
	processID  = newProcessID()
	seqCounter atomic.Uint64
)

func newProcessID() (id [8]byte) {
	rand.Read(id[:]) // never fails since Go 1.24
	return id
}

func nextSeq() [seqLen]byte {
	var s [seqLen]byte
	binary.BigEndian.PutUint64(s[:8], seqCounter.Add(1))
	copy(s[8:], processID[:])
	return s
}

// Track records c. A zero CreatedAt is set from the clock. The host calls it
// after the copy is staged and before it deletes the source of a rename.
func (t *Tracker) Track(ctx context.Context, c Copy) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = t.now()
	}
	switch {
	case c.Repository == "":
		return fmt.Errorf("%w: copy with an empty repository", ErrInvalidInput)
	case c.PhysicalAddress == "":
		return fmt.Errorf("%w: copy with an empty physical address", ErrInvalidInput)
	case c.CreatedAt.Before(minTime) || c.CreatedAt.After(maxTime):
		return fmt.Errorf("%w: copy created at %v, out of range", ErrInvalidInput, c.CreatedAt)
	}
	if err := t.store.Set(ctx, encodeKey(c.Repository, c.CreatedAt, nextSeq()), encodeValue(c)); err != nil {
		return fmt.Errorf("copytrack: track: %w", err)
	}
	return nil
}

// List yields the repository's copy records, oldest first; records of equal
// times come in Track order (within one process). Expired records not yet
// dropped by Expire are listed too. A record that does not decode ends the
// iteration with an error wrapping ErrCorruptRecord.
func (t *Tracker) List(ctx context.Context, repository string) iter.Seq2[Copy, error] {
	return func(yield func(Copy, error) bool) {
		for kv, err := range t.store.Scan(ctx, repositoryPrefix(repository)) {
			if err != nil {
				yield(Copy{}, fmt.Errorf("copytrack: list %q: %w", repository, err))
				return
			}
			c, err := decodeRecord(kv.Key, kv.Value)
			if err != nil {
				yield(Copy{}, err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Addresses yields the physical address of every copy record of the
// repository, in List order, duplicates included. It has the shape of the
// uncommitted export's trailer: the export calls it after every branch was
// scanned, which is what closes the rename race.
func (t *Tracker) Addresses(ctx context.Context, repository string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for c, err := range t.List(ctx, repository) {
			if !yield(c.PhysicalAddress, err) || err != nil {
				return
			}
		}
	}
}

// Expire drops the repository's records created more than the TTL before
// the clock's now, and returns how many it dropped. Keys are in time order,
// so it reads only the expired records plus one.
func (t *Tracker) Expire(ctx context.Context, repository string) (removed int, err error) {
	cutoff := t.now().Add(-t.ttl)
	prefix := repositoryPrefix(repository)
	for {
		batch, err := t.expiredBatch(ctx, prefix, cutoff)
		if err != nil {
			return removed, fmt.Errorf("copytrack: expire %q: %w", repository, err)
		}
		for _, key := range batch {
			if err := t.store.Delete(ctx, key); err != nil {
				return removed, fmt.Errorf("copytrack: expire %q: %w", repository, err)
			}
			removed++
		}
		if len(batch) < expireBatch {
			return removed, nil
		}
	}
}

// expiredBatch returns the keys of up to expireBatch of the oldest records
// under prefix created before cutoff.
func (t *Tracker) expiredBatch(ctx context.Context, prefix []byte, cutoff time.Time) ([][]byte, error) {
	var batch [][]byte
	for kv, err := range t.store.Scan(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		_, created, err := decodeKey(kv.Key)
		if err != nil {
			return nil, err
		}
		if !created.Before(cutoff) {
			break
		}
		if batch = append(batch, kv.Key); len(batch) == expireBatch {
			break
		}
	}
	return batch, nil
}

// ForgetBranch drops the repository's records of one branch created before
// before, and returns how many it dropped. The host calls it once the
// branch's staging area was committed, reset or deleted, with before the
// time it read before it sealed that staging area: for a commit, the
// commit's time as lakeFS sets it (NewCommit reads the clock before the
// staging token is sealed), never a date the user gave the commit. Records
// created at or after before are kept: they may be copies in the branch's
// next staging area, which no commit protects yet (a rename tracked between
// the commit and this call, say). before and the records' CreatedAt must
// come from the same clock.
//
// A zero before is an error wrapping ErrInvalidInput. ForgetBranch reads
// the repository's records created before before, and deletes nothing if
// one of them does not decode.
func (t *Tracker) ForgetBranch(ctx context.Context, repository, branch string, before time.Time) (removed int, err error) {
	if before.IsZero() {
		return 0, fmt.Errorf("%w: forget branch %q of %q: zero time", ErrInvalidInput, branch, repository)
	}
	var keys [][]byte
	for kv, err := range t.store.Scan(ctx, repositoryPrefix(repository)) {
		if err != nil {
			return 0, fmt.Errorf("copytrack: forget branch %q of %q: %w", branch, repository, err)
		}
		c, err := decodeRecord(kv.Key, kv.Value)
		if err != nil {
			return 0, err
		}
		if !c.CreatedAt.Before(before) {
			break // keys are in time order: every later record is newer still
		}
		if c.Branch == branch {
			keys = append(keys, kv.Key)
		}
	}
	for _, key := range keys {
		if err := t.store.Delete(ctx, key); err != nil {
			return removed, fmt.Errorf("copytrack: forget branch %q of %q: %w", branch, repository, err)
		}
		removed++
	}
	return removed, nil
}
