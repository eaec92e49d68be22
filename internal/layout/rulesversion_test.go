package layout

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rulesCorpusSeeds are the keys the corpus of TestRecognizerRules is made
// from: each shape as lakeFS wrote it and near misses. Never change them,
// nor rulesCorpus: the digests recorded in testdata/recognizer-rules.txt
// are of this corpus. To cover more keys, add a second corpus and digest.
var rulesCorpusSeeds = []string{
	"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0",
	"data/gpqlf0evkf6qoaqfs800/cfcqrm596gcudfl6r4u0,AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
	"5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f",
	"5f0c3a1e9b7d4c2abe6f1b3d5c7a9e0f",
	"data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT",
	"data/repo1-main-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT",
	"data/ab-c:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT",
	"data/abc-d-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT",
	"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0/x",
	"data/h6ce3g624eave3ils1cg/report.csv",
	"data/V1StGXR8_Z5jdHi6B-myT",
	"data//c2r2is7s9gbrjaemnik0",
	"my/prefix/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0",
	"_lakefs/dummy",
	"dummy",
	"",
}

// rulesCorpusData are the data prefixes every corpus key is recognized
// under.
var rulesCorpusData = []string{DataPrefix, "my/prefix", "dat", ""}

// rulesCorpus returns the seeds and every key one edit away from a seed:
// each byte replaced by each byte of a set of boundary characters, each byte
// removed, each byte doubled.
func rulesCorpus() []string {
	const subst = "09afgvwzAFGVZ_-,/:.48b \x00\xc3"
	var out []string
	for _, seed := range rulesCorpusSeeds {
		out = append(out, seed)
		for i := range len(seed) {
			for j := range len(subst) {
				if subst[j] != seed[i] {
					out = append(out, seed[:i]+subst[j:j+1]+seed[i+1:])
				}
			}
			out = append(out, seed[:i]+seed[i+1:], seed[:i+1]+seed[i:])
		}
	}
	return out
}

// rulesDigest is the SHA-256 of the built-in rules' verdicts on the corpus:
// Recognize under each data prefix, and InSlice of the key's last element.
func rulesDigest() (string, int) {
	h := sha256.New()
	corpus := rulesCorpus()
	for _, key := range corpus {
		for _, data := range rulesCorpusData {
			fmt.Fprintf(h, "%d ", Recognize(key, data))
		}
		fmt.Fprintf(h, "%d %q\n", InSlice(key[strings.LastIndexByte(key, '/')+1:]), key)
	}
	return hex.EncodeToString(h.Sum(nil)), len(corpus)
}

// TestRecognizerRules fails when the built-in recognizer's verdicts on a
// fixed corpus differ from those recorded for RecognizerRules: a change of
// the rules must bump the version, so that an optimized run does not carry
// keys another version's rules accepted without checking them again.
// testdata/recognizer-rules.txt holds one line per version, "<version>
// <digest>", versions 1, 2, … in order; the last is RecognizerRules's.
func TestRecognizerRules(t *testing.T) {
	f, err := os.Open("testdata/recognizer-rules.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recorded := map[int]string{}
	last := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, digest, ok := strings.Cut(line, " ")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n != last+1 || len(digest) != 64 {
			t.Fatalf("testdata/recognizer-rules.txt: line %q: want \"%d <SHA-256 in hex>\"", line, last+1)
		}
		recorded[n], last = digest, n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	got, n := rulesDigest()
	if n < 5000 {
		t.Fatalf("the corpus holds %d keys: it was changed", n)
	}
	switch want, ok := recorded[RecognizerRules]; {
	case !ok || last != RecognizerRules:
		t.Fatalf("testdata/recognizer-rules.txt ends at version %d, RecognizerRules is %d: append \"%d %s\"",
			last, RecognizerRules, RecognizerRules, got)
	case got != want:
		t.Fatalf("the built-in recognizer's verdicts on the corpus (%d keys) changed: digest %s, recorded %s for rules version %d. "+
			"Bump RecognizerRules to %d and append \"%d %s\" to testdata/recognizer-rules.txt",
			n, got, want, RecognizerRules, RecognizerRules+1, RecognizerRules+1, got)
	}
}
