package layout

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rs/xid"
)

// Golden keys: each shape as lakeFS wrote it, built by hand from its source
// (see the package documentation), and near misses that must stay
// unrecognized.
var golden = []struct {
	key  string
	want Shape
}{
	{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", Slice},
	{"data/gpqlf0evkf6qoaqfs800/cfcqrm596gcudfl6r4u0,AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", SignedSlice},
	{"5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f", Flat},
	{"data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", EarlyLinked},
	{"data/repo1-main-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", EarlyLinked},
	{"data/a-b-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", Unrecognized}, // a repository ID has 3 characters or more, a branch ID one
	{"data/repo1-main_9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", Unrecognized},
	{"data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e:/V1StGXR8_Z5jdHi6B-myT", Unrecognized},
	{"data/-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", Unrecognized},

	{"", Unrecognized},
	{"dummy", Unrecognized},
	{"README.txt", Unrecognized},
	{"backup.tar", Unrecognized},
	{"5F0C3A1E9B7D4C2A8E6F1B3D5C7A9E0F", Unrecognized}, // upper-case hex: not hex(uuid)
	{"5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0", Unrecognized},  // 31 digits
	{"d41d8cd98f00b204e9800998ecf8427e", Unrecognized}, // an MD5 digest
	{"5f0c3a1e9b7d1c2a8e6f1b3d5c7a9e0f", Unrecognized}, // a version 1 UUID
	{"5f0c3a1e9b7d4c2a0e6f1b3d5c7a9e0f", Unrecognized}, // another variant
	{"5f0c3a1e9b7d4c2abe6f1b3d5c7a9e0f", Flat},
	{"data/repo1-main:9b2c6f0e-3d4a-1b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", Unrecognized}, // a version 1 UUID
	{"imports/5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f", Unrecognized},
	{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0/x", Unrecognized},
	{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0,short", Unrecognized},
	{"data/h6ce3g624eave3ils1cg/report.csv", Unrecognized},
	{"data/h6ce3g624eave3ils1cg/_lakefs/dummy", Unrecognized},
	{"data/inner/_lakefs/dummy", Unrecognized},
	{"data/h6ce3g624eave3ils1cg", Unrecognized},
	{"data/V1StGXR8_Z5jdHi6B-myT", Unrecognized}, // a nanoid, but lakeFS always put a token before it
	{"data/customer-exports-2024", Unrecognized},
	{"data/year=2024/part-0.parquet", Unrecognized},
	{"data//c2r2is7s9gbrjaemnik0", Unrecognized},
	{"data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/short", Unrecognized},
	{"data/repo1main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", Unrecognized},
	{"data/repo1-main:9B2C6F0E-3D4A-4B5C-8D7E-1F2A3B4C5D6E/V1StGXR8_Z5jdHi6B-myT", Unrecognized},
	{"other/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", Unrecognized},
	{"_lakefs/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", Unrecognized},
}

func TestRecognizeGolden(t *testing.T) {
	for _, g := range golden {
		if got := Recognize(g.key, DataPrefix); got != g.want {
			t.Errorf("Recognize(%q) = %v, want %v", g.key, got, g.want)
		}
	}
}

func TestRecognizeOtherDataPrefix(t *testing.T) {
	if got := Recognize("my/prefix/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "my/prefix"); got != Slice {
		t.Errorf("custom prefix: %v", got)
	}
	if got := Recognize("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "my/prefix"); got != Unrecognized {
		t.Errorf("default prefix under a custom one: %v", got)
	}
	if got := Recognize("datax/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "data"); got != Unrecognized {
		t.Errorf("a folder that starts with the prefix's name: %v", got)
	}
}

func TestTail(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"s3://b/repo1/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"},
		{"file:///srv/lake/repo1/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"},
		{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"},
		{"s3://b/r/data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT", "data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT"},
		{"s3://b/r/data/V1StGXR8_Z5jdHi6B-myT", ""},
		{"gs://b/r/5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f", "5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f"},
		{"s3://b/r/mydata/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", ""},
		{"s3://b/imports/2024/part-0.parquet", ""},
		{"", ""},
	} {
		got, ok := Tail(c.path, DataPrefix)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Tail(%q) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
}

// TestIsXID checks the xid check against xid.FromString on xids and on
// strings one character away from one.
func TestIsXID(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,/-_"
	for range 20000 {
		var id xid.ID
		for i := range id {
			id[i] = byte(r.IntN(256))
		}
		b := []byte(id.String())
		if r.IntN(2) == 0 {
			b[r.IntN(len(b))] = chars[r.IntN(len(chars))]
		}
		_, err := xid.FromString(string(b))
		if isXID(string(b)) != (err == nil) {
			t.Fatalf("isXID(%q) = %v, xid.FromString: %v", b, isXID(string(b)), err)
		}
	}
}

// TestInSlice: InSlice says of a name what Recognize says of the key in a
// slice.
func TestInSlice(t *testing.T) {
	const slice = "h6ce3g624eave3ils1cg"
	names := []string{"", ",", "x/y", "c2r2is7s9gbrjaemnik0/", "c2r2is7s9gbrjaemnik0,"}
	for _, g := range golden {
		names = append(names, g.key)
		if i := strings.LastIndexByte(g.key, '/'); i >= 0 {
			names = append(names, g.key[i+1:])
		}
	}
	for _, name := range names {
		key := DataPrefix + "/" + slice + "/" + name
		if got, want := InSlice(name), Recognize(key, DataPrefix); got != want {
			t.Fatalf("InSlice(%q) = %v, Recognize(%q) = %v", name, got, key, want)
		}
	}
}

func FuzzRecognize(f *testing.F) {
	for _, g := range golden {
		f.Add(g.key, DataPrefix)
		f.Add("s3://bucket/ns/"+g.key, DataPrefix)
	}
	f.Add("a/b/c", "a")
	f.Fuzz(func(t *testing.T, key, data string) {
		_, err := xid.FromString(key)
		if isXID(key) != (err == nil) {
			t.Fatalf("isXID(%q) = %v, xid.FromString: %v", key, isXID(key), err)
		}
		s := Recognize(key, data)
		if s != Unrecognized && s != Flat && !strings.HasPrefix(key, data+"/") {
			t.Fatalf("Recognize(%q, %q) = %v outside the data folder", key, data, s)
		}
		tail, ok := Tail(key, data)
		if !ok {
			return
		}
		if !strings.HasSuffix(key, tail) || Recognize(tail, data) == Unrecognized {
			t.Fatalf("Tail(%q, %q) = %q: not a recognized suffix", key, data, tail)
		}
		if len(tail) < len(key) && key[len(key)-len(tail)-1] != '/' {
			t.Fatalf("Tail(%q, %q) = %q does not start after a '/'", key, data, tail)
		}
	})
}

// TestSliceTimeRoundTrip: SliceTime reads back the time a slice name was
// made for with ReversalPoint, as DescendingID (and so pathprovider) makes them.
func TestSliceTimeRoundTrip(t *testing.T) {
	for _, sec := range []int64{0, 1, 1_700_000_000, 1<<32 - 1} {
		want := time.Unix(sec, 0).UTC()
		for _, name := range []string{
			xid.NewWithTime(time.Unix(ReversalPoint-sec, 0)).String(),
			DescendingID(want).String(),
		} {
			if got, ok := SliceTime(name); !ok || !got.Equal(want) {
				t.Errorf("SliceTime(%q) = %v, %v; want %v", name, got, ok, want)
			}
		}
	}
	if _, ok := SliceTime("h6ce3g624eave3ils1c"); ok {
		t.Error("a 19-character name is a slice")
	}
}
