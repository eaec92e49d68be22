package s3sim

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestAddLikeNew: slices added after New list, and read back through
// Gone, as if New had been given them (in key order, positions following
// New's), and an overlapping one is refused.
func TestAddLikeNew(t *testing.T) {
	all := testSlices()
	// Leave out data/s1/ (position 2) and data/s4/ (position 5) at first.
	var first, added []Slice
	for i, d := range all {
		if i == 2 || i == 5 {
			added = append(added, d)
		} else {
			first = append(first, d)
		}
	}
	s, err := New(first, WithLatency(NoLatency))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(added...); err != nil {
		t.Fatal(err)
	}
	want, err := New(all, WithLatency(NoLatency))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "data/", "data/s4/"} {
		for _, d := range []string{"", "/"} {
			got, exp := listAll(t, s.Bucket(), p, d, 7), listAll(t, want.Bucket(), p, d, 7)
			if !slices.Equal(got, exp) {
				t.Fatalf("list %q %q after Add:\n%v\nwant\n%v", p, d, got, exp)
			}
		}
	}
	// Positions: data/s4/ was given second to Add, after New's 5 slices.
	ctx := context.Background()
	key := "data/s4/" + all[5].Name(7)
	if err := s.Bucket().Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	var gone []int
	s.Gone(len(first)+1, func(i int) { gone = append(gone, i) })
	if !slices.Equal(gone, []int{7}) {
		t.Fatalf("Gone(%d) = %v, want [7]", len(first)+1, gone)
	}
	if err := s.Add(Slice{Prefix: "z/", Count: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add of a slice of -1 objects: %v, want ErrInvalid", err)
	}
	if err := s.Add(Slice{Prefix: "data/s1/", Count: 1, ModTime: old}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add of an overlapping slice: %v, want ErrInvalid", err)
	}
	if err := s.Bucket().WriteAll(ctx, "data/s9/x", []byte("w"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Slice{Prefix: "data/s9/", Count: 1, Name: func(int) string { return "x" }, ModTime: old}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add of a slice holding a written key: %v, want ErrInvalid", err)
	}
}

// TestCloneApart: a clone starts as the store stands and the two change
// apart.
func TestCloneApart(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, WithLatency(NoLatency))
	b := s.Bucket()
	gone := "data/s1/" + XIDNames("data/s1/", old)(3)
	if err := b.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "w/1", []byte("one"), nil); err != nil {
		t.Fatal(err)
	}
	before := listAll(t, b, "", "", 1000)
	c := s.Clone()
	if st := c.Stats(); st != (Stats{}) {
		t.Fatalf("clone's counters %+v, want zero", st)
	}
	if got := listAll(t, c.Bucket(), "", "", 1000); !slices.Equal(got, before) {
		t.Fatalf("clone lists %v, want %v", got, before)
	}
	// Changes to the clone leave the store alone, and the other way round.
	other := "data/s1/" + XIDNames("data/s1/", old)(4)
	if err := c.Bucket().Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Bucket().Delete(ctx, "w/1"); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "w/2", []byte("two"), nil); err != nil {
		t.Fatal(err)
	}
	if !s.Exists(other) || !s.Exists("w/1") || c.Exists("w/2") || c.Exists(gone) {
		t.Fatalf("store and clone share changes: store has %q %v, w/1 %v; clone has w/2 %v, %q %v",
			other, s.Exists(other), s.Exists("w/1"), c.Exists("w/2"), gone, c.Exists(gone))
	}
	if s.NumGone() != 1 || c.NumGone() != 2 {
		t.Fatalf("NumGone: store %d, clone %d; want 1 and 2", s.NumGone(), c.NumGone())
	}
}
