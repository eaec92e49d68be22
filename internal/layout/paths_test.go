package layout

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPathsAsLakeFS: the paths are lakeFS's templates (pkg/graveler/retention,
// GarbageCollectionManager; the Spark client's unified reports), filled in.
func TestPathsAsLakeFS(t *testing.T) {
	for _, p := range []string{"_lakefs", "a/b", ""} {
		id := "cvb0qk4q5r7s3m1ve8ag"
		join := func(format string, args ...any) string {
			return strings.TrimPrefix(fmt.Sprintf(format, append([]any{p}, args...)...), "/")
		}
		for _, c := range []struct{ got, want string }{
			{RulesKey(p), join("%s/retention/gc/rules/config.json")},
			{CommitsKey(p, id), join("%s/retention/gc/commits/run_id=%s/commits.csv", id)},
			{RunPath(p, Commits, id), join("%s/retention/gc/commits/run_id=%s/", id)},
			{Runs(p, Uncommitted), join("%s/retention/gc/uncommitted/")},
			{UncommittedFiles(p, id), join("%s/retention/gc/uncommitted/%s/uncommitted/", id)},
			{ExportStateKey(p, id), join("%s/retention/gc/uncommitted/%s/_lakegc_export.json", id)},
			{Runs(p, Report), join("%s/retention/gc/unified/")},
			{RunPath(p, Report, id), join("%s/retention/gc/unified/%s/", id)},
		} {
			if c.got != c.want {
				t.Errorf("prefix %q: got %q, want %q", p, c.got, c.want)
			}
		}
	}
}

// runIDModel is ValidRunID's rule stated plainly.
var runIDModel = regexp.MustCompile(`^[A-Za-z0-9_.=-]{1,128}$`)

// TestValidRunID compares ValidRunID with its model on named IDs and on
// random strings of the characters that decide it.
func TestValidRunID(t *testing.T) {
	model := func(id string) bool { return runIDModel.MatchString(id) && id != "." && id != ".." }
	named := []string{"", ".", "..", "...", "r1", "cvb0qk4q5r7s3m1ve8ag", "9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e",
		"a/b", "../x", "a\\b", "a b", "a\nb", "é", "run_id=1", strings.Repeat("a", 128), strings.Repeat("a", 129)}
	for _, id := range named {
		if got, want := ValidRunID(id), model(id); got != want {
			t.Errorf("ValidRunID(%q) = %v, want %v", id, got, want)
		}
	}
	chars := []rune("aZ09-_.=/\\ :é\x00")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		b := make([]rune, rng.IntN(6))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		if id := string(b); ValidRunID(id) != model(id) {
			t.Fatalf("ValidRunID(%q) = %v, want %v", id, ValidRunID(id), model(id))
		}
	}
}

// TestNewRunIDDescends: run IDs are valid, read back their time, and a run
// started a second or more later sorts first, until the 2094 wrap.
func TestNewRunIDDescends(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	wrap := time.Unix(ReversalPoint%(1<<32), 0)
	for range 10000 {
		a := time.Unix(rng.Int64N(wrap.Unix()-1), 0)
		b := a.Add(time.Duration(1+rng.Int64N(wrap.Unix()-a.Unix()-1)) * time.Second)
		ida, idb := NewRunID(a), NewRunID(b)
		if !ValidRunID(ida) || idb >= ida {
			t.Fatalf("NewRunID(%v) = %q, NewRunID(%v) = %q: not descending", a, ida, b, idb)
		}
		if got, ok := SliceTime(ida); !ok || !got.Equal(a.UTC()) {
			t.Fatalf("SliceTime(NewRunID(%v)) = %v, %v", a, got, ok)
		}
	}
}

func TestValidPrefix(t *testing.T) {
	for p, want := range map[string]bool{
		"_lakefs": true, "a/b": true, "data": true,
		"": false, "/a": false, "a/": false, "a//b": false, "s3://b": false, "/": false,
	} {
		if got := ValidPrefix(p); got != want {
			t.Errorf("ValidPrefix(%q) = %v, want %v", p, got, want)
		}
	}
	for _, c := range []struct {
		storage, data string
		want          bool
	}{
		{"_lakefs", "data", false}, {"_lakefs", "_lakefs", true}, {"_lakefs", "_lakefs/data", true},
		{"a/b", "a", true}, {"_lakefs", "_lakefsdata", false}, {"a", "ab/c", false},
	} {
		if got := PrefixesOverlap(c.storage, c.data); got != c.want {
			t.Errorf("PrefixesOverlap(%q, %q) = %v, want %v", c.storage, c.data, got, c.want)
		}
	}
}

func TestQuarantinePaths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Quarantines("_lakefs"), "_lakefs/retention/gc/quarantine/"},
		{QuarantinePath("_lakefs", "r1"), "_lakefs/retention/gc/quarantine/r1/"},
		{QuarantineKey("_lakefs", "r1", "data/g1/a"), "_lakefs/retention/gc/quarantine/r1/objects/data/g1/a"},
		{QuarantineKey("", "r1", "x"), "retention/gc/quarantine/r1/objects/x"},
		{LeaseFolder("_lakefs"), "_lakefs/retention/gc/lease/"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, a := range []string{"data/g1/a", "x", "a/b/c/"} {
		got, ok := QuarantineAddress("p", "r", QuarantineKey("p", "r", a))
		if !ok || got != a {
			t.Errorf("QuarantineAddress(QuarantineKey(%q)) = %q, %v", a, got, ok)
		}
	}
	for _, k := range []string{"p/retention/gc/quarantine/r/objects/", "p/retention/gc/quarantine/r2/objects/x", "p/retention/gc/quarantine/r/manifest/x"} {
		if a, ok := QuarantineAddress("p", "r", k); ok {
			t.Errorf("QuarantineAddress(%q) = %q, true", k, a)
		}
	}
}

func TestRangeCachePaths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{RangeCache("_lakefs"), "_lakefs/retention/gc/lakegc-ranges/"},
		{RangeCacheKey("_lakefs", "ab"), "_lakefs/retention/gc/lakegc-ranges/ab"},
		{RangeCacheRuns("p/q"), "p/q/retention/gc/lakegc-ranges/runs/"},
		{RangeCacheRunKey("_lakefs", "r1"), "_lakefs/retention/gc/lakegc-ranges/runs/r1"},
		{RangeCacheKey("", "ab"), "retention/gc/lakegc-ranges/ab"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
