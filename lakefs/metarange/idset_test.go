package metarange

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const digits = "0123456789abcdefABCDEFg/."
	for range 20000 {
		b := make([]byte, 62+rng.IntN(5))
		for i := range b {
			if rng.IntN(100) == 0 {
				b[i] = digits[rng.IntN(len(digits))]
			} else {
				b[i] = digits[rng.IntN(16)]
			}
		}
		v, ok := parseID(b)
		decoded, err := hex.DecodeString(string(b))
		want := err == nil && len(b) == 64 && strings.ToLower(string(b)) == string(b)
		if ok != want || ok && string(v[:]) != string(decoded) {
			t.Fatalf("parseID(%q) = %x, %v; want ok=%v", b, v, ok, want)
		}
		if ok && v.String() != string(b) {
			t.Fatalf("parseID(%q).String() = %q", b, v.String())
		}
	}
}

func TestIDSetBound(t *testing.T) {
	s := newIDSet(2)
	ids := []id{{1}, {2}, {3}}
	for i, want := range []struct{ added, full bool }{{true, false}, {true, false}, {false, true}} {
		if added, full := s.add(ids[i]); added != want.added || full != want.full {
			t.Fatalf("add %d: %v, %v", i, added, full)
		}
	}
	if added, full := s.add(ids[0]); added || full {
		t.Fatalf("add again: %v, %v", added, full)
	}
	if s.len() != 2 {
		t.Fatalf("len %d", s.len())
	}
}
