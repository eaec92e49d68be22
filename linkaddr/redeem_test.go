package linkaddr_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
)

func TestVerifyOnceConcurrent(t *testing.T) {
	const callers = 64
	p := mustProvider(t, time.Now)
	s := mustSigner(t, testKey, p)
	r := linkaddr.NewMemRedeemer()
	for round := range 20 {
		signed := mustSign(t, s, "r", "b", "p", p.NewPath())
		var wg sync.WaitGroup
		errs := make([]error, callers)
		start := make(chan struct{})
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = s.VerifyOnce(context.Background(), r, "r", "b", "p", signed)
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, linkaddr.ErrInvalid):
				t.Fatalf("round %d: unexpected error %v", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d of %d VerifyOnce calls succeeded, want 1", round, ok, callers)
		}
	}
}

func TestVerifyOnceRedeemsOnlyValidAddresses(t *testing.T) {
	p := mustProvider(t, time.Now)
	s := mustSigner(t, testKey, p)
	r := linkaddr.NewMemRedeemer()
	ctx := context.Background()
	address := p.NewPath()
	signed := mustSign(t, s, "r", "b", "p", address)

	if _, err := s.VerifyOnce(ctx, r, "r", "b", "other path", signed); !errors.Is(err, linkaddr.ErrInvalid) {
		t.Fatalf("wrong path: %v", err)
	}
	got, err := s.VerifyOnce(ctx, r, "r", "b", "p", signed)
	if err != nil || got.Address != address {
		t.Fatalf("first VerifyOnce = %+v, %v", got, err)
	}
	if _, err := s.VerifyOnce(ctx, r, "r", "b", "p", signed); !errors.Is(err, linkaddr.ErrInvalid) {
		t.Fatalf("second VerifyOnce: %v; want ErrInvalid", err)
	}
	// Verify alone does not redeem.
	if _, err := s.Verify("r", "b", "p", signed); err != nil {
		t.Fatalf("Verify after VerifyOnce: %v", err)
	}
}

// redeemerFunc adapts a function to linkaddr.Redeemer.
type redeemerFunc func(ctx context.Context, address string, until time.Time) (bool, error)

func (f redeemerFunc) Redeem(ctx context.Context, address string, until time.Time) (bool, error) {
	return f(ctx, address, until)
}

func TestVerifyOnceRedeemerError(t *testing.T) {
	p := mustProvider(t, time.Now)
	s := mustSigner(t, testKey, p)
	broken := errors.New("database down")
	r := redeemerFunc(func(context.Context, string, time.Time) (bool, error) { return true, broken })
	_, err := s.VerifyOnce(context.Background(), r, "r", "b", "p", mustSign(t, s, "r", "b", "p", p.NewPath()))
	if !errors.Is(err, broken) || errors.Is(err, linkaddr.ErrInvalid) {
		t.Fatalf("err = %v; want the redeemer's error, not ErrInvalid", err)
	}

	if _, err := s.VerifyOnce(context.Background(), nil, "r", "b", "p", mustSign(t, s, "r", "b", "p", p.NewPath())); err == nil {
		t.Fatal("VerifyOnce accepted a nil Redeemer")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.VerifyOnce(ctx, linkaddr.NewMemRedeemer(), "r", "b", "p", mustSign(t, s, "r", "b", "p", p.NewPath()))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: err = %v", err)
	}
}

// TestVerifyOnceUntil checks the until handed to the Redeemer: the wall-clock
// time after which the address fails Verify, even when the Signer's clock is
// not the wall clock.
func TestVerifyOnceUntil(t *testing.T) {
	const ttl = 24 * time.Hour
	for _, lag := range []time.Duration{0, 10 * time.Hour, -10 * time.Hour} {
		signerNow := time.Now().Add(-lag)
		p := mustProvider(t, stoppedClock(signerNow.Add(-time.Hour))) // made an hour ago
		s := mustSigner(t, testKey, p, linkaddr.WithClock(stoppedClock(signerNow)), linkaddr.WithTTL(ttl))
		address := p.NewPath()
		remaining := ttl - signerNow.Sub(signerNow.Add(-time.Hour).Truncate(time.Second))
		var until time.Time
		r := redeemerFunc(func(_ context.Context, a string, u time.Time) (bool, error) { until = u; return true, nil })
		before := time.Now()
		if _, err := s.VerifyOnce(context.Background(), r, "r", "b", "p", mustSign(t, s, "r", "b", "p", address)); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		if until.Before(before.Add(remaining)) || until.After(after.Add(remaining)) {
			t.Errorf("lag %v: until %v, want within [%v, %v]", lag, until, before.Add(remaining), after.Add(remaining))
		}
	}
}

func TestMemRedeemer(t *testing.T) {
	r := linkaddr.NewMemRedeemer()
	ctx := context.Background()
	live := time.Now().Add(time.Hour)
	dead := time.Now().Add(-time.Second)
	for _, tc := range []struct {
		address string
		until   time.Time
		first   bool
	}{
		{"a", live, true},
		{"a", live, false},
		{"b", live, true},
		{"a", live, false},
		{"gone", dead, true},
		{"gone", dead, true}, // its address fails Verify anyway: forgotten
	} {
		first, err := r.Redeem(ctx, tc.address, tc.until)
		if err != nil || first != tc.first {
			t.Fatalf("Redeem(%q) = %v, %v; want %v", tc.address, first, err, tc.first)
		}
	}
}
