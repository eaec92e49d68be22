package retention

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestInterner compares the interner with a map: every ID gets one dense
// index, and reads back as itself, across table growth and arena chunks.
func TestInterner(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ids := []string{"0", "00", "ab", "AB", "aB", "abc", "g0", "\x00", "\xff\xfe", strings.Repeat("f", maxIDLen),
		strings.Repeat("x", maxIDLen-1)}
	for k := range 10_000 {
		switch k % 10 {
		case 0:
			ids = append(ids, strings.Repeat("ab", r.IntN(3000)+1)) // large records fill chunks
		case 1, 2, 3:
			ids = append(ids, fmt.Sprintf("c%d", r.IntN(5_000)))
		default:
			ids = append(ids, fmt.Sprintf("%064x", r.Uint64()))
		}
	}
	in := newInterner()
	model := map[string]int32{}
	for _, id := range ids {
		idx, added, err := in.intern(id)
		if err != nil {
			t.Fatalf("intern(%.20q): %v", id, err)
		}
		want, seen := model[id]
		if !seen {
			want = int32(len(model))
			model[id] = want
		}
		if idx != want || added == seen {
			t.Fatalf("intern(%.20q) = %d, added %v; want %d, added %v", id, idx, added, want, !seen)
		}
	}
	if len(in.arena.chunks) < 2 {
		t.Errorf("the test fills %d chunk(s): it does not cross a chunk boundary", len(in.arena.chunks))
	}
	for id, idx := range model {
		if got := in.id(idx); got != id {
			t.Fatalf("id(%d) = %.20q, want %.20q", idx, got, id)
		}
		if n := in.arena.idLen(in.offs[idx]); n != len(id) {
			t.Fatalf("idLen(%.20q) = %d", id, n)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", maxIDLen+1)} {
		if _, _, err := in.intern(bad); !errors.Is(err, errEmptyID) && !errors.Is(err, errIDTooLong) {
			t.Errorf("intern of a %d-byte ID: %v", len(bad), err)
		}
	}
}

// TestInternerTagCollisions interns enough IDs that some share the 32 bits of
// hash a slot keeps, which only the comparison of the IDs tells apart.
func TestInternerTagCollisions(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("400 000 IDs")
	}
	const n = 400_000
	in := newInterner()
	tags := make(map[uint64]int, n)
	collisions := 0
	for k := range n {
		id := fmt.Sprintf("c%d", k)
		idx, added, err := in.intern(id)
		if err != nil || !added || idx != int32(k) {
			t.Fatalf("intern(%q) = %d, added %v, %v; want %d, added", id, idx, added, err, k)
		}
		tag := maphash.Bytes(in.seed, appendRecord(nil, id)) >> 32
		if tags[tag]++; tags[tag] > 1 {
			collisions++
		}
	}
	if collisions == 0 {
		t.Skip("no two IDs share a tag this time (about one run in 10^8)")
	}
	t.Logf("%d tag collisions", collisions)
}

// TestInternerEqualTags interns two IDs whose hashes share the 32 bits a slot
// keeps, found by a birthday search with the interner's own seed, so the
// comparison of records that tells them apart runs in every test run,
// including under -race and -short, where TestInternerTagCollisions skips.
func TestInternerEqualTags(t *testing.T) {
	in := newInterner()
	tag := func(id string) uint64 { return maphash.Bytes(in.seed, appendRecord(nil, id)) >> 32 }
	seen := make(map[uint64]string)
	var a, b string
	for k := 0; a == ""; k++ {
		if k == 4<<20 {
			t.Fatal("no two of 4 Mi IDs share a tag: is the hash 32 bits wide?")
		}
		// Half the IDs are lowercase hex (compacted records), half not.
		id := fmt.Sprintf("%x", k)
		if k%2 == 1 {
			id = fmt.Sprintf("id-%d", k)
		}
		if other, ok := seen[tag(id)]; ok {
			a, b = other, id
		}
		seen[tag(id)] = id
	}
	t.Logf("%q and %q share tag %#x", a, b, tag(a))
	for _, step := range []struct {
		id    string
		idx   int32
		added bool
	}{{a, 0, true}, {b, 1, true}, {a, 0, false}, {b, 1, false}} {
		idx, added, err := in.intern(step.id)
		if err != nil || idx != step.idx || added != step.added {
			t.Fatalf("intern(%q) = %d, added %v, %v; want %d, added %v", step.id, idx, added, err, step.idx, step.added)
		}
	}
	if in.id(0) != a || in.id(1) != b {
		t.Errorf("ids read back as %q, %q; want %q, %q", in.id(0), in.id(1), a, b)
	}
}
