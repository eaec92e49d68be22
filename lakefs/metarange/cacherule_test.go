package metarange

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// cacheRuleDigest is the SHA-256 of the keys the cache derives from a fixed
// corpus of addresses under several namespaces (TestCacheVersionPinsTheRule).
const cacheRuleDigest = "a3c37e9d516267ff08fc798fb3cea19b4f561bfb4829b2219b2d5241c06f7924"

// TestCacheVersionPinsTheRule: a cache is trusted when its format version
// matches, so a change to the rule that derives keys (this package's or
// nsaddr's) must bump cacheVersion, or runs would go on reading caches of
// the old rule. This test pins the rule's output on a fixed corpus: when it
// fails, the rule changed: bump cacheVersion, then set cacheRuleDigest to
// the digest printed (a change to the corpus, oddEntries, changes it too).
func TestCacheVersionPinsTheRule(t *testing.T) {
	h := sha256.New()
	fmt.Fprintf(h, "version %d\n", cacheVersion)
	for _, ns := range []string{
		testNamespace, "gs://bucket/repo", "https://acct.blob.core.windows.net/c/repo",
		"local:///var/lakefs/repo", "s3://bucket",
	} {
		parsed, err := parseNamespace(ns)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(28, 28))
		var entries []fixtureEntry
		for _, e := range oddEntries(rng, 2000, "pin") {
			e.address = strings.ReplaceAll(e.address, testNamespace+"/", ns+"/")
			entries = append(entries, e.fixtureEntry)
		}
		table := writeTable(t, typeRanges, rangeRecords(entries), lakeFSOptions)
		col := &collector{max: DefaultCacheMaxBytes}
		c, err := deriveRange(table, id{}, &parsed, col, func(string, string) error { return nil }, nil)
		if err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		keys, _ := col.sorted()
		fmt.Fprintf(h, "%s %+v %d\n", ns, c, len(keys))
		for _, k := range keys {
			fmt.Fprintf(h, "%q\n", k)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != cacheRuleDigest {
		t.Errorf("the keys a cache holds changed (digest %s, pinned %s): bump cacheVersion, then pin the new digest", got, cacheRuleDigest)
	}
}
