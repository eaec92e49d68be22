package pathprovider_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/xid"

	"github.com/lakegc/lakegc/pathprovider"
)

// TestParseLakeFSAddresses reads testdata/lakefs_addresses.txt: addresses in
// lakeFS's layout whose xids were built byte by byte by an independent script
// (testdata/gen_lakefs_addresses.py), with the times they encode.
func TestParseLakeFSAddresses(t *testing.T) {
	f, err := os.Open("testdata/lakefs_addresses.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := mustNew(t)
	cases := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("bad golden line %q", line)
		}
		address := fields[0]
		wantSlice, err1 := time.Parse(time.RFC3339, fields[1])
		wantObject, err2 := time.Parse(time.RFC3339, fields[2])
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		a, err := pathprovider.Parse(address)
		if err != nil {
			t.Errorf("Parse(%q): %v", address, err)
			continue
		}
		if got := a.SliceTime.Format(time.RFC3339); got != fields[1] {
			t.Errorf("%s: slice time %s, want %s", address, got, fields[1])
		}
		if got := a.ObjectTime.Format(time.RFC3339); got != fields[2] {
			t.Errorf("%s: object time %s, want %s", address, got, fields[2])
		}
		if a.Prefix+"/"+a.Slice+"/"+a.Name != address || a.Slice != address[len(a.Prefix)+1:len(a.Prefix)+21] {
			t.Errorf("%s: split as %+v", address, a)
		}
		if got, err := p.ResolvePathTime(address); err != nil || !got.Equal(wantObject) {
			t.Errorf("ResolvePathTime(%q) = %v, %v; want %v", address, got, err, wantObject)
		}
		// What Partitioned would name a slice started at that time carries
		// the same 4 time bytes as lakeFS's slice.
		lakefs, _ := xid.FromString(a.Slice)
		ours := pathprovider.DescendingID(wantSlice)
		if lakefs.String()[:6] != ours.String()[:6] || binary.BigEndian.Uint32(lakefs[:4]) != binary.BigEndian.Uint32(ours[:4]) {
			t.Errorf("%s: DescendingID(%v) = %s, lakeFS wrote %s", address, wantSlice, ours, a.Slice)
		}
		cases++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases < 10 {
		t.Fatalf("only %d golden cases", cases)
	}
}

// TestDescendingIDTimeBytes checks DescendingID against the format written
// out by hand: the first 4 bytes are uint32(64060588800 - unix seconds), big
// endian; and DescendingTime inverts it for any second of 1970..2106.
func TestDescendingIDTimeBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	times := []int64{0, 1, 1<<31 - 1, 1 << 31, 3931046655, 3931046656, 3931046657, 1<<32 - 1}
	for range 2000 {
		times = append(times, rng.Int64N(1<<32))
	}
	for _, sec := range times {
		tm := time.Unix(sec, 999_999_999)
		id := pathprovider.DescendingID(tm)
		want := uint32(int64(64060588800) - sec)
		if got := binary.BigEndian.Uint32(id[:4]); got != want {
			t.Fatalf("DescendingID(%d) time bytes %d, want %d", sec, got, want)
		}
		if got := pathprovider.DescendingTime(id); got.Unix() != sec {
			t.Fatalf("DescendingTime(DescendingID(%d)) = %d", sec, got.Unix())
		}
	}
}

// TestDescendingOrderReversal pins the documented limit of the format: names
// sort newest first up to 2094-07-27T05:24:16Z, and wrap after it.
func TestDescendingOrderReversal(t *testing.T) {
	reversal := time.Date(2094, 7, 27, 5, 24, 16, 0, time.UTC)
	if reversal.Unix() != 64060588800%(1<<32) {
		t.Fatalf("reversal point %d", reversal.Unix())
	}
	name := func(tm time.Time) string { return pathprovider.DescendingID(tm).String() }
	before, at, after := reversal.Add(-time.Second), reversal, reversal.Add(time.Second)
	if !(name(at) < name(before)) {
		t.Error("at the reversal point a slice still sorts before the previous second")
	}
	if !(name(after) > name(before)) || !(name(after) > name(time.Unix(0, 0))) {
		t.Error("after the reversal point slices should sort last")
	}
}

func TestParseRejects(t *testing.T) {
	const s, n = "h6ce3g624eave3ils1cg", "c2r2is7s9gbrjaemnik0"
	for _, address := range []string{
		"",
		"/",
		n,
		s + "/" + n,                 // no prefix
		"/" + s + "/" + n,           // empty prefix
		"data//" + s + "/" + n,      // empty element before the slice
		"data/" + s + "/" + n + "/", // trailing slash
		"data/" + s + "/",           // no name
		"data/" + s + n,             // no slash between
		"data/" + s + "/" + n + "0", // name too long
		"data/" + s + "/" + n[:19],  // name too short
		"data/" + s[:19] + "/" + n,  // slice too short
		"data/" + strings.ToUpper(s) + "/" + n,
		"data/" + s + "/" + strings.ToUpper(n),
		"data/" + s + "/c2r2is7s9gbrjaemnik1", // last character out of range
		"data/" + s + "/c2r2is7s9gbrjaemnikw", // not base32hex
		"data/" + s + "/c2r2is7s9gbrjaemni\x00" + "0",
		"data/" + s + "/" + n + "\n",
		"data/" + s + "\\" + n,
	} {
		if a, err := pathprovider.Parse(address); !errors.Is(err, pathprovider.ErrInvalidAddress) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrInvalidAddress", address, a, err)
		}
	}
}

// addressModel is what Parse accepts, written as a regular expression: a
// non-empty prefix not ending in '/', then two canonical xids. The last
// character of an xid encodes one bit, so it is '0' or 'g'.
// A signature is optional: ',' and 43 base64url characters.
var addressModel = regexp.MustCompile(`^(?s)(.*[^/])/([0-9a-v]{19}[0g])/([0-9a-v]{19}[0g])(,[A-Za-z0-9_-]{43})?$`)

// lakeFSSig is a signature lakeFS wrote (key "lakefs-secret-for-tests") for
// data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0, repo1, main,
// tables/a<b>&c,1.parquet; see package linkaddr's tests.
const lakeFSSig = "cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw"

// TestParseSignedAddress parses the stored address of an object linked in
// lakeFS, which is the signed address the client uploaded to: the object's
// time is the xid's, and the signature is kept apart.
func TestParseSignedAddress(t *testing.T) {
	p := mustNew(t)
	made := time.Date(2021, 6, 1, 12, 34, 56, 0, time.UTC)
	for _, prefix := range []string{"data", "s3://bucket/repo1/data"} {
		address := prefix + "/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0," + lakeFSSig
		a, err := pathprovider.Parse(address)
		if err != nil {
			t.Fatalf("Parse(%q): %v", address, err)
		}
		if a.Prefix != prefix || a.Slice != "h6ce3g624eave3ils1cg" || a.Name != "c2r2is7s9gbrjaemnik0" || a.Signature != lakeFSSig ||
			!a.ObjectTime.Equal(made) || a.String() != address {
			t.Errorf("Parse(%q) = %+v", address, a)
		}
		if got, err := p.ResolvePathTime(address); err != nil || !got.Equal(made) {
			t.Errorf("ResolvePathTime(%q) = %v, %v; want %v", address, got, err, made)
		}
	}
	const unsigned = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	for _, address := range []string{
		unsigned + ",",                        // empty signature
		unsigned + "," + lakeFSSig[:42],       // too short
		unsigned + "," + lakeFSSig + "A",      // too long
		unsigned + "," + lakeFSSig + "=",      // padded
		unsigned + "," + lakeFSSig[:42] + "+", // standard alphabet
		unsigned + "," + lakeFSSig[:42] + "=", // 43 characters, one of them padding
		unsigned + "," + lakeFSSig[:42] + ".", // 43 characters, one outside base64url
		unsigned + "," + lakeFSSig + "," + lakeFSSig,
		unsigned + ",," + lakeFSSig,
		"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik1," + lakeFSSig, // bad xid
	} {
		if a, err := pathprovider.Parse(address); !errors.Is(err, pathprovider.ErrInvalidAddress) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrInvalidAddress", address, a, err)
		}
		if got, err := p.ResolvePathTime(address); !errors.Is(err, pathprovider.ErrInvalidAddress) {
			t.Errorf("ResolvePathTime(%q) = %v, %v; want ErrInvalidAddress", address, got, err)
		}
	}
	// A signature belongs to the name only (ResolvePathTime reads the last
	// element only, so it accepts this one).
	if a, err := pathprovider.Parse("data/h6ce3g624eave3ils1cg," + lakeFSSig + "/c2r2is7s9gbrjaemnik0"); !errors.Is(err, pathprovider.ErrInvalidAddress) {
		t.Errorf("Parse of a signed slice = %+v, %v; want ErrInvalidAddress", a, err)
	}
}

// TestParseMatchesModel assembles addresses from valid and broken parts and
// checks Parse accepts exactly those the model accepts.
func TestParseMatchesModel(t *testing.T) {
	prefixes := []string{"data", "s3://b/repo/data", "a//b", "", "/", "data/", "\n", "\xff", "a/b/"}
	seps := []string{"/", "/", "/", "", "//", "\\"}
	ids := []string{"h6ce3g624eave3ils1cg", "c2r2is7s9gbrjaemnik0", "vvvvvvvvvvvvvvvvvvvg", "00000000000000000000",
		"c2r2is7s9gbrjaemnik1", "C2R2IS7S9GBRJAEMNIK0", "c2r2is7s9gbrjaemnik", "c2r2is7s9gbrjaemnik00", "", "c2r2is7s9gbrjaemnikw"}
	sigs := []string{"", "", "", "," + lakeFSSig, "," + lakeFSSig, ",", "," + lakeFSSig[:42], "," + lakeFSSig + "=",
		"," + lakeFSSig[:40] + "+/-", "," + lakeFSSig + "," + lakeFSSig, ",-_" + lakeFSSig[:41]}
	pick := func(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }
	rng := rand.New(rand.NewPCG(5, 6))
	p := mustNew(t)
	accepted, signed := 0, 0
	for range 8000 {
		slice := pick(rng, ids)
		if rng.IntN(8) == 0 {
			slice += pick(rng, sigs)
		}
		address := pick(rng, prefixes) + pick(rng, seps) + slice + pick(rng, seps) + pick(rng, ids) + pick(rng, sigs)
		a, err := pathprovider.Parse(address)
		if want := addressModel.MatchString(address); (err == nil) != want {
			t.Fatalf("Parse(%q) err = %v; model accepts: %v", address, err, want)
		}
		if err == nil {
			accepted++
			if a.Signature != "" {
				signed++
			}
			if got, err := p.ResolvePathTime(address); err != nil || !got.Equal(a.ObjectTime) {
				t.Fatalf("ResolvePathTime(%q) = %v, %v; Parse says %v", address, got, err, a.ObjectTime)
			}
		}
	}
	if accepted < 50 || signed < 20 {
		t.Fatalf("only %d accepted addresses, %d signed: the generator is too weak", accepted, signed)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0")
	f.Add("s3://bucket/repo1/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug")
	f.Add("data/vvvvvvoj06pvruea22t0/t97g6b65cpt9v8958cr0")
	f.Add("data//h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0")
	f.Add("h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik1")
	f.Add("")
	f.Add("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0," + lakeFSSig)
	f.Add("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0,")
	f.Add("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0," + lakeFSSig + "," + lakeFSSig)
	f.Add("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0," + lakeFSSig[:41] + "==")
	p, err := pathprovider.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, address string) {
		a, err := pathprovider.Parse(address)
		if want := addressModel.MatchString(address); (err == nil) != want {
			t.Fatalf("Parse(%q) err = %v; model accepts: %v", address, err, want)
		}
		if err != nil {
			if !errors.Is(err, pathprovider.ErrInvalidAddress) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidAddress", address, err)
			}
			return
		}
		if got := a.String(); got != address {
			t.Fatalf("Parse(%q) does not round-trip: %q", address, got)
		}
		if a.Signature != "" && !strings.HasSuffix(address, ","+a.Signature) {
			t.Fatalf("Parse(%q) read signature %q", address, a.Signature)
		}
		if got, err := p.ResolvePathTime(address); err != nil || !got.Equal(a.ObjectTime) {
			t.Fatalf("ResolvePathTime(%q) = %v, %v; Parse says %v", address, got, err, a.ObjectTime)
		}
		sliceID, err1 := xid.FromString(a.Slice)
		nameID, err2 := xid.FromString(a.Name)
		if err1 != nil || err2 != nil || sliceID.String() != a.Slice || nameID.String() != a.Name {
			t.Fatalf("Parse(%q) accepted a non-canonical xid: %+v", address, a)
		}
		if !a.ObjectTime.Equal(nameID.Time()) || !pathprovider.DescendingID(a.SliceTime).Time().Equal(sliceID.Time()) {
			t.Fatalf("Parse(%q) times %v %v disagree with the xids", address, a.SliceTime, a.ObjectTime)
		}
		if a.Prefix == "" || strings.HasSuffix(a.Prefix, "/") {
			t.Fatalf("Parse(%q) accepted prefix %q", address, a.Prefix)
		}
	})
}
