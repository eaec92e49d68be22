package linkaddr_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
)

// TestStage drives Stage with a write that takes a given time on the
// Signer's clock: in time it stays, late it is undone, and a deadline
// already passed stops the write before it runs.
func TestStage(t *testing.T) {
	made := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	clock := made
	p := mustProvider(t, stoppedClock(made))
	s := mustSigner(t, testKey, p, linkaddr.WithClock(func() time.Time { return clock }))
	signed := mustSign(t, s, "r", "b", "p", p.NewPath())
	deadline := made.Add(linkaddr.DefaultTTL)
	errWrite, errUndo := errors.New("write failed"), errors.New("undo failed")

	for _, tc := range []struct {
		name        string
		verifyAt    time.Time
		takes       time.Duration // how long the write takes
		writeErr    error
		undoErr     error
		wantStaged  bool  // the entry is staged after Stage
		wantWrite   bool  // write was called
		wantUndo    bool  // undo was called
		want        error // wrapped by Stage's error
		wantAlsoErr error
	}{
		{"quick", made, time.Second, nil, nil, true, true, false, nil, nil},
		{"slow, at the deadline", deadline.Add(-linkaddr.StagingMargin), linkaddr.StagingMargin, nil, nil, true, true, false, nil, nil},
		{"late by a second", deadline.Add(-linkaddr.StagingMargin), linkaddr.StagingMargin + time.Second, nil, nil, false, true, true, linkaddr.ErrExpired, nil},
		{"late, undo fails", deadline.Add(-linkaddr.StagingMargin), time.Hour, nil, errUndo, true, true, true, linkaddr.ErrExpired, errUndo},
		{"write fails", made, time.Second, errWrite, nil, false, true, false, errWrite, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock = tc.verifyAt
			l, err := s.Verify("r", "b", "p", signed)
			if err != nil {
				t.Fatal(err)
			}
			if !l.Deadline.Equal(deadline) {
				t.Fatalf("deadline %v, want %v", l.Deadline, deadline)
			}
			staged, wrote, undone := false, false, false
			ctx, cancel := context.WithCancel(context.Background())
			write := func(context.Context) error {
				wrote = true
				clock = clock.Add(tc.takes)
				staged = tc.writeErr == nil
				return tc.writeErr
			}
			undo := func(ctx context.Context) error {
				undone = true
				if ctx.Err() != nil {
					t.Error("undo got a cancelled context")
				}
				if tc.undoErr == nil {
					staged = false
				}
				return tc.undoErr
			}
			cancel() // the request is gone: undo must run all the same
			err = s.Stage(ctx, l, write, undo)
			if staged != tc.wantStaged || wrote != tc.wantWrite || undone != tc.wantUndo {
				t.Errorf("staged %v, wrote %v, undone %v; want %v, %v, %v", staged, wrote, undone, tc.wantStaged, tc.wantWrite, tc.wantUndo)
			}
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("Stage: %v", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Stage: %v; want %v", err, tc.want)
			case tc.wantAlsoErr != nil && !errors.Is(err, tc.wantAlsoErr):
				t.Errorf("Stage: %v; want it to wrap %v too", err, tc.wantAlsoErr)
			case err != nil && !strings.HasPrefix(err.Error(), "linkaddr: stage: "):
				t.Errorf("Stage: %q does not start with the package's name", err)
			}
		})
	}

	t.Run("deadline passed before the write", func(t *testing.T) {
		clock = made
		l, err := s.Verify("r", "b", "p", signed)
		if err != nil {
			t.Fatal(err)
		}
		clock = deadline.Add(time.Nanosecond)
		called := false
		f := func(context.Context) error { called = true; return nil }
		if err := s.Stage(context.Background(), l, f, f); !errors.Is(err, linkaddr.ErrExpired) || called {
			t.Fatalf("Stage = %v, write or undo called: %v; want ErrExpired and no call", err, called)
		}
	})
	t.Run("refused inputs", func(t *testing.T) {
		clock = made
		f := func(context.Context) error { t.Error("called"); return nil }
		if err := s.Stage(context.Background(), linkaddr.Link{Address: "data/x"}, f, f); !errors.Is(err, linkaddr.ErrInvalid) {
			t.Errorf("Stage of a link without a deadline = %v; want ErrInvalid", err)
		}
		l := linkaddr.Link{Address: "data/x", Deadline: deadline}
		if err := s.Stage(context.Background(), l, nil, f); err == nil {
			t.Error("Stage accepted a nil write")
		}
		if err := s.Stage(context.Background(), l, f, nil); err == nil {
			t.Error("Stage accepted a nil undo")
		}
	})
}

// TestStagingMarginReduced is the reduced case of a lost link on the signer's
// side: an address handed out at T, verified at T+23h58m, was staged minutes
// later, after the collector could have swept its object. Verify now leaves
// StagingMargin to stage: the late verification is refused, and a link
// verified at the last moment Verify allows has its whole margin to stage,
// and no more.
func TestStagingMarginReduced(t *testing.T) {
	handedOut := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	clock := handedOut
	p := mustProvider(t, stoppedClock(handedOut))
	s := mustSigner(t, testKey, p, linkaddr.WithClock(func() time.Time { return clock }))
	signed := mustSign(t, s, "r", "b", "p", p.NewPath())

	clock = handedOut.Add(23*time.Hour + 58*time.Minute)
	if _, err := s.Verify("r", "b", "p", signed); !errors.Is(err, linkaddr.ErrExpired) {
		t.Fatalf("Verify 2 minutes before the TTL's end = %v; want ErrExpired (under the staging margin)", err)
	}
	last := handedOut.Add(linkaddr.DefaultTTL - linkaddr.StagingMargin)
	for _, tc := range []struct {
		after time.Duration // from the verification to the staging write's end
		ok    bool
	}{{5 * time.Minute, true}, {6 * time.Minute, true}, {linkaddr.StagingMargin, true}, {linkaddr.StagingMargin + time.Second, false}} {
		clock = last
		l, err := s.Verify("r", "b", "p", signed)
		if err != nil {
			t.Fatalf("Verify at the TTL less the margin: %v", err)
		}
		staged := false
		err = s.Stage(context.Background(), l,
			func(context.Context) error { clock = clock.Add(tc.after); staged = true; return nil },
			func(context.Context) error { staged = false; return nil })
		if (err == nil) != tc.ok || staged != tc.ok {
			t.Errorf("staged %v after the verification: Stage = %v, entry staged %v; want ok %v", tc.after, err, staged, tc.ok)
		}
	}
}

func TestTTLNotAboveStagingMargin(t *testing.T) {
	p := mustProvider(t, time.Now)
	for _, ttl := range []time.Duration{time.Second, linkaddr.StagingMargin} {
		if _, err := linkaddr.New([]byte(testKey), p, linkaddr.WithTTL(ttl)); err == nil {
			t.Errorf("New(WithTTL(%v)) accepted a TTL no longer than the staging margin", ttl)
		}
	}
	s := mustSigner(t, testKey, p, linkaddr.WithTTL(linkaddr.StagingMargin+time.Second))
	if s.TTL() != linkaddr.StagingMargin+time.Second {
		t.Errorf("TTL() = %v", s.TTL())
	}
	if s := mustSigner(t, testKey, p); s.TTL() != linkaddr.DefaultTTL {
		t.Errorf("default TTL() = %v", s.TTL())
	}
}
