package sweep

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fullURIModel is the plain statement of fullURI: the text before the
// first "://" is a URI scheme (RFC 3986: a letter, then letters, digits,
// '+', '-' or '.').
func fullURIModel(key string) bool {
	scheme, _, ok := strings.Cut(key, "://")
	if !ok || scheme == "" {
		return false
	}
	for j, r := range scheme {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-')) {
			return false
		}
	}
	return true
}

// TestFullURIMatchesModel compares fullURI with its model on keys built
// from the characters that decide it, and on named cases.
func TestFullURIMatchesModel(t *testing.T) {
	named := []string{"", "s3://b/k", "S3://b", "a+b.c-d://x", "1s3://x", "://x", "s3:/x", "s3:x://y",
		"data/x://y", "s3:://x", "gs://", "a://b://c", ":", "x:", "é://x", "data/slice/obj"}
	for _, k := range named {
		if got, want := fullURI(k), fullURIModel(k); got != want {
			t.Errorf("fullURI(%q) = %v, want %v", k, got, want)
		}
	}
	const alphabet = "aZ09+.-:/é_"
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []rune(alphabet)
	var b strings.Builder
	for range 200000 {
		b.Reset()
		for range rng.IntN(9) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		k := b.String()
		if got, want := fullURI(k), fullURIModel(k); got != want {
			t.Fatalf("fullURI(%q) = %v, want %v", k, got, want)
		}
	}
}
