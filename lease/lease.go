// Package lease keeps one garbage collection at a time on a namespace: a
// run takes the lease before it starts and holds it, renewing it, until it
// ends; a second run finds it held and fails, or waits, with an error that
// names the holder. A holder that dies stops renewing, and its lease
// expires.
//
// # How it works
//
// The lease is a folder of objects, one per generation, named by a
// zero-padded number: the highest generation is the lease. Taking it is
// creating the next generation with a conditional write
// (blob.WriterOptions.IfNotExist: S3's If-None-Match, GCS's
// ifGenerationMatch=0, Azure's If-None-Match), possible only when the
// highest is released or expired: of two runs that try at once, the store
// lets one create the key and refuses the other. An expired lease is taken
// over by creating the next generation, which the store again grants to
// one run only. A taker keeps the last two generations and removes older
// ones; one whose listing was stale (or that paused across two takeovers)
// may create a generation removed since, so each taker checks at once,
// before it returns, that its generation is the latest. The holder renews
// by rewriting its own generation (no other run writes it) with a later
// expiry, at once and then every third of the TTL, and checks each time
// that no later generation exists; a holder whose renewal fails when the
// next would come after the expiry loses the lease then (Done), before
// another run may take it over; release marks its generation released.
//
// # Guarantees, honestly
//
//   - On S3, GCS, Azure and memblob, two runs never both take the same
//     generation: the store decides.
//   - On a local folder (fileblob) gocloud's IfNotExist is a check followed
//     by a rename, not an atomic create: two processes taking the lease
//     within the same instant could both succeed. Acquire narrows this: it
//     reads its generation back after a pause (Options.Settle) and gives
//     up if another holder's record is there; the later rename wins, so
//     both see the same record. A process paused between its check and its
//     rename for longer than the pause defeats it.
//   - A lease is a promise about time, not a lock: expiry is judged with
//     the clocks of two machines (a margin, Options.ClockSkew, is added),
//     and a holder paused for longer than the TTL (a stopped process, a
//     frozen machine) goes on working until it notices, at its next
//     renewal, that another run took the lease. The stores offer no
//     fencing token for deletes. Keep the TTL well above the pauses a run
//     can suffer; the lease keeps runs apart in every ordinary case, and a
//     GC that ran twice at once is safe (each deletes only its own mark's
//     candidates), only wasteful and confusing.
//
// The package is safe for concurrent use.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Errors of the package; every error wraps at most one of them.
var (
	// ErrHeld: another run holds the lease (the error names it).
	ErrHeld = errors.New("lease: held by another run")
	// ErrLost: the lease was taken over or could not be renewed in time.
	ErrLost = errors.New("lease: lost")
	// ErrInvalid: a bad argument.
	ErrInvalid = errors.New("lease: invalid input")
)

// Defaults of Options.
const (
	DefaultTTL       = 2 * time.Minute
	DefaultClockSkew = 30 * time.Second
	DefaultSettle    = time.Second
)

// Options configure Acquire; the zero value of each field is its default.
type Options struct {
	// Holder names the run to others, in ErrHeld's message (default:
	// "<host name>:<process ID>").
	Holder string
	// TTL is how long a lease lives without renewal (default DefaultTTL);
	// it is renewed every third of it.
	TTL time.Duration
	// Wait is how long Acquire waits for a held lease to be released or to
	// expire (default 0: fail at once with ErrHeld).
	Wait time.Duration
	// ClockSkew is added to a lease's expiry before another run may take
	// it over (default DefaultClockSkew).
	ClockSkew time.Duration
	// Settle is how long Acquire waits before reading its new generation
	// back (default DefaultSettle, at most a sixth of the TTL; negative: not
	// at all). See the package documentation.
	Settle time.Duration
	// Clock is the time (default time.Now).
	Clock func() time.Time
}

// record is a generation's object.
type record struct {
	Holder   string    `json:"holder"`
	Token    string    `json:"token"`
	Acquired time.Time `json:"acquired"`
	Expires  time.Time `json:"expires"`
	Released bool      `json:"released,omitempty"`
}

// maxRecord bounds what is read of a generation.
const maxRecord = 16 << 10

// genDigits is the width of a generation's name.
const genDigits = 20

// parseRecord decodes a generation's object.
func parseRecord(b []byte) (record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return record{}, fmt.Errorf("%w: lease record: %v", ErrInvalid, err)
	}
	if r.Token == "" || r.Expires.IsZero() {
		return record{}, fmt.Errorf("%w: lease record without token or expiry", ErrInvalid)
	}
	return r, nil
}

// Lease is a held lease. Its renewal runs until Release, or until it is
// lost: then Done is closed and Err says why.
type Lease struct {
	bucket *blob.Bucket
	folder string
	gen    uint64
	rec    record
	o      Options

	stop    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

// Acquire takes the lease in folder (a key prefix ending in '/', such as
// layout.LeaseFolder's). A lease held by another run gives an error wrapping
// ErrHeld that names the holder and when its lease expires, at once or
// after Options.Wait.
func Acquire(ctx context.Context, bucket *blob.Bucket, folder string, o Options) (*Lease, error) {
	if bucket == nil || folder == "" || folder[len(folder)-1] != '/' {
		return nil, fmt.Errorf("%w: a bucket and a folder ending in '/' are needed", ErrInvalid)
	}
	if o.TTL < 0 || o.Wait < 0 || o.ClockSkew < 0 {
		return nil, fmt.Errorf("%w: negative duration", ErrInvalid)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	// The pause must leave most of the TTL.
	o.Settle = min(o.Settle, o.TTL/6)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + ":" + strconv.Itoa(os.Getpid())
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	deadline := o.Clock().Add(o.Wait)
	for {
		l, held, err := tryAcquire(ctx, bucket, folder, o, token)
		if err != nil || l != nil {
			return l, err
		}
		if !o.Clock().Before(deadline) {
			return nil, held
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(o.TTL/6+time.Duration(tok[0])*time.Millisecond, deadline.Sub(o.Clock())+time.Millisecond)):
		}
	}
}

// tryAcquire makes one attempt: a lease, or held (an ErrHeld error) when
// another run has it.
func tryAcquire(ctx context.Context, bucket *blob.Bucket, folder string, o Options, token string) (l *Lease, held, err error) {
	top, rec, err := latest(ctx, bucket, folder, o)
	if err != nil {
		return nil, nil, err
	}
	now := o.Clock()
	if rec != nil && !rec.Released && now.Before(rec.Expires.Add(o.ClockSkew)) {
		return nil, fmt.Errorf("%w: %s since %s, until %s unless renewed (lease %s%0*d)", ErrHeld,
			rec.Holder, rec.Acquired.UTC().Format(time.RFC3339), rec.Expires.UTC().Format(time.RFC3339), folder, genDigits, top), nil
	}
	gen := top + 1
	r := record{Holder: o.Holder, Token: token, Acquired: now.UTC(), Expires: now.Add(o.TTL).UTC()}
	b, _ := json.Marshal(r)
	key := genKey(folder, gen)
	if err := bucket.WriteAll(ctx, key, b, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"}); err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			// Another run created it first: name it, from its record.
			holder := "another run"
			if _, rec, lerr := latest(ctx, bucket, folder, o); lerr == nil && rec != nil {
				holder = rec.Holder
			}
			return nil, fmt.Errorf("%w: %s took %s first", ErrHeld, holder, key), nil
		}
		return nil, nil, fmt.Errorf("lease: take %s: %w", key, err)
	}
	if o.Settle > 0 {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(o.Settle):
		}
		got, err := bucket.ReadAll(ctx, key)
		if err != nil {
			return nil, nil, fmt.Errorf("lease: read back %s: %w", key, err)
		}
		if other, err := parseRecord(got); err != nil || other.Token != token {
			return nil, fmt.Errorf("%w: another run took %s at the same time", ErrHeld, key), nil
		}
	}
	l = &Lease{bucket: bucket, folder: folder, gen: gen, rec: r, o: o,
		stop: make(chan struct{}), stopped: make(chan struct{}), done: make(chan struct{})}
	// Renew at once: the pause ate into the TTL, and the renewal checks
	// that no later generation exists (a taker that listed a stale folder
	// may have recreated a generation pruned since).
	if err := l.renewOnce(ctx); err != nil {
		if errors.Is(err, ErrLost) {
			return nil, fmt.Errorf("%w: %s is not the latest generation (%v)", ErrHeld, key, err), nil
		}
		return nil, nil, err
	}
	l.prune(ctx)
	go l.renew()
	return l, nil, nil
}

func genKey(folder string, gen uint64) string {
	return fmt.Sprintf("%s%0*d", folder, genDigits, gen)
}

// latest returns the highest generation and its record: nil when there is
// none, or (when it cannot be read) a record that expires TTL after the
// object was last written.
func latest(ctx context.Context, bucket *blob.Bucket, folder string, o Options) (uint64, *record, error) {
	var top uint64
	var topKey string
	var mod time.Time
	it := bucket.List(&blob.ListOptions{Prefix: folder, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("lease: list %s: %w", folder, err)
		}
		name := obj.Key[len(folder):]
		n, err := strconv.ParseUint(name, 10, 64)
		if obj.IsDir || err != nil || len(name) != genDigits {
			continue // not a generation
		}
		if topKey == "" || n > top {
			top, topKey, mod = n, obj.Key, obj.ModTime
		}
	}
	if topKey == "" {
		return 0, nil, nil
	}
	r, err := bucket.NewReader(ctx, topKey, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return top, &record{Holder: "unknown", Token: "-", Expires: mod.Add(o.TTL)}, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("lease: read %s: %w", topKey, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxRecord))
	if err != nil {
		return 0, nil, fmt.Errorf("lease: read %s: %w", topKey, err)
	}
	rec, err := parseRecord(b)
	if err != nil {
		// Unreadable (a partial write elsewhere, someone's edit): held
		// until a TTL after it was written.
		rec = record{Holder: "unknown (unreadable lease)", Token: "-", Acquired: mod, Expires: mod.Add(o.TTL)}
	}
	return top, &rec, nil
}

// prune removes the generations before the previous one.
func (l *Lease) prune(ctx context.Context) {
	if l.gen < 3 {
		return
	}
	it := l.bucket.List(&blob.ListOptions{Prefix: l.folder, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			return
		}
		name := obj.Key[len(l.folder):]
		if n, err := strconv.ParseUint(name, 10, 64); err == nil && len(name) == genDigits && n+1 < l.gen {
			_ = l.bucket.Delete(ctx, obj.Key)
		}
	}
}

// renew rewrites the generation every third of the TTL until stopped; the
// lease is lost when a later generation exists or when a renewal fails and
// the next one would come after the lease expires.
func (l *Lease) renew() {
	defer close(l.stopped)
	tick := time.NewTicker(l.o.TTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		// A renewal may not outlast the lease, and a failed one gives the
		// lease up when the next try would come after its expiry: the run
		// is told before another can take the lease over, not a tick later.
		ctx, cancel := context.WithTimeout(context.Background(), min(l.o.TTL/3, l.rec.Expires.Sub(l.o.Clock())))
		err := l.renewOnce(ctx)
		cancel()
		if errors.Is(err, ErrLost) || err != nil && !l.o.Clock().Add(l.o.TTL/3).Before(l.rec.Expires) {
			l.lose(err)
			return
		}
	}
}

func (l *Lease) renewOnce(ctx context.Context) error {
	top, rec, err := latest(ctx, l.bucket, l.folder, l.o)
	if err != nil {
		return err
	}
	if top != l.gen || rec == nil || rec.Token != l.rec.Token {
		holder := "another run"
		if rec != nil {
			holder = rec.Holder
		}
		return fmt.Errorf("%w: taken over by %s (lease %s)", ErrLost, holder, genKey(l.folder, top))
	}
	r := l.rec
	r.Expires = l.o.Clock().Add(l.o.TTL).UTC()
	b, _ := json.Marshal(r)
	if err := l.bucket.WriteAll(ctx, genKey(l.folder, l.gen), b, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("lease: renew: %w", err)
	}
	l.mu.Lock()
	l.rec = r
	l.mu.Unlock()
	return nil
}

func (l *Lease) lose(err error) {
	if !errors.Is(err, ErrLost) {
		err = fmt.Errorf("%w: not renewed before it expired: %w", ErrLost, err)
	}
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
	close(l.done)
}

// Done is closed when the lease is lost.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Err says why the lease was lost (wrapping ErrLost), or nil.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Holder is the name the lease shows to others.
func (l *Lease) Holder() string { return l.rec.Holder }

// Release stops the renewal and marks the lease released, so that the next
// run need not wait for it to expire. It is safe to call more than once.
func (l *Lease) Release(ctx context.Context) error {
	select {
	case <-l.stop:
		return nil
	default:
		close(l.stop)
	}
	<-l.stopped
	if l.Err() != nil {
		return nil // another run holds it now: leave its lease alone
	}
	top, rec, err := latest(ctx, l.bucket, l.folder, l.o)
	if err != nil {
		return err
	}
	if top != l.gen || rec == nil || rec.Token != l.rec.Token {
		return nil
	}
	l.mu.Lock()
	r := l.rec
	l.mu.Unlock()
	r.Released = true
	b, _ := json.Marshal(r)
	if err := l.bucket.WriteAll(ctx, genKey(l.folder, l.gen), b, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("lease: release: %w", err)
	}
	return nil
}
