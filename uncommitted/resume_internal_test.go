package uncommitted

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestResumeAt(t *testing.T) {
	cases := []struct {
		floor        string
		floorScanned bool
		next         string
		want         string
		ok           bool
	}{
		{"a", true, "b", "b", true},
		{"", false, "\x80", "", true},
		{"x", false, "x\xff", "x", true},
		{"k", true, "k\x80", "k\x00", true},
		{"k\x80", true, "k\x81", "", false},
		{"j\x80", true, "k\x80", "k\x00", true},
		{"k\x01", true, "k\x80", "k\x01\x00", true},
	}
	for _, c := range cases {
		got, ok := resumeAt(c.floor, c.floorScanned, c.next)
		if got != c.want || ok != c.ok {
			t.Errorf("resumeAt(%q, %v, %q) = %q, %v; want %q, %v", c.floor, c.floorScanned, c.next, got, ok, c.want, c.ok)
		}
	}
}

// TestResumeAtProperty: whatever the names, a resume point is valid UTF-8
// and lies after what was scanned and at or before the next entry.
func TestResumeAtProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0, 1, 'a', 'k', 0x7f, 0x80, 0xbf, 0xc3, 0xa9, 0xe6, 0xff}
	name := func() string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 200000 {
		floor, next := name(), name()
		scanned := r.IntN(2) == 0
		if floor > next || scanned && floor == next || !scanned && !utf8.ValidString(floor) {
			continue
		}
		got, ok := resumeAt(floor, scanned, next)
		if !ok {
			continue
		}
		if !utf8.ValidString(got) || got > next || got < floor || scanned && got == floor {
			t.Fatalf("resumeAt(%q, %v, %q) = %q", floor, scanned, next, got)
		}
	}
}
