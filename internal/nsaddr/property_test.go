package nsaddr

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestSpellingsProperty checks the classes against a plain model on random
// namespaces and keys: the namespace as spelled, then a key, is Inside and
// keeps the key; every other spelling of the same place (a scheme alias, a
// "." or ".." detour, a doubled slash, a percent-escape of a path letter,
// a file URI's other forms) is a Mismatch; a sibling folder, another
// bucket or another store is Outside.
func TestSpellingsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz0123456789-_"
		b := make([]byte, 1+rng.IntN(8))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	folder := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = word()
		}
		return strings.Join(parts, "/")
	}
	for range 2000 {
		nsPath := folder(1 + rng.IntN(3))
		key := folder(1+rng.IntN(3)) + "/" + word()
		var ns string
		var others []string // other spellings of ns
		var outside []string
		switch rng.IntN(2) {
		case 0:
			bucket := word()
			ns = "s3://" + bucket + "/" + nsPath
			others = []string{
				"s3a://" + bucket + "/" + nsPath,
				"s3n://" + bucket + "/" + nsPath,
				"s3://" + bucket + "/./" + nsPath,
				"s3://" + bucket + "/" + word() + "/../" + nsPath,
				"s3://" + bucket + "//" + nsPath,
			}
			outside = []string{
				"s3://" + bucket + "/" + nsPath + "x",
				"s3://" + bucket + "x/" + nsPath,
				"gs://" + bucket + "/" + nsPath,
			}
		default:
			ns = "file:///" + nsPath
			others = []string{
				"file:/" + nsPath,
				"file://localhost/" + nsPath,
				"local:///" + nsPath,
				"file:///./" + nsPath,
				"file:////" + nsPath,
			}
			outside = []string{
				"file:///" + nsPath + "x",
				"file:///" + word() + "/" + nsPath,
			}
		}
		// A percent-escape of one letter of the namespace's path.
		if i := strings.IndexFunc(nsPath, func(r rune) bool { return r >= 'a' && r <= 'z' }); i >= 0 {
			escaped := nsPath[:i] + fmt.Sprintf("%%%02X", nsPath[i]) + nsPath[i+1:]
			others = append(others, strings.TrimSuffix(ns, nsPath)+escaped)
		}
		n, err := New(ns, "data")
		if err != nil {
			t.Fatal(err)
		}
		if keys, class := n.Classify(nil, ns+"/"+key); class != Inside || !slices.Contains(keys, key) {
			t.Fatalf("%s/%s: %v %q, want Inside with %q", ns, key, class, keys, key)
		}
		for _, o := range others {
			if keys, class := n.Classify(nil, o+"/"+key); class != Mismatch {
				t.Fatalf("%s/%s in %s: %v %q, want Mismatch", o, key, ns, class, keys)
			}
		}
		for _, o := range outside {
			if keys, class := n.Classify(nil, o+"/"+key); class != Outside || len(keys) != 0 {
				t.Fatalf("%s/%s in %s: %v %q, want Outside", o, key, ns, class, keys)
			}
		}
	}
}

// TestAdapterFullModel: AdapterFull against its plain statement, the rule
// package uncommitted and lakeFS's metarange reader each spelled before:
// url.ParseRequestURI accepts the address and its scheme is one of
// lakeFS's adapters'.
func TestAdapterFullModel(t *testing.T) {
	schemes := map[string]bool{"s3": true, "gs": true, "http": true, "https": true, "local": true, "mem": true, "memory": true}
	model := func(a string) bool {
		u, err := url.ParseRequestURI(a)
		return err == nil && schemes[u.Scheme]
	}
	tokens := []string{"s3", "S3", "gs", "https", "HTTP", "local", "mem", "memory", "file", "s3a", ":", "/", "//", "%", "%zz", " ", "a", "?", "#", "@", "."}
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	for i := range 200000 {
		b.Reset()
		for range rng.IntN(6) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		a := b.String()
		if i < len(tokens) {
			a = tokens[i] + "://bucket/x"
		}
		if got, want := AdapterFull(a), model(a); got != want {
			t.Fatalf("AdapterFull(%q) = %v, want %v", a, got, want)
		}
	}
}
