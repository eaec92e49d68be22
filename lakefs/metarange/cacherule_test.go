package metarange

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
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

// spellingsRuleDigest is the SHA-256 of what deriveRange makes of every
// spelling in spellingCorpus under every namespace of spellingNamespaces
// (TestCacheVersionPinsTheSpellings).
const spellingsRuleDigest = "c93928940c64d1eaad51e8fbb2ed3139a141be8c0139093c968904e83a20fd68"

// spellingNamespaces are namespaces of every storage the rule knows, in
// several spellings. The local ones name folders that do not exist, so
// that no symbolic link of the machine changes the answer.
var spellingNamespaces = []string{
	"s3://bucket/repo", "s3://bucket", "S3://Bucket/repo/", "s3://bucket/re%20po", "gs://bucket/repo",
	"https://acct.blob.core.windows.net/c/repo", "https://acct.blob.core.windows.net/c",
	"local:///srv-lakegc-pin/repo", "local://repo", "mem://bucket/repo",
}

// spellingCorpus returns addresses of every shape a range's entry may
// hold under namespace ns: its own spellings of a key (case, escapes,
// dot segments, doubled slashes, queries, signatures) and fixed ones of
// every storage (S3's schemes and user info, Azure's endpoint domains and
// ports, local and file forms, imports with and without lakeFS's tails),
// and relative keys S3's old SDK cleaned.
func spellingCorpus(ns string) []string {
	ns = strings.TrimRight(ns, "/")
	scheme, rest, _ := strings.Cut(ns, "://")
	keys := []string{
		"data/gc5ftg2d4d2gdp2b000g/cv9hsj2d4d2gdp2b0000",
		"data/gc5ftg2d4d2gdp2b000g/cv9hsj2d4d2gdp2b0000,c2lnbmF0dXJl",
		"data/repo-main:0b7a3b8e-8f4c-4b3a-9d2e-1c2d3e4f5a6b/V1StGXR8_Z5jdHi6B-myT",
		"0123456789ab4def8123456789abcdef",
		"data/year%3D2024/a%2Fb",
		"data//x/./y/../z",
	}
	var out []string
	for _, k := range keys {
		out = append(out,
			ns+"/"+k, strings.ToUpper(scheme)+"://"+rest+"/"+k, ns+"//"+k, ns+"/./"+k,
			ns+"/x/../"+k, ns+"/"+k+"?versionId=1", ns+"/"+k+"#f", ns+"%2F"+k, ns,
			"s3://bucket/repo/"+k, "s3a://bucket/repo/"+k, "s3n://BUCKET/repo/"+k, "s3://user@bucket/repo/"+k,
			"s3://bucket/other/"+k, "s3://bucket/"+k, "s3://imports/"+k, "s3://imports/"+url.PathEscape(k), "s3:///repo/"+k,
			"gs://bucket/repo/"+k, "gs://elsewhere/"+k,
			"https://acct.blob.core.windows.net/c/repo/"+k, "https://acct.dfs.core.windows.net/c/repo/"+k,
			"https://acct.blob.core.windows.net:443/c/repo/"+k, "https://acct.blob.core.windows.net/c/repo%2F"+k,
			"https://acct.blob.core.windows.net/c//repo/"+k, "https://acct.blob.core.windows.net//c/repo/"+k+"/", "https://other.blob.core.windows.net/c/repo/"+k,
			"http://acct.blob.core.windows.net/c/repo/"+k, "https://acct.blob.core.windows.net/c/"+k,
			"local:///srv-lakegc-pin/repo/"+k, "local://repo/"+k, "local:///srv-lakegc-pin/./repo/"+k,
			"local:///elsewhere-lakegc-pin/root/repo/"+k, "file:///srv-lakegc-pin/repo/"+k,
			"file:/srv-lakegc-pin/repo/"+k, "file://localhost/srv-lakegc-pin/repo/"+k,
			"file://host/srv-lakegc-pin/repo/"+k, "mem://bucket/repo/"+k, "memory://bucket/repo/"+k,
			"not-a-uri/"+k, "/abs/"+k, "./"+k, "/"+k, "../"+k, k, k+"/", "ftp://bucket/repo/"+k,
		)
	}
	return out
}

// TestCacheVersionPinsTheSpellings pins, as TestCacheVersionPinsTheRule
// does, the rule on every branch of the address rules (package nsaddr's
// and this package's): what each spelling of spellingCorpus becomes under
// each namespace, as every address type (the keys with their unsigned
// forms, the counts, the outside tails probed, a namespace mismatch) and
// the sizes and checksums a cache keeps. When it fails the rule changed:
// bump cacheVersion, then pin the digest printed.
func TestCacheVersionPinsTheSpellings(t *testing.T) {
	h := sha256.New()
	fmt.Fprintf(h, "version %d\n", cacheVersion)
	etags := []string{"", "0123456789abcdef0123456789abcdef", "\"0123456789ABCDEF0123456789abcdef-3\"", "W/odd"}
	n := 0
	for _, s := range spellingNamespaces {
		ns, err := parseNamespace(s)
		if err != nil {
			fmt.Fprintf(h, "namespace %q: invalid\n", s)
			continue
		}
		for _, address := range spellingCorpus(s) {
			for _, typ := range []addressType{relative, full, byPrefixDeprecated} {
				n++
				data := encodeEntry(address, typ)
				data = protowire.AppendTag(data, entrySizeField, protowire.VarintType)
				data = protowire.AppendVarint(data, uint64(n%3))
				data = protowire.AppendTag(data, entryETagField, protowire.BytesType)
				data = protowire.AppendString(data, etags[n%len(etags)])
				identity := sha256.Sum256(data)
				table := writeTable(t, typeRanges, []record{{[]byte("p"), gravelerValue(identity[:], data)}}, lakeFSOptions)
				col := &collector{max: DefaultCacheMaxBytes}
				var probed []string
				probe := func(address, tail string) error { probed = append(probed, tail); return nil }
				c, err := deriveRange(table, id{}, &ns, col, probe, col.stat)
				fmt.Fprintf(h, "%q %q %d: ", s, address, typ)
				switch {
				case errors.Is(err, ErrNamespaceMismatch):
					fmt.Fprintf(h, "mismatch\n")
					continue
				case err != nil:
					t.Fatalf("%s %s: %v", s, address, err)
				}
				keys, stats := col.sorted()
				fmt.Fprintf(h, "%+v probed %q keys %q", c, probed, keys)
				for _, st := range stats {
					fmt.Fprintf(h, " %d/%q", st.size, st.sum)
				}
				fmt.Fprintln(h)
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != spellingsRuleDigest {
		t.Errorf("the keys a cache holds changed on %d spellings (digest %s, pinned %s): bump cacheVersion, then pin the new digest", n, got, spellingsRuleDigest)
	}
}
