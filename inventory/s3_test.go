package inventory

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

var testNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func testRows() []s3Row {
	mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
	return []s3Row{
		{Key: "ns/data/a/b", Size: 3, Mod: mod},
		{Key: "ns/x y+z%", Size: 4, Mod: mod},
		{Key: "ns/old", Size: 1, Mod: mod, Noncurr: true},
		{Key: "ns/gone", DelMarker: true},
		{Key: "other/k", Size: 5, Mod: mod},
		{Key: "ns", Size: 5, Mod: mod},
	}
}

// collect reads a report's objects, or the error that ended them.
func collect(ctx context.Context, r *Report) ([]Object, error) {
	var out []Object
	for o, err := range r.Objects(ctx) {
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

func TestOpenS3Reads(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{"CSV", "Parquet"} {
		t.Run(format, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			mkey := writeS3(t, b, "", s3Report{Source: "src", Time: testNow.Add(-time.Hour), Format: format, Files: 2, Rows: testRows(), Version: true})
			r, err := OpenS3(ctx, b, mkey, "s3://src/ns", WithClock(func() time.Time { return testNow }))
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
			want := []Object{{Key: "data/a/b", Size: 3, ModTime: mod}, {Key: "x y+z%", Size: 4, ModTime: mod}}
			if !slices.Equal(got, want) {
				t.Fatalf("objects %+v, want %+v", got, want)
			}
			if !r.Time().Equal(testNow.Add(-time.Hour)) || r.Source() != "s3://dest/"+mkey {
				t.Fatalf("time %v, source %q", r.Time(), r.Source())
			}
		})
	}
}

// A report's refusals: each a clear error wrapping ErrInvalidInput and the
// specific sentinel, never a partial listing that ends without an error.
func TestOpenS3Refuses(t *testing.T) {
	ctx := context.Background()
	clock := WithClock(func() time.Time { return testNow })
	type setup func(t *testing.T, b *blob.Bucket, mkey string)
	rewrite := func(t *testing.T, b *blob.Bucket, key string, f func([]byte) []byte) {
		body, err := b.ReadAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteAll(ctx, key, f(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(f func(string) string) setup {
		return func(t *testing.T, b *blob.Bucket, mkey string) {
			rewrite(t, b, mkey, func(m []byte) []byte { return []byte(f(string(m))) })
			m := mustRead(t, b, mkey)
			s := md5.Sum(m)
			if err := b.WriteAll(ctx, strings.TrimSuffix(mkey, "json")+"checksum", []byte(hex.EncodeToString(s[:])), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	dataFile := func(t *testing.T, b *blob.Bucket) string {
		for o, err := range listAll(ctx, b, "src/cfg/data/") {
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		t.Fatal("no data file")
		return ""
	}
	cases := []struct {
		name   string
		format string
		setup  setup
		ns     string
		opts   []Option
		rows   []s3Row
		want   error
		atOpen bool
	}{
		{name: "bad MD5", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			rewrite(t, b, dataFile(t, b), func(d []byte) []byte { d = bytes.Clone(d); d[len(d)-5] ^= 1; return d })
		}, want: ErrChecksum},
		{name: "bad MD5 parquet", format: "Parquet", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			rewrite(t, b, dataFile(t, b), func(d []byte) []byte { d = bytes.Clone(d); d[len(d)/2] ^= 1; return d })
		}, want: ErrChecksum},
		{name: "longer file", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			rewrite(t, b, dataFile(t, b), func(d []byte) []byte { return append(bytes.Clone(d), 0) })
		}, want: ErrChecksum},
		{name: "shorter file", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			rewrite(t, b, dataFile(t, b), func(d []byte) []byte { return d[:len(d)-1] })
		}, want: ErrChecksum},
		{name: "missing file", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			if err := b.Delete(ctx, dataFile(t, b)); err != nil {
				t.Fatal(err)
			}
		}, want: ErrMissingFile},
		{name: "manifest checksum", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, mkey string) {
			rewrite(t, b, mkey, func(m []byte) []byte { return append(bytes.Clone(m), ' ') })
		}, want: ErrChecksum, atOpen: true},
		{name: "no manifest checksum", format: "CSV", setup: func(t *testing.T, b *blob.Bucket, mkey string) {
			if err := b.Delete(ctx, strings.TrimSuffix(mkey, "json")+"checksum"); err != nil {
				t.Fatal(err)
			}
		}, want: ErrMissingFile, atOpen: true},
		{name: "other bucket", format: "CSV", ns: "s3://other/ns", want: ErrNotCovered, atOpen: true},
		{name: "too old", format: "CSV", opts: []Option{WithMaxAge(30 * time.Minute)}, want: ErrTooOld, atOpen: true},
		{name: "future", format: "CSV", opts: []Option{WithClock(func() time.Time { return testNow.Add(-2 * time.Hour) })}, want: ErrTooOld, atOpen: true},
		{name: "empty", format: "CSV", rows: []s3Row{{Key: "other/x", Size: 1, Mod: testNow}}, want: ErrEmpty},
		{name: "long line", format: "CSV", rows: []s3Row{{Key: "ns/" + strings.Repeat("a", maxLine), Size: 1, Mod: testNow}}, want: ErrInvalidInput},
		{name: "long value", format: "Parquet", rows: []s3Row{{Key: "ns/" + strings.Repeat("a", 80<<10), Size: 1, Mod: testNow}}, want: ErrInvalidInput},
		{name: "empty parquet", format: "Parquet", ns: "s3://src/nothing", want: ErrEmpty},
		{name: "ORC", format: "CSV", setup: manifest(func(m string) string { return strings.Replace(m, `"CSV"`, `"ORC"`, 1) }), want: ErrUnsupported, atOpen: true},
		{name: "schema without time", format: "CSV", setup: manifest(func(m string) string { return strings.Replace(m, "LastModifiedDate", "Other", 1) }), want: ErrInvalidInput, atOpen: true},
		{name: "version", format: "CSV", setup: manifest(func(m string) string { return strings.Replace(m, "2016-11-30", "2030-01-01", 1) }), want: ErrInvalidInput, atOpen: true},
		{name: "row of another bucket", format: "CSV", setup: manifest(func(m string) string {
			return strings.Replace(m, `"sourceBucket": "src"`, `"sourceBucket": "ns2"`, 1)
		}), ns: "s3://ns2/ns", want: ErrInvalidInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			rows := c.rows
			if rows == nil {
				rows = testRows()
			}
			mkey := writeS3(t, b, "", s3Report{Source: "src", Time: testNow.Add(-time.Hour), Format: c.format, Rows: rows, Version: true})
			if c.setup != nil {
				c.setup(t, b, mkey)
			}
			ns := c.ns
			if ns == "" {
				ns = "s3://src/ns"
			}
			r, err := OpenS3(ctx, b, mkey, ns, append([]Option{clock}, c.opts...)...)
			if err == nil {
				if c.atOpen {
					t.Fatalf("opened; want %v at open", c.want)
				}
				_, err = collect(ctx, r)
			} else if !c.atOpen {
				t.Fatalf("open: %v; want %v while reading", err, c.want)
			}
			if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), "inventory: ") {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

func mustRead(t *testing.T, b *blob.Bucket, key string) []byte {
	t.Helper()
	body, err := b.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func listAll(ctx context.Context, b *blob.Bucket, prefix string) func(func(string, error) bool) {
	return func(yield func(string, error) bool) {
		it := b.List(&blob.ListOptions{Prefix: prefix})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield("", err)
				return
			}
			if !yield(o.Key, nil) {
				return
			}
		}
	}
}

// The property: S3's CSV encoding of any key, bytes that are not UTF-8,
// '+', '%' and spaces included, decodes to the same key, so no key is read
// as another.
func TestDecodeKeyInvertsS3Encoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	alphabet := []byte("ab+% /,\"\xff\xc3\xa9\x00-_.*~")
	for i := range 20000 {
		n := 1 + rng.IntN(12)
		key := make([]byte, n)
		for j := range key {
			if i%2 == 0 {
				key[j] = byte(rng.UintN(256))
			} else {
				key[j] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		got, err := decodeKey([]byte(encodeS3Key(string(key))))
		if err != nil || got != string(key) {
			t.Fatalf("key %q encoded %q decodes to %q, %v", key, encodeS3Key(string(key)), got, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"a+b", "a b"}, {"a%2Bb", "a+b"}, {"a%20b", "a b"}, {"%2b%2F", "+/"}, {"caf%C3%A9", "café"},
	} {
		if got, err := decodeKey([]byte(c.in)); err != nil || got != c.want {
			t.Fatalf("decodeKey(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"%", "a%2", "%g0", "%0g"} {
		if _, err := decodeKey([]byte(bad)); err == nil {
			t.Fatalf("decodeKey(%q) accepted", bad)
		}
	}
}

func ExampleOpenS3() {
	ctx := context.Background()
	// The bucket the report was delivered to, and a report of bucket
	// "src" written as S3 writes one (see the package documentation).
	dest := memblob.OpenBucket(nil)
	defer dest.Close()
	manifest := exampleReport(dest)

	r, err := OpenS3(ctx, dest, manifest, "s3://src/repo1", WithClock(func() time.Time { return testNow }))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Time().Format(time.RFC3339))
	for o, err := range r.Objects(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%q %d\n", o.Key, o.Size)
	}
	// Output:
	// 2026-11-20T11:00:00Z
	// "data/dbq0s7hksdu90jsgso0g/dbq0s7hksdu90jsgso10" 7
	// "a b+c" 3
}
