package sweep

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fullURIModel is the plain statement of fullURI: the text before the
// first "://" is a URI scheme (RFC 3986: a letter, then letters, digits,
// '+', '-' or '.'), or the key is a file or local URI with a single slash
// ("file:/x", as lakeFS's file adapters spell a full address).
func fullURIModel(key string) bool {
	if scheme, rest, ok := strings.Cut(key, ":"); ok && strings.HasPrefix(rest, "/") {
		if s := strings.ToLower(scheme); s == "file" || s == "local" {
			return true
		}
	}
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
		"data/x://y", "s3:://x", "gs://", "a://b://c", ":", "x:", "é://x", "data/slice/obj",
		"file:/srv/lake/data/x", "FILE:/x", "local:/x", "file:x", "data/file:/x", "file:", "files:/x"}
	for _, k := range named {
		if got, want := fullURI(k), fullURIModel(k); got != want {
			t.Errorf("fullURI(%q) = %v, want %v", k, got, want)
		}
	}
	tokens := []string{"a", "Z", "0", "9", "+", ".", "-", ":", "/", "é", "_", "file", "LoCaL"}
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 200000 {
		b.Reset()
		for range rng.IntN(9) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		k := b.String()
		if got, want := fullURI(k), fullURIModel(k); got != want {
			t.Fatalf("fullURI(%q) = %v, want %v", k, got, want)
		}
	}
}
