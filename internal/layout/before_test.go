package layout

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rs/xid"
)

// The copies this package replaced, as they stood before it (main at
// 1259e4f), each the model of the function that now answers for it: a key
// that moved would leave lakeFS's files, or lakegc's own, where no reader
// looks, and a check that loosened would let a run ID or a prefix name a
// folder outside the tree.

// beforePrefixedKey is package retention's old join of a storage prefix
// and a path below it.
func beforePrefixedKey(prefix, suffix string) string {
	prefix = strings.TrimRight(prefix, "/")
	if prefix == "" {
		prefix = StoragePrefix
	}
	return prefix + "/" + suffix
}

// beforeUncommittedRunFolder is package uncommitted's old runFolder.
func beforeUncommittedRunFolder(storagePrefix, runID string) string {
	if storagePrefix == "" {
		return "retention/gc/uncommitted/" + runID + "/uncommitted/"
	}
	return storagePrefix + "/retention/gc/uncommitted/" + runID + "/uncommitted/"
}

// beforeBadPrefix is the old prefix check of lakegc's Config and of sweep
// (sweep also refused "").
func beforeBadPrefix(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") || strings.Contains(p, "://")
}

// beforeValidRunID is the old run-ID check of lakegc's Config and of sweep.
func beforeValidRunID(id string) bool {
	if id == "" || len(id) > 128 || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '=':
		default:
			return false
		}
	}
	return true
}

// randomName returns a string of up to n tokens.
func randomName(rng *rand.Rand, tokens []string, n int) string {
	var b strings.Builder
	for range rng.IntN(n + 1) {
		b.WriteString(tokens[rng.IntN(len(tokens))])
	}
	return b.String()
}

// TestPathsAsBefore: every path is byte for byte the one each package
// spelled before, for storage prefixes and run IDs as the callers pass
// them.
func TestPathsAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	prefixTokens := []string{"_lakefs", "a", "Z", "0", "-", "_", ".", "/", "x=1"}
	idTokens := []string{"a", "Z", "0", "-", "_", ".", "=", "cvb0qk4q5r7s3m1ve8ag"}
	for i := range 20000 {
		p := randomName(rng, prefixTokens, 5)
		if i == 0 {
			p = StoragePrefix
		}
		id := randomName(rng, idTokens, 4)
		if !ValidPrefix(p) || !ValidRunID(id) {
			continue // the callers check both first
		}
		for _, c := range []struct{ who, got, want string }{
			{"lakegc rules key", RulesKey(p), p + "/retention/gc/rules/config.json"},
			{"lakegc report folder", RunPath(p, Report, id), p + "/retention/gc/unified/" + id + "/"},
			{"lakegc export state", ExportStateKey(p, id), p + "/retention/gc/uncommitted/" + id + "/_lakegc_export.json"},
			{"lakegc export folder", UncommittedFiles(p, id), p + "/retention/gc/uncommitted/" + id + "/uncommitted/"},
			{"uncommitted run folder", UncommittedFiles(p, id), beforeUncommittedRunFolder(p, id)},
			{"uncommitted run folder, no prefix", UncommittedFiles("", id), beforeUncommittedRunFolder("", id)},
			{"retention commits key", CommitsKey(p, id), beforePrefixedKey(p, fmt.Sprintf("retention/gc/commits/run_id=%s/commits.csv", id))},
			{"retention rules key", RulesKey(p), beforePrefixedKey(p, "retention/gc/rules/config.json")},
			{"sweep report root", Runs(p, Report), p + "/retention/gc/unified/"},
			{"sweep report dir", RunPath(p, Report, id), p + "/retention/gc/unified/" + id + "/"},
			{"sweep summary", RunPath(p, Report, id) + SummaryFile, p + "/retention/gc/unified/" + id + "/summary.json"},
			{"sweep candidates", RunPath(p, Report, id) + DeletedFolder, p + "/retention/gc/unified/" + id + "/deleted/"},
			{"sweep records", RunPath(p, Report, id) + RecordsFolder, p + "/retention/gc/unified/" + id + "/_lakegc/"},
			{"host export", strings.TrimSuffix(UncommittedFiles(p, id), "/"), p + "/retention/gc/uncommitted/" + id + "/uncommitted"},
			{"host commits", CommitsKey(p, id), p + "/retention/gc/commits/run_id=" + id + "/commits.csv"},
			{"api commits tail", "/" + CommitsKey("", id), "/retention/gc/commits/run_id=" + id + "/commits.csv"},
		} {
			if c.got != c.want {
				t.Fatalf("%s, prefix %q, run %q: %q, before %q", c.who, p, id, c.got, c.want)
			}
		}
	}
}

// TestChecksAsBefore: ValidPrefix refuses what the old prefix checks
// refused, and ValidRunID accepts exactly what lakegc's and sweep's old
// run-ID checks accepted.
func TestChecksAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	tokens := []string{"a", "Z", "0", "-", "_", ".", "=", "/", ":", "\\", " ", "é", "\x00", "_lakefs", "s3://"}
	for i := range 200000 {
		s := randomName(rng, tokens, 6)
		if i == 0 {
			s = strings.Repeat("a", 129)
		}
		// lakegc's Config allowed "" (its default then applies), sweep did not.
		if got, want := !ValidPrefix(s), s == "" || beforeBadPrefix(s); got != want {
			t.Fatalf("ValidPrefix(%q) = %v, before %v", s, !got, !want)
		}
		if got, want := ValidRunID(s), beforeValidRunID(s); got != want {
			t.Fatalf("ValidRunID(%q) = %v, before %v", s, got, want)
		}
	}
}

// TestLakeFSRunIDsValid: every run ID lakeFS makes passes ValidRunID, so
// the stricter check refuses none of a lakeFS host's runs: its
// GarbageCollectionManager names commits, uncommitted and (through its
// Spark client) unified runs by an xid of 4000-01-01 less the time, at any
// time, the wrapped ones after 2094 included, and older Spark clients and
// tests name reports by UUIDs, in either case.
func TestLakeFSRunIDsValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 100000 {
		sec := rng.Int64N(1 << 33) // 1970 to 2242
		id := xid.NewWithTime(time.Unix(64060588800-sec, 0).UTC()).String()
		if !ValidRunID(id) {
			t.Fatalf("lakeFS's run ID %q (for %v) refused", id, time.Unix(sec, 0).UTC())
		}
		u := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&(1<<48-1))
		for _, u := range []string{u, strings.ToUpper(u)} {
			if !ValidRunID(u) {
				t.Fatalf("UUID run ID %q refused", u)
			}
		}
	}
}
