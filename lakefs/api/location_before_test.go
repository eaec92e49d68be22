package api

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// beforeRelativeKey and beforeResolveNamespace are RelativeKey and
// ResolveNamespace as they stood before the module's one rule for URI
// schemes replaced their hand-made parses at "://" (main at 1259e4f): the
// models the new ones may only be stricter than.
func beforeRelativeKey(namespace, location string) (string, bool) {
	ns := strings.TrimRight(namespace, "/")
	if i := strings.Index(ns, "://"); i <= 0 || i+3 == len(ns) {
		return "", false
	}
	key, ok := strings.CutPrefix(location, ns+"/")
	if !ok {
		return "", false
	}
	for _, seg := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return key, true
}

func beforeResolveNamespace(namespace string, commits *PrepareCommitsResult) (string, bool) {
	tail := "/retention/gc/commits/run_id=" + commits.RunID + "/commits.csv"
	rest, ok := strings.CutSuffix(commits.CommitsLocation, tail)
	i := strings.LastIndex(rest, "/")
	if !ok || commits.RunID == "" || strings.Contains(commits.RunID, "/") || i < 0 || i == len(rest)-1 {
		return "", false
	}
	root := rest[:i]
	ns := strings.TrimRight(namespace, "/")
	if root == ns && strings.Contains(ns, "://") {
		return root, true
	}
	if nsPath, ok := strings.CutPrefix(ns, "local://"); ok {
		nsPath = strings.TrimLeft(nsPath, "/")
		if nsPath != "" && strings.HasPrefix(root, "local:///") && strings.HasSuffix(root, "/"+nsPath) {
			return root, true
		}
	}
	return "", false
}

// validSchemeModel is RFC 3986's scheme: a letter, then letters, digits,
// '+', '-' or '.'.
func validSchemeModel(s string) bool {
	for i, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && ('0' <= r && r <= '9' || strings.ContainsRune("+-.", r))) {
			return false
		}
	}
	return s != ""
}

// TestLocationAsBefore: on namespaces and locations spelled from the
// pieces that decide them, RelativeKey and ResolveNamespace give what they
// gave before, or refuse where the namespace's text before its first "://"
// is not a URI scheme — then lakeFS could not have written there, and a
// refusal stops the run. They never accept what was refused, nor answer
// another key or root: either would let a location outside the namespace
// name an object inside it.
func TestLocationAsBefore(t *testing.T) {
	schemes := []string{"s3", "S3", "local", "LOCAL", "gs", "https", "s3a", "1s3", "a b", "", "x/y", "é"}
	seps := []string{"://", ":///", ":/", ":", "//"}
	paths := []string{"bucket", "bucket/repo1", "repo1", "var/lakefs/repo1", "b/r", "", "/", ".", ".."}
	tails := []string{"", "/", "/x", "/_lakefs/retention/gc/commits/run_id=r1/commits.csv", "/./x", "//x", "/a/../x", "0/x"}
	runIDs := []string{"r1", "", "a/b", "cvb0qk4q5r7s3m1ve8ag"}
	pick := func(rng *rand.Rand, s []string) string { return s[rng.IntN(len(s))] }
	rng := rand.New(rand.NewPCG(21, 22))
	var refusedNew, keys, roots int
	for range 300000 {
		ns := pick(rng, schemes) + pick(rng, seps) + pick(rng, paths)
		if rng.IntN(4) == 0 {
			ns += "/"
		}
		// A location in the namespace, in lakeFS's absolute local
		// spelling of it, or in another namespace.
		var root string
		switch rng.IntN(3) {
		case 0:
			root = strings.TrimRight(ns, "/")
		case 1:
			root = "local:///var/lakefs/" + pick(rng, paths)
		default:
			root = pick(rng, schemes) + pick(rng, seps) + pick(rng, paths)
		}
		loc := root + pick(rng, tails)

		key, err := RelativeKey(ns, loc)
		oldKey, oldOK := beforeRelativeKey(ns, loc)
		if err == nil {
			keys++
		}
		switch {
		case err == nil && (!oldOK || key != oldKey):
			t.Fatalf("RelativeKey(%q, %q) = %q; before: %q, %v", ns, loc, key, oldKey, oldOK)
		case err != nil && oldOK:
			scheme, _, _ := strings.Cut(ns, "://")
			if validSchemeModel(scheme) {
				t.Fatalf("RelativeKey(%q, %q) refused (%v); before %q, and the scheme is valid", ns, loc, err, oldKey)
			}
			refusedNew++
		}

		run := pick(rng, runIDs)
		res := &PrepareCommitsResult{RunID: run, CommitsLocation: root + "/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv"}
		if rng.IntN(5) == 0 {
			res.CommitsLocation = loc
		}
		got, err := ResolveNamespace(ns, res)
		old, oldOK := beforeResolveNamespace(ns, res)
		if err == nil {
			roots++
		}
		switch {
		case err == nil && (!oldOK || got != old):
			t.Fatalf("ResolveNamespace(%q, %+v) = %q; before: %q, %v", ns, res, got, old, oldOK)
		case err != nil && oldOK:
			scheme, _, _ := strings.Cut(ns, "://")
			if validSchemeModel(scheme) {
				t.Fatalf("ResolveNamespace(%q, %+v) refused (%v); before %q, and the scheme is valid", ns, res, err, old)
			}
			refusedNew++
		}
	}
	t.Logf("%d keys and %d roots accepted, %d newly refused", keys, roots, refusedNew)
	if refusedNew == 0 || keys < 1000 || roots < 1000 {
		t.Errorf("%d keys and %d roots accepted, %d newly refused: the spellings miss a case", keys, roots, refusedNew)
	}
}
