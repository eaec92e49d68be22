package nsaddr

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

func classify(t *testing.T, ns, address string) ([]string, Class) {
	t.Helper()
	n, err := New(ns, "data")
	if err != nil {
		t.Fatal(err)
	}
	return n.Classify(nil, address)
}

// TestLakeFSResolution checks every key lakeFS resolves an address to,
// before and since PR #9464, is kept, and that an address lakeFS resolves
// outside the namespace is not taken for inside. An address whose spelling
// of the namespace differs (the namespace's own escapes) may be a
// mismatch: an error, never a loss.
func TestLakeFSResolution(t *testing.T) {
	for _, g := range lakeFSResolution {
		keys, class := classify(t, g.ns, g.address)
		want := []string{}
		for _, k := range []string{g.since9464, g.before9464} {
			if k != "" {
				want = append(want, k)
			}
		}
		switch {
		case len(want) == 0 && class == Inside:
			t.Errorf("%s in %s: Inside %q, lakeFS resolves it outside", g.address, g.ns, keys)
		case len(want) > 0 && class == Outside:
			t.Errorf("%s in %s: Outside, lakeFS resolves it to %q", g.address, g.ns, want)
		case class == Inside:
			for _, k := range want {
				if !slices.Contains(keys, k) {
					t.Errorf("%s in %s: keys %q miss lakeFS's %q", g.address, g.ns, keys, k)
				}
			}
		}
	}
}

func TestEverySpellingKept(t *testing.T) {
	for _, c := range []struct {
		ns, address string
		want        []string
	}{
		{"s3://bucket/repo1", "s3://bucket/repo1/data/year%3D2024/part-0", []string{"data/year%3D2024/part-0", "data/year=2024/part-0"}},
		{"s3://bucket/repo1/", "S3://Bucket/repo1/data/x", []string{"data/x"}},
		{"https://acct.blob.core.windows.net/container/repo1", "https://acct.dfs.core.windows.net/container/repo1/data/k%3Dv/", []string{"data/k=v"}},
		{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net/container/repo1/data/x/", []string{"data/x/", "data/x"}},
		{"local:///var/lakefs/repo1", "local:///var/lakefs/repo1/data/x", []string{"data/x"}},
		{"file:///srv/lake/repo1", "file:///srv/lake/repo1/data/a%20b", []string{"data/a%20b", "data/a b"}},
		// A file path names the file of its cleaned form.
		{"file:///srv/lake/repo1", "file:///srv/lake/repo1/data/../data/x", []string{"data/../data/x", "data/x"}},
		{"local:///srv/lake/repo1", "local:///srv/lake/repo1/data//x", []string{"data//x", "data/x"}},
	} {
		keys, class := classify(t, c.ns, c.address)
		if class != Inside {
			t.Errorf("%s in %s: %v, want Inside", c.address, c.ns, class)
		}
		for _, k := range c.want {
			if !slices.Contains(keys, k) {
				t.Errorf("%s in %s: keys %q miss %q", c.address, c.ns, keys, k)
			}
		}
	}
}

// lakeFS before v0.110 (September 2023) read and wrote S3 through
// aws-sdk-go v1, which cleans a request's path (path.Clean, a trailing '/'
// kept) unless DisableRestProtocolURICleaning is set, which lakeFS never
// set: an address with a doubled slash or a dot segment named the object
// at the cleaned key. Both spellings are kept.
func TestSDKv1CleanedS3Keys(t *testing.T) {
	for _, c := range []struct {
		address string
		want    []string
	}{
		{"s3://bucket/repo1/data//x", []string{"data//x", "data/x"}},
		{"s3://bucket/repo1/data/./x", []string{"data/./x", "data/x"}},
		{"s3://bucket/repo1/data/y/../x", []string{"data/y/../x", "data/x"}},
		{"s3://bucket/repo1/tables//t/", []string{"tables//t/", "tables/t/"}},
		{"s3://bucket/repo1//x", []string{"/x", "x"}},
		{"s3://bucket/repo1/data//a%3Db", []string{"data//a%3Db", "data//a=b", "data/a=b"}},
	} {
		keys, class := classify(t, "s3://bucket/repo1", c.address)
		if class != Inside {
			t.Errorf("%s: %v, want Inside", c.address, class)
		}
		for _, k := range c.want {
			if !slices.Contains(keys, k) {
				t.Errorf("%s: keys %q miss %q", c.address, keys, k)
			}
		}
	}
	// Cleaned out of the namespace: only the key as written.
	if keys, _ := classify(t, "s3://bucket/repo1", "s3://bucket/repo1/../x"); !slices.Equal(keys, []string{"../x"}) {
		t.Errorf("s3://bucket/repo1/../x: keys %q", keys)
	}
}

// The same for a relative address (lakeFS made one of a staged full
// address under the data folder): checked against a plain model of
// aws-sdk-go v1's cleaning on every key of up to six of '/', '.', 'a'.
func TestCleanedRelative(t *testing.T) {
	for _, ns := range []string{"s3://bucket/repo1", "s3://bucket/repo1/", "s3://bucket"} {
		n, err := New(ns, "data")
		if err != nil {
			t.Fatal(err)
		}
		pre := "/" + strings.Trim(strings.TrimPrefix(ns, "s3://bucket"), "/") + "/"
		pre = strings.Replace(pre, "//", "/", 1)
		var keys func(string, int)
		keys = func(k string, depth int) {
			want, wantOK := "", false
			c := path.Clean(pre + k)
			if strings.HasSuffix(k, "/") && !strings.HasSuffix(c, "/") {
				c += "/"
			}
			if rest, ok := strings.CutPrefix(c, pre); ok && rest != "" && rest != k {
				want, wantOK = rest, true
			}
			if got, ok := n.CleanedRelative(k); got != want || ok != wantOK {
				t.Fatalf("%s: CleanedRelative(%q) = %q %v, want %q %v", ns, k, got, ok, want, wantOK)
			}
			if !MayClean(k) && wantOK {
				t.Fatalf("MayClean(%q) = false, but it cleans to %q", k, want)
			}
			if depth < 6 {
				for _, c := range []string{"/", ".", "a"} {
					keys(k+c, depth+1)
				}
			}
		}
		keys("", 0)
	}
	for _, ns := range []string{"gs://bucket/repo1", "https://acct.blob.core.windows.net/c/repo1", "file:///srv/repo1"} {
		n, err := New(ns, "data")
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := n.CleanedRelative("data//x"); ok {
			t.Errorf("%s: CleanedRelative(data//x) = %q", ns, k)
		}
	}
}

func TestMismatch(t *testing.T) {
	for _, c := range []struct{ ns, address string }{
		{"s3://bucket/repo1", "s3a://bucket/repo1/data/x"},
		{"s3://bucket/repo1", "s3n://bucket/repo1/data/x"},
		{"s3a://bucket/repo1", "s3://bucket/repo1/data/x"},
		{"s3://bucket/repo1", "s3://bucket/./repo1/data/x"},
		{"s3://bucket/repo1", "s3://bucket/other/../repo1/data/x"},
		{"s3://bucket/repo1", "s3://bucket//repo1/data/x"},
		{"s3://bucket/repo1", "s3://bucket/rep%6F1/data/x"},
		{"s3://bucket/repo1", "s3://user@bucket/repo1/data/x"},
		{"s3://bucket/repo1", "s3://user:pw@bucket/repo1/tables/t.parquet"},
		{"gs://bucket/repo1", "gs://user@bucket/repo1/tables/t.parquet"},
		{"file:///srv/lake/repo1", "file://user@localhost/srv/lake/repo1/data/x"},
		{"local://repo1", "local:///var/lakefs/repo1/tables/t.parquet"},
		{"local://repo1", "file:///var/lakefs/repo1/tables/t.parquet"},
		{"local://lake/repo1", "local:///var/lakefs/lake/repo1/t.csv"},
		{"file:///srv/lake/repo1", "file:/srv/lake/repo1/data/x"},
		{"file:///srv/lake/repo1", "file://localhost/srv/lake/repo1/data/x"},
		{"file:/srv/lake/repo1", "file:///srv/lake/repo1/data/x"},
		{"file:///srv/lake/repo1", "local:///srv/lake/repo1/data/x"},
		{"local:///srv/lake/repo1", "file:///srv/lake/repo1/data/x"},
		{"file:///srv/lake/repo1", "file:///srv//lake/repo1/data/x"},
		{"file:///srv/lake/repo1", "file:///srv/lake/x/../repo1/data/x"},
	} {
		n, err := New(c.ns, "data")
		if err != nil {
			t.Fatal(err)
		}
		_, class, err := n.Check(nil, c.address)
		if class != Mismatch || !errors.Is(err, ErrMismatch) {
			t.Errorf("%s in %s: %v %v, want Mismatch", c.address, c.ns, class, err)
			continue
		}
		if !strings.Contains(err.Error(), c.address) || !strings.Contains(err.Error(), strings.TrimRight(c.ns, "/")) {
			t.Errorf("error %q does not name both spellings", err)
		}
	}
}

func TestOutside(t *testing.T) {
	for _, c := range []struct{ ns, address, tail string }{
		{"s3://bucket/repo1", "s3://bucket/repo2/data/x", ""},
		{"s3://bucket/repo1", "s3://bucket/repo10/data/x", ""},
		{"s3://bucket/repo1", "s3://other/repo1/data/x", ""},
		{"s3://bucket/repo1", "s3://bucket@other/repo1/data/x", ""}, // userinfo "bucket", host "other"
		{"local://repo1", "local:///var/lakefs/repo10/t.csv", ""},
		{"local://lake/repo1", "local:///var/lakefs/repo1/t.csv", ""},
		{"local://repo1", "local:///var/lakefs/repo1", ""},
		{"s3://bucket/repo1", "gs://bucket/repo1/data/x", ""},
		{"s3://bucket/repo1", "s3://bucket/repo1", ""},
		{"s3://bucket/repo1", "s3://bucket/repo1/", ""},
		{"s3://bucket/repo1", "file:///srv/lake/repo1/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"},
		{"s3://bucket/repo1", "s3://imports/5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f", "5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f"},
	} {
		keys, class := classify(t, c.ns, c.address)
		if class != Outside {
			t.Errorf("%s in %s: %v, want Outside", c.address, c.ns, class)
			continue
		}
		var want []string
		if c.tail != "" {
			want = []string{c.tail}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("%s in %s: keys %q, want %q", c.address, c.ns, keys, want)
		}
	}
}

// TestSymlinkedFolder: the namespace reached through a symbolic link, either
// way round, is a mismatch.
func TestSymlinkedFolder(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "repo1")
	if err := os.MkdirAll(filepath.Join(real, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
		t.Skip(err)
	}
	realNS := "file://" + filepath.ToSlash(real)
	linkNS := "file://" + filepath.ToSlash(filepath.Join(link, "repo1"))
	for _, c := range [][2]string{{realNS, linkNS + "/data/x"}, {linkNS, realNS + "/data/x"}, {linkNS, realNS + "/data/gone/deeper/x"}} {
		if _, class := classify(t, c[0], c[1]); class != Mismatch {
			t.Errorf("%s in %s: %v, want Mismatch", c[1], c[0], class)
		}
	}
	if _, class := classify(t, realNS, "file://"+filepath.ToSlash(filepath.Join(dir, "real", "repo2"))+"/data/x"); class != Outside {
		t.Errorf("a sibling folder: %v, want Outside", class)
	}
}

func TestProber(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	const tail = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	p := NewProber(bucket, "s3://bucket/repo1", 2)
	if err := p.Probe(ctx, "file:///x/"+tail, tail); err != nil {
		t.Fatalf("absent tail: %v", err)
	}
	if err := bucket.WriteAll(ctx, tail, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Probe(ctx, "file:///y/"+tail, tail); err != nil {
		t.Fatalf("a tail already probed is not probed again: %v", err)
	}
	p = NewProber(bucket, "s3://bucket/repo1", 1)
	if err := p.Probe(ctx, "file:///x/"+tail, tail); !errors.Is(err, ErrMismatch) {
		t.Fatalf("present tail: %v, want ErrMismatch", err)
	}
	if err := p.Probe(ctx, "file:///x/data/other", "data/other"); err != nil {
		t.Fatalf("beyond the limit: %v", err)
	}
	_ = fileblob.MetadataDontWrite
}

// A probe that cannot look is an error, never "absent": memblob and
// fileblob answer "not found" whatever the context, so a cancelled one
// must not pass for a probe done; nor may a closed bucket.
func TestProberErrors(t *testing.T) {
	const tail = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	for name, b := range map[string]*blob.Bucket{"memblob": mem, "fileblob": files} {
		err := NewProber(b, "s3://bucket/repo1", 0).Probe(ctx, "file:///x/"+tail, tail)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s, cancelled: %v, want context.Canceled", name, err)
		}
	}
	closed := memblob.OpenBucket(nil)
	closed.Close()
	if err := NewProber(closed, "s3://bucket/repo1", 0).Probe(context.Background(), "file:///x/"+tail, tail); err == nil || errors.Is(err, ErrMismatch) {
		t.Errorf("closed bucket: %v, want its error", err)
	}
}

// isFullModel is IsFull as it was before its short cut: both rules on the
// whole address.
func isFullModel(s string) bool {
	if HasScheme(s) {
		return true
	}
	scheme, rest, ok := strings.Cut(s, ":")
	return ok && strings.HasPrefix(rest, "/") && (strings.EqualFold(scheme, "file") || strings.EqualFold(scheme, "local"))
}

// TestIsFullModel: IsFull's short cut (the first character past the
// scheme characters must be ':') changes no answer of the two rules, on
// addresses built from the characters that matter.
func TestIsFullModel(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	parts := []string{"s3", "file", "FILE", "local", "Local", "a", "1", "+", "-", ".", ":", "/", "//", "://", ":/", "x", "é", " ", "data/"}
	full := 0
	for range 200000 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		s := b.String()
		want := isFullModel(s)
		if got := IsFull(s); got != want {
			t.Fatalf("IsFull(%q) = %v, the two rules say %v", s, got, want)
		}
		if want {
			full++
		}
	}
	if full < 1000 {
		t.Fatalf("only %d full addresses drawn", full)
	}
}

// FuzzIsFull: IsFull's short cut gives the two rules' answer on any bytes
// (TestIsFullModel draws from a few parts; this reaches the rest: bytes
// past 0x7f, a scheme that starts with a digit or a sign, colons before or
// after the "://").
func FuzzIsFull(f *testing.F) {
	for _, s := range []string{"", ":", "1:/x", "+a://x", "a+://x", "-:/", "file:/x", "FiLe:/", "local:x",
		"a.b-c+d://x", "\x80:/x", "\xc5\xbfile:/x", "s3:/x", "a:b://x", "data/s3://x", "file::/x", " s3://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsFull(s), isFullModel(s); got != want {
			t.Fatalf("IsFull(%q) = %v, the two rules say %v", s, got, want)
		}
	})
}

func TestIsFull(t *testing.T) {
	for s, want := range map[string]bool{
		"s3://b/x": true, "file:/x": true, "FILE:/x": true, "local:/x": true, "file:x": false,
		"data/x": false, "data/repo-main:uuid/x": false, "http:/x": false, "://x": false, "": false,
	} {
		if got := IsFull(s); got != want {
			t.Errorf("IsFull(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzClassify: no panic; Inside yields keys, a Mismatch none, an Outside at
// most its tail; an address made by appending a key to the namespace is
// Inside with that key.
func FuzzClassify(f *testing.F) {
	for _, g := range lakeFSResolution {
		f.Add(g.ns, g.address)
	}
	f.Add("file:///srv/lake/repo1", "file:/srv/lake/repo1/data/x")
	f.Add("local://repo1", "local:///var/lakefs/repo1/data/x")
	f.Add("s3://b/r", "s3a://b/r/%zz")
	f.Fuzz(func(t *testing.T, ns, address string) {
		n, err := New(ns, "data")
		if err != nil {
			return
		}
		keys, class := n.Classify(nil, address)
		switch class {
		case Inside:
			if len(keys) == 0 || slices.Contains(keys, "") {
				t.Fatalf("Inside with keys %q", keys)
			}
		case Mismatch:
			if len(keys) != 0 {
				t.Fatalf("Mismatch with keys %q", keys)
			}
		case Outside:
			if len(keys) > 1 {
				t.Fatalf("Outside with keys %q", keys)
			}
		default:
			t.Fatalf("class %v", class)
		}
		// The fast path of a plain namespace gives what the full
		// resolution gives.
		if n.plain {
			slow, _ := New(ns, "data")
			slow.plain = false
			slowKeys, slowClass := slow.Classify(nil, address)
			if slowClass != class || !slices.Equal(slowKeys, keys) {
				t.Fatalf("%q in %q: fast %v %q, full %v %q", address, ns, class, keys, slowClass, slowKeys)
			}
		}
		if key := strings.TrimLeft(address, "/"); key != "" && !strings.ContainsAny(key, "?#%") {
			keys, class := n.Classify(nil, n.String()+"/"+key)
			if class != Inside || !slices.Contains(keys, key) {
				t.Fatalf("%q under %q: %v %q", key, n, class, keys)
			}
		}
	})
}

// TestCutLiteralPathExact: a "://" in the path of a namespace that is no
// URI, or of a file URI with one slash, is not a scheme's: the path before
// it is compared exactly, as every other path is.
func TestCutLiteralPathExact(t *testing.T) {
	for _, tc := range []struct {
		ns, address string
		ok          bool
	}{
		{"file:/srv/a://b", "file:/srv/a://b/x", true},
		{"file:/srv/a://b", "FILE:/srv/a://b/x", true},
		{"file:/srv/a://b", "file:/SRV/a://b/x", false},
		{"bucket/x://y", "bucket/x://y/k", true},
		{"bucket/x://y", "BUCKET/x://y/k", false},
		{"s3://b/x://y", "S3://B/x://y/k", true},
		{"s3://b/x://y", "s3://b/X://y/k", false},
	} {
		if _, ok := CutLiteral(tc.ns, tc.address); ok != tc.ok {
			t.Errorf("CutLiteral(%q, %q): ok %v, want %v", tc.ns, tc.address, ok, tc.ok)
		}
	}
}

// TestLocalSpelling: lakeFS's absolute spelling of a local namespace, as its
// API returns it, against spellings that name another folder.
func TestLocalSpelling(t *testing.T) {
	tests := []struct {
		root, ns string
		want     bool
	}{
		{"local:///var/lakefs/repo1", "local://repo1", true},
		{"local:///var/lakefs/repo1", "local://repo1/", true},
		{"local:///var/lakefs/a/repo1", "local://a/repo1", true},
		{"local:///repo1", "local://repo1", true},
		{"local:///var/lakefs/repo1", "local:///var/lakefs/repo1", true},
		{"local:///var/lakefs/xrepo1", "local://repo1", false}, // not a whole element
		{"local:///var/lakefs/repo1/x", "local://repo1", false},
		{"local://var/lakefs/repo1", "local://repo1", false}, // not absolute
		{"file:///var/lakefs/repo1", "local://repo1", false},
		{"local:///var/lakefs/repo1", "s3://b/repo1", false},
		{"local:///var/lakefs/", "local://", false},
		{"local:///var/lakefs/", "local:///", false},
		{"", "", false},
	}
	for _, tc := range tests {
		if got := LocalSpelling(tc.root, tc.ns); got != tc.want {
			t.Errorf("LocalSpelling(%q, %q) = %v, want %v", tc.root, tc.ns, got, tc.want)
		}
	}
}
