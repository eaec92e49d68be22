package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/faultblob"
)

const folder = "_ns/lease/"

func fast(holder string) Options {
	return Options{Holder: holder, TTL: 300 * time.Millisecond, ClockSkew: time.Millisecond, Settle: -1}
}

func TestSecondRunFindsItHeld(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	a, err := Acquire(ctx, b, folder, fast("run-a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctx, b, folder, fast("run-b"))
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "run-a") {
		t.Fatalf("second Acquire: %v, want ErrHeld naming run-a", err)
	}
	// Held across renewals: well past the TTL, still held.
	time.Sleep(700 * time.Millisecond)
	if _, err := Acquire(ctx, b, folder, fast("run-b")); !errors.Is(err, ErrHeld) {
		t.Fatalf("after renewals: %v, want ErrHeld", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Err() != nil {
		t.Fatalf("released lease lost: %v", a.Err())
	}
	bl, err := Acquire(ctx, b, folder, fast("run-b"))
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	defer bl.Release(ctx)
}

func TestWaitForRelease(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	a, err := Acquire(ctx, b, folder, fast("run-a"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(200 * time.Millisecond); _ = a.Release(ctx) }()
	o := fast("run-b")
	o.Wait = 5 * time.Second
	bl, err := Acquire(ctx, b, folder, o)
	if err != nil {
		t.Fatalf("waiting Acquire: %v", err)
	}
	_ = bl.Release(ctx)
}

// An expired lease is taken over by the next generation, and its old
// holder, renewing, learns it lost it.
func TestTakeoverOfExpired(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	o := Options{Holder: "old", TTL: time.Hour, ClockSkew: time.Minute, Settle: -1, Clock: clock}
	old, err := Acquire(ctx, b, folder, o)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Release(ctx)
	now.Add(int64(time.Hour + 30*time.Second)) // expired, but within the skew
	o.Holder = "new"
	if _, err := Acquire(ctx, b, folder, o); !errors.Is(err, ErrHeld) {
		t.Fatalf("within the skew: %v, want ErrHeld", err)
	}
	now.Add(int64(time.Minute))
	nl, err := Acquire(ctx, b, folder, o)
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer nl.Release(ctx)
	if nl.gen != old.gen+1 {
		t.Errorf("took generation %d after %d", nl.gen, old.gen)
	}
	if err := old.renewOnce(ctx); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "new") {
		t.Errorf("old holder's renewal: %v, want ErrLost naming new", err)
	}
}

// Of many runs that try at once, one takes the lease.
func TestOneOfManyWins(t *testing.T) {
	for round := range 20 {
		ctx := context.Background()
		// Every run's write waits until all have listed (or a moment has
		// passed), so that they all find the lease free and race.
		const runs = 16
		var arrived atomic.Int32
		all := make(chan struct{})
		fb, err := faultblob.New(memblob.OpenBucket(nil), faultblob.WithHook(faultblob.Write, func(ctx context.Context, c *faultblob.Call) error {
			if arrived.Add(1) == runs {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(500 * time.Millisecond):
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		b := fb.Bucket()
		var wg sync.WaitGroup
		var won atomic.Int32
		var mu sync.Mutex
		var leases []*Lease
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := Acquire(ctx, b, folder, fast(fmt.Sprint("run-", i)))
				switch {
				case err == nil:
					won.Add(1)
					mu.Lock()
					leases = append(leases, l)
					mu.Unlock()
				case !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "run-"):
					t.Errorf("Acquire: %v", err)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("round %d: %d runs took the lease", round, won.Load())
		}
		for _, l := range leases {
			_ = l.Release(ctx)
		}
	}
}

// Where the store's conditional write is not atomic (fileblob: a check,
// then a rename), two runs can both create a generation; the later rename
// wins. The read-back after the settle pause sees the other's record.
func TestReadBackSeesADoubleCreate(t *testing.T) {
	ctx := context.Background()
	inner, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := fmt.Sprintf(`{"holder":"racer","token":"r","expires":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
	fb, err := faultblob.New(inner, faultblob.WithHook(faultblob.Commit, func(ctx context.Context, c *faultblob.Call) error {
		// The racer's rename lands just after ours.
		return inner.WriteAll(ctx, c.Key, []byte(other), nil)
	}))
	if err != nil {
		t.Fatal(err)
	}
	o := fast("run-a")
	o.Settle = 10 * time.Millisecond
	_, err = Acquire(ctx, fb.Bucket(), folder, o)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "same time") {
		t.Fatalf("Acquire overwritten by a racer: %v", err)
	}
}

func TestUnreadableLeaseHeldUntilItsTTL(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	if err := b.WriteAll(ctx, fmt.Sprintf("%s%0*d", folder, genDigits, 5), []byte("{broken"), nil); err != nil {
		t.Fatal(err)
	}
	o := fast("run-a")
	o.TTL = time.Hour
	if _, err := Acquire(ctx, b, folder, o); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("Acquire over an unreadable lease: %v", err)
	}
	o.Clock = func() time.Time { return time.Now().Add(2 * time.Hour) }
	l, err := Acquire(ctx, b, folder, o)
	if err != nil || l.gen != 6 {
		t.Fatalf("Acquire after its TTL: %v", err)
	}
	_ = l.Release(ctx)
}

func TestInvalid(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		b *blob.Bucket
		f string
		o Options
	}{{nil, folder, Options{}}, {memblob.OpenBucket(nil), "x", Options{}}, {memblob.OpenBucket(nil), folder, Options{TTL: -1}}} {
		if _, err := Acquire(ctx, c.b, c.f, c.o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Acquire(%v, %q, %+v): %v", c.b, c.f, c.o, err)
		}
	}
}

// TestTwoProcesses: a child process holds the lease on a folder bucket;
// this one finds it held, naming the child; the child is killed (SIGKILL:
// no release), and its lease expires, after which this one takes it.
func TestTwoProcesses(t *testing.T) {
	if os.Getenv("LEASE_CHILD") != "" {
		t.Skip("child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseChild$")
	cmd.Env = append(os.Environ(), "LEASE_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	buf := make([]byte, 64)
	n, _ := out.Read(buf) // "held\n" once the child holds it
	if !strings.Contains(string(buf[:n]), "held") {
		t.Fatalf("child: %q", buf[:n])
	}
	ctx := context.Background()
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Holder: "parent", TTL: time.Second, ClockSkew: time.Millisecond}
	_, err = Acquire(ctx, b, folder, o)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), fmt.Sprintf("child:%d", cmd.Process.Pid)) {
		t.Fatalf("Acquire while the child holds it: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // past the child's TTL: its renewals keep it
	if _, err := Acquire(ctx, b, folder, o); !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire while the child renews it: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	o.Wait = 5 * time.Second
	start := time.Now()
	l, err := Acquire(ctx, b, folder, o)
	if err != nil {
		t.Fatalf("Acquire after the child died: %v", err)
	}
	t.Logf("taken over %v after the child was killed", time.Since(start))
	_ = l.Release(ctx)
}

// TestLeaseChild is TestTwoProcesses's child: it takes the lease and holds
// it until killed.
func TestLeaseChild(t *testing.T) {
	dir := os.Getenv("LEASE_CHILD")
	if dir == "" {
		t.Skip("run by TestTwoProcesses")
	}
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), b, folder, Options{Holder: fmt.Sprintf("child:%d", os.Getpid()), TTL: time.Second, ClockSkew: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("held")
	select {}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"holder":"h","token":"t","acquired":"2026-12-01T00:00:00Z","expires":"2026-12-01T00:02:00Z"}`))
	f.Add([]byte(`{"token":"t"}`))
	f.Add([]byte(`{"holder":"h","token":"t","expires":"2026-12-01T00:02:00Z","released":true}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRecord(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%v does not wrap ErrInvalid", err)
			}
			return
		}
		if r.Token == "" || r.Expires.IsZero() {
			t.Fatalf("accepted %+v", r)
		}
	})
}

// TestFailedRenewalsLoseItBeforeExpiry: when renewals fail, the holder is
// told it lost the lease before the lease expires (when another run could
// take it over), not a tick after.
func TestFailedRenewalsLoseItBeforeExpiry(t *testing.T) {
	var failing atomic.Bool
	fb, err := faultblob.New(memblob.OpenBucket(nil), faultblob.WithError(faultblob.Write, func(string) error {
		if failing.Load() {
			return errors.New("store down")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), fb.Bucket(), folder, fast("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	failing.Store(true)
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("never lost")
	}
	at := time.Now()
	l.mu.Lock()
	expires := l.rec.Expires
	l.mu.Unlock()
	if !at.Before(expires) {
		t.Errorf("lost at %v, %v after it expired", at, at.Sub(expires))
	}
	if !errors.Is(l.Err(), ErrLost) {
		t.Errorf("Err() = %v, want ErrLost", l.Err())
	}
}

// TestStaleListingTakesNothing: a taker whose listing missed the latest
// generation (a stale view, or a pause across two takeovers) and so
// created an older, pruned one does not hold the lease.
func TestStaleListingTakesNothing(t *testing.T) {
	ctx := context.Background()
	inner := memblob.OpenBucket(nil)
	now := time.Now().UTC()
	write := func(gen uint64, r record) {
		b, _ := json.Marshal(r)
		if err := inner.WriteAll(ctx, genKey(folder, gen), b, nil); err != nil {
			t.Fatal(err)
		}
	}
	write(5, record{Holder: "old", Token: "t5", Acquired: now.Add(-time.Hour), Expires: now.Add(-time.Hour), Released: true})
	write(7, record{Holder: "b", Token: "t7", Acquired: now, Expires: now.Add(time.Hour)})
	var listings atomic.Int64
	fb, err := faultblob.New(inner, faultblob.WithHook(faultblob.List, func(_ context.Context, c *faultblob.Call) error {
		listings.Add(1)
		return nil
	}), faultblob.WithListEdit(func(_ string, o *driver.ListObject) {
		if listings.Load() == 1 && o.Key == genKey(folder, 7) {
			o.Key += "-hidden" // the first listing misses generation 7
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(ctx, fb.Bucket(), folder, fast("a"))
	if err == nil {
		_ = l.Release(ctx)
		t.Fatal("took a lease below a held generation")
	}
	if !errors.Is(err, ErrHeld) {
		t.Errorf("Acquire: %v, want ErrHeld", err)
	}
}
