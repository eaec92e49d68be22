package linkaddr_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
)

// Addresses in lakeFS's layout (pathprovider/testdata/lakefs_addresses.txt).
const (
	addr2021 = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"                   // made 2021-06-01T12:34:56Z
	addr2025 = "s3://bucket/repo1/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug" // made 2025-11-30T05:59:59Z
)

var (
	made2021 = time.Date(2021, 6, 1, 12, 34, 56, 0, time.UTC)
	made2025 = time.Date(2025, 11, 30, 5, 59, 59, 0, time.UTC)
)

// lakeFSSigner returns a Signer whose clock stands an hour after now.
func lakeFSSigner(t *testing.T, key string, now time.Time) *linkaddr.Signer {
	t.Helper()
	provider, err := pathprovider.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := linkaddr.New([]byte(key), provider, linkaddr.WithClock(func() time.Time { return now.Add(time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// handSign computes a lakeFS signature directly with crypto/hmac over the
// JSON bytes as written out by hand in the test table.
func handSign(key, json string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(json))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestLakeFSWireFormat signs each case by hand, as lakeFS does, and checks
// both directions: our Verify accepts lakeFS's signed address, and our Sign
// writes exactly lakeFS's bytes.
func TestLakeFSWireFormat(t *testing.T) {
	const key = "lakefs-secret-for-tests"
	for _, tc := range []struct {
		name                              string
		repository, branch, path, address string
		made                              time.Time
		json                              string // what Go's encoding/json writes, by hand
		refused                           bool   // we refuse what lakeFS signs
	}{
		{
			name:       "plain",
			repository: "repo1", branch: "main", path: "tables/events/part-0001.parquet", address: addr2021, made: made2021,
			json: `{"Repository":"repo1","Branch":"main","Path":"tables/events/part-0001.parquet","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "HTML characters are escaped",
			repository: "r&d", branch: "feature<1>", path: "a<b>&c.csv", address: addr2021, made: made2021,
			json: `{"Repository":"r\u0026d","Branch":"feature\u003c1\u003e","Path":"a\u003cb\u003e\u0026c.csv","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone < is escaped",
			repository: "r", branch: "b", path: "a<b", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\u003cb","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone > is escaped",
			repository: "r", branch: "b", path: "a>b", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\u003eb","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone & is escaped",
			repository: "r", branch: "b", path: "a&b", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\u0026b","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone quote is escaped",
			repository: "r", branch: "b", path: `a"b`, address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\"b","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone backslash is escaped",
			repository: "r", branch: "b", path: `a\b`, address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\\b","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "a lone control character is escaped",
			repository: "r", branch: "b", path: "a\x1fb", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"a\u001fb","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "HTML characters in the address",
			repository: "r", branch: "b", path: "p", address: "s3://b/x<y>&z/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug", made: made2025,
			json: `{"Repository":"r","Branch":"b","Path":"p","PhysicalAddress":"s3://b/x\u003cy\u003e\u0026z/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug"}`,
		},
		{
			name:       "unicode is written as UTF-8",
			repository: "dépôt", branch: "主", path: "données/日本語/ü.txt", address: addr2021, made: made2021,
			json: `{"Repository":"dépôt","Branch":"主","Path":"données/日本語/ü.txt","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "line and paragraph separators are escaped",
			repository: "r", branch: "b", path: "x\u2028y\u2029z", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"x\u2028y\u2029z","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			name:       "quotes, backslashes and control characters",
			repository: "r", branch: "b", path: "q\"\\\n\t\r\x01\x7f", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"q\"\\\n\t\r\u0001` + "\x7f" + `","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			// Unlike an invalid byte, which is written as the escape \ufffd.
			name:       "U+FFFD is written as UTF-8",
			repository: "r", branch: "b", path: "bad\ufffdbyte", address: addr2021, made: made2021,
			json: `{"Repository":"r","Branch":"b","Path":"bad` + "\ufffd" + `byte","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
		},
		{
			// lakeFS signs and accepts this payload for any path with one
			// invalid byte in place of the \ufffd: we refuse the path.
			name:       "invalid UTF-8 is refused where lakeFS writes U+FFFD",
			repository: "r", branch: "b", path: "bad\xffbyte", address: addr2021, made: made2021,
			json:    `{"Repository":"r","Branch":"b","Path":"bad\ufffdbyte","PhysicalAddress":"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}`,
			refused: true,
		},
		{
			name:       "commas in the path and in the address",
			repository: "r", branch: "b", path: "a,b,c", address: "s3://bucket/a,b/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug", made: made2025,
			json: `{"Repository":"r","Branch":"b","Path":"a,b,c","PhysicalAddress":"s3://bucket/a,b/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug"}`,
		},
		{
			name:       "full URI address",
			repository: "repo1", branch: "main", path: "", address: addr2025, made: made2025,
			json: `{"Repository":"repo1","Branch":"main","Path":"","PhysicalAddress":"s3://bucket/repo1/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := lakeFSSigner(t, key, tc.made)
			lakeFS := tc.address + "," + handSign(key, tc.json)

			got, err := s.Verify(tc.repository, tc.branch, tc.path, lakeFS)
			if tc.refused {
				if !errors.Is(err, linkaddr.ErrInvalid) {
					t.Fatalf("Verify(lakeFS signature) = %+v, %v; want ErrInvalid", got, err)
				}
				if ours, err := s.Sign(tc.repository, tc.branch, tc.path, tc.address); !errors.Is(err, linkaddr.ErrInvalid) || ours != "" {
					t.Fatalf("Sign = %q, %v; want ErrInvalid", ours, err)
				}
				return
			}
			if err != nil || got.Address != tc.address {
				t.Fatalf("Verify(lakeFS signature) = %+v, %v", got, err)
			}
			if ours, err := s.Sign(tc.repository, tc.branch, tc.path, tc.address); err != nil || ours != lakeFS {
				t.Fatalf("Sign = %q, %v\nlakeFS %q", ours, err, lakeFS)
			}
		})
	}
}

// TestLakeFSSignatureLiteral pins one signature computed outside Go (Python's
// hmac module over the literal JSON).
func TestLakeFSSignatureLiteral(t *testing.T) {
	const want = addr2021 + ",cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw"
	s := lakeFSSigner(t, "lakefs-secret-for-tests", made2021)
	if got, err := s.Sign("repo1", "main", "tables/a<b>&c,1.parquet", addr2021); err != nil || got != want {
		t.Fatalf("Sign = %q, %v; want %q", got, err, want)
	}
	if _, err := s.Verify("repo1", "main", "tables/a<b>&c,1.parquet", want); err != nil {
		t.Fatal(err)
	}
}
