package metarange

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
)

// beforeStorageType is the scheme table this package kept before package
// nsaddr's AdapterStorage replaced it (main at 1259e4f).
func beforeStorageType(scheme string) string {
	switch scheme {
	case "s3", "gs", "local":
		return scheme
	case "mem", "memory":
		return "mem"
	case "http", "https":
		return "azure"
	}
	return ""
}

// TestDeprecatedAsUncommitted: an entry of lakeFS's deprecated address
// type is read as the uncommitted export reads a staged one
// (uncommitted.AddressTypeFromLakeFS): kept as a relative address exactly
// when the export exports it as relative, else as a full one. Were the two
// to disagree, an object staged and then committed would be kept under one
// key by one input and another by the other. The storage types are those
// this package resolved before.
func TestDeprecatedAsUncommitted(t *testing.T) {
	ns, err := parseNamespace("s3://bucket/repo")
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{"s3", "S3", "gs", "https", "HTTP", "local", "mem", "memory", "file", "s3a", ":", "/", "//", "%", "%zz", " ", "bucket", "repo", "data", "?", "#", "@", "."}
	rng := rand.New(rand.NewPCG(31, 32))
	var b strings.Builder
	var nFull, nRel int
	for i := range 100000 {
		b.Reset()
		for range rng.IntN(7) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		a := b.String()
		if i < len(tokens) {
			a = tokens[i] + "://bucket/repo/data/x"
		}
		typ, err := uncommitted.AddressTypeFromLakeFS(0, a)
		if err != nil {
			t.Fatal(err)
		}
		got, gotOutcome := ns.keys(nil, a, byPrefixDeprecated)
		want, wantOutcome := ns.keys(nil, a, full)
		if typ == uncommitted.Relative {
			want, wantOutcome = ns.keys(nil, a, relative)
			nRel++
		} else {
			nFull++
		}
		if !slices.Equal(got, want) || gotOutcome != wantOutcome {
			t.Fatalf("deprecated %q: %q, %d; the export's reading (%v) gives %q, %d", a, got, gotOutcome, typ, want, wantOutcome)
		}
		storage, _, ok := resolveFull(a)
		before := ""
		if u, err := url.ParseRequestURI(a); err == nil {
			before = beforeStorageType(u.Scheme)
		}
		if ok != (typ == uncommitted.Full) || storage != before {
			t.Fatalf("resolveFull(%q) = %q, %v; the export's reading %v, before %q", a, storage, ok, typ, before)
		}
	}
	if nFull < 1000 || nRel < 1000 {
		t.Errorf("%d full and %d relative addresses: the spellings miss a case", nFull, nRel)
	}
}
