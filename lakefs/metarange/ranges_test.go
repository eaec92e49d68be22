package metarange

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// formatRecords is the model of the tables of testdata/formats, as
// testdata/gen writes them with lakeFS's pebble.
func formatRecords(n int, big bool) []record {
	var records []record
	for i := range n {
		v := strings.Repeat(fmt.Sprintf("value %d", i), i%7+1)
		if big && i == 500 {
			v = strings.Repeat("v", 100<<10)
		}
		records = append(records, record{[]byte(fmt.Sprintf("key/%06d", i)), []byte(v)})
	}
	return records
}

// TestGoldenFormats reads the variants of the format that lakeFS's pebble
// writes, each written by that pebble: every record, in order, and the
// part of the format each variant is there for.
func TestGoldenFormats(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		big      bool
		twoLevel bool
		checksum byte
	}{
		{"lakefs", 1000, false, false, checksumCRC32C},
		{"empty", 0, false, false, checksumCRC32C},
		{"two-level", 1500, false, true, checksumCRC32C},
		{"two-level-uncompressed", 1500, false, true, checksumCRC32C},
		{"xxhash64", 1000, false, false, checksumXXHash64},
		{"restart-interval-1", 1000, false, false, checksumCRC32C},
		{"big-value", 1000, true, false, checksumCRC32C},
		{"pebblev1", 1000, false, false, checksumCRC32C},
		{"pebblev2", 1500, false, true, checksumCRC32C},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table, err := os.ReadFile(filepath.Join("testdata/formats", c.name))
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := openTable(table)
			if err != nil {
				t.Fatal(err)
			}
			if tbl.twoLevel != c.twoLevel || tbl.checksum != c.checksum {
				t.Fatalf("two-level %v, checksum %d; want %v, %d", tbl.twoLevel, tbl.checksum, c.twoLevel, c.checksum)
			}
			want := formatRecords(c.n, c.big)
			var got []record
			err = eachRecord(table, typeRanges, c.name, func(key, value []byte) error {
				got = append(got, record{slices.Clone(key), slices.Clone(value)})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i].key, want[i].key) || !bytes.Equal(got[i].value, want[i].value) {
					t.Fatalf("record %d: %q = %.20q, want %q = %.20q", i, got[i].key, got[i].value, want[i].key, want[i].value)
				}
			}
		})
	}
	for _, name := range []string{"refused-leveldb", "refused-pebblev3"} {
		table, err := os.ReadFile(filepath.Join("testdata/formats", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := eachRecord(table, typeRanges, name, func(_, _ []byte) error { return nil }); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

// openFile returns a golden table as a host's storage adapter would: a
// reader at and a size.
func openFile(t *testing.T, id string) (io.ReaderAt, int64) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/namespace/_lakefs", id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, info.Size()
}

// TestGoldenRangesAndEntries reads the golden repository through the range
// API: what testdata/gen wrote, field by field.
func TestGoldenRangesAndEntries(t *testing.T) {
	type want struct {
		address string
		typ     AddressType
	}
	wantEntries := map[string]want{
		"a/1.csv":                {"data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0", relative},
		"a/2.csv":                {"data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug", relative},
		"a/linked.bin":           {"data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0,f6gNY3pKvL4BQ4Kwc9lHHPuz2QGVxqzE7q0m0ONhZRs", relative},
		"b/imported-inside.csv":  {"s3://bucket/repo/imported/x.csv", full},
		"b/imported-outside.csv": {"s3://other-bucket/x.csv", full},
		"b/old-full.csv":         {"s3://bucket/repo/4d2f1b0c9a8e4f6b8c7e", byPrefixDeprecated},
		"b/old-relative.csv":     {"4d2f1b0c9a8e4f6b8c7d", byPrefixDeprecated},
		"c/1.csv":                {"data/gc5ftg2d4d2gdp2b5tt0/cv9hsm2d4d2gdp2b5u00", relative},
	}
	seen := map[string]bool{}
	got := map[string]Entry{}
	for _, mr := range []string{
		"f421745fedfb855e9f79f5f9db481b6b515827ba7213c837e64e29ce5226fe9f",
		"1f53950d5f7c75705f30f88eade7d1db72a9617e2c4d7a4da56ca57c1254e548",
		"83bf413bf2d8acee9b529d255c0b943d91e65a12ddff2e453726a418922ae61c",
	} {
		var prevMax []byte
		for rg, err := range Ranges(openFile(t, mr)) {
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Compare(rg.MinKey, prevMax) <= 0 || bytes.Compare(rg.MaxKey, rg.MinKey) < 0 || rg.EstimatedSize == 0 {
				t.Errorf("metarange %s: range %+v after max key %q", mr, rg, prevMax)
			}
			prevMax = rg.MaxKey
			if seen[rg.ID] {
				continue
			}
			seen[rg.ID] = true
			var paths []string
			for e, err := range Entries(openFile(t, rg.ID)) {
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, e.Path)
				got[e.Path] = e
			}
			if int64(len(paths)) != rg.Count || paths[0] != string(rg.MinKey) || paths[len(paths)-1] != string(rg.MaxKey) {
				t.Errorf("range %s: entries %q; the metarange says %d from %q to %q", rg.ID, paths, rg.Count, rg.MinKey, rg.MaxKey)
			}
		}
	}
	if len(seen) != 3 || len(got) != len(wantEntries) {
		t.Fatalf("%d ranges, %d entries; want 3, %d", len(seen), len(got), len(wantEntries))
	}
	for path, w := range wantEntries {
		e := got[path]
		ok := e.Address == w.address && e.AddressType == w.typ && e.Size == 1234 &&
			e.ETag == "d41d8cd98f00b204e9800998ecf8427e" && e.ContentType == "text/csv" &&
			e.LastModified.Equal(time.Unix(1700000000, 0)) && len(e.Metadata) == 1 && e.Metadata["owner"] == "etl"
		if !ok {
			t.Errorf("%s: %+v, want address %q of type %v", path, e, w.address, w.typ)
		}
	}
}

// TestRangesAndEntriesModel reads random repositories through the range
// API: every range a metarange lists, and every entry of every range, as
// written.
func TestRangesAndEntriesModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	for i := range 8 {
		opts := tableOptions{compression: snappyCompression}
		if i%2 == 1 {
			opts.blockSize = 64 + rng.IntN(512)
		}
		repo := newFixtureRepo(t, opts)
		var ranges []fixtureRange
		entriesOf := map[string][]fixtureEntry{}
		for j := range 1 + rng.IntN(10) {
			entries := randomEntries(rng, 1+rng.IntN(300), fmt.Sprintf("r%03d", j))
			r := repo.addRange(entries)
			ranges = append(ranges, r)
			entriesOf[r.id] = entries
		}
		mr := repo.addMetaRange(ranges...)
		data := mustRead(t, repo.bucket, mr)
		var got []fixtureRange
		for rg, err := range Ranges(bytes.NewReader(data), int64(len(data))) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fixtureRange{id: rg.ID, minKey: string(rg.MinKey), maxKey: string(rg.MaxKey), count: rg.Count, size: rg.EstimatedSize})
		}
		if !slices.Equal(got, ranges) {
			t.Fatalf("ranges\n got %+v\nwant %+v", got, ranges)
		}
		for _, r := range ranges {
			data := mustRead(t, repo.bucket, r.id)
			want := entriesOf[r.id]
			n := 0
			for e, err := range Entries(bytes.NewReader(data), int64(len(data))) {
				if err != nil {
					t.Fatal(err)
				}
				w := want[n]
				if e.Path != w.path || e.Address != w.address || e.AddressType != w.typ || e.Size != 42 || e.ETag != "etag" ||
					!e.LastModified.Equal(time.Unix(1700000000, 0)) || e.ContentType != "application/octet-stream" || e.Metadata != nil {
					t.Fatalf("range %s entry %d: %+v, want %+v", r.id, n, e, w)
				}
				n++
			}
			if n != len(want) {
				t.Fatalf("range %s: %d entries, want %d", r.id, n, len(want))
			}
		}
	}
}

// TestRangesAndEntriesRefuse checks the range API's errors: each fails the
// iteration, never shortens it silently.
func TestRangesAndEntriesRefuse(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	r := repo.addRange([]fixtureEntry{{"a", "data/a", relative}, {"b", "data/b", relative}})
	rangeTable := mustRead(t, repo.bucket, r.id)
	metaTable := mustRead(t, repo.bucket, repo.addMetaRange(r))
	entries := func(r io.ReaderAt, size int64, opts ...Option) (n int, err error) {
		for _, err = range Entries(r, size, opts...) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	ranges := func(r io.ReaderAt, size int64) (n int, err error) {
		for _, err = range Ranges(r, size) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	cases := []struct {
		name string
		run  func() (int, error)
		want error
	}{
		{"larger than the maximum", func() (int, error) {
			return entries(bytes.NewReader(rangeTable), int64(len(rangeTable)), WithMaxFileSize(int64(len(rangeTable)-1)))
		}, ErrLimit},
		{"negative size", func() (int, error) { return entries(bytes.NewReader(rangeTable), -1) }, ErrInvalidInput},
		{"nil reader", func() (int, error) { return entries(nil, 10) }, ErrInvalidInput},
		{"invalid option", func() (int, error) {
			return entries(bytes.NewReader(rangeTable), int64(len(rangeTable)), WithMaxFileSize(-1))
		}, ErrInvalidInput},
		{"shorter than its size", func() (int, error) { return entries(bytes.NewReader(rangeTable), int64(len(rangeTable))+1) }, io.ErrUnexpectedEOF},
		{"a size that cuts the table", func() (int, error) { return entries(bytes.NewReader(rangeTable), int64(len(rangeTable))-1) }, ErrCorrupt},
		{"a metarange read as a range", func() (int, error) { return entries(bytes.NewReader(metaTable), int64(len(metaTable))) }, ErrCorrupt},
		{"a range read as a metarange", func() (int, error) { return ranges(bytes.NewReader(rangeTable), int64(len(rangeTable))) }, ErrCorrupt},
		{"a failing reader", func() (int, error) {
			return entries(failingReader{}, int64(len(rangeTable)))
		}, errRead},
	}
	for _, c := range cases {
		if n, err := c.run(); !errors.Is(err, c.want) || n != 0 {
			t.Errorf("%s: %d values, err = %v; want %v", c.name, n, err, c.want)
		}
	}
	// Stopping early is no error.
	for e, err := range Entries(bytes.NewReader(rangeTable), int64(len(rangeTable))) {
		if err != nil || e.Path != "a" {
			t.Fatalf("%+v, %v", e, err)
		}
		break
	}
}

var errRead = errors.New("storage failed")

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errRead }

// TestNamespaceKeysExported checks Namespace.Keys against Addresses' rules on the
// model's addresses.
func TestNamespaceKeysExported(t *testing.T) {
	ns, err := ParseNamespace(testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range randomEntries(rand.New(rand.NewPCG(8, 9)), 500, "k") {
		got, err := ns.Keys(nil, e.address, e.typ)
		if err != nil {
			t.Fatalf("Keys(%q, %v): %v", e.address, e.typ, err)
		}
		if want := modelKeys(e); !slices.Equal(got, want) {
			t.Fatalf("Keys(%q, %v) = %q, want %q", e.address, e.typ, got, want)
		}
	}
	// Another spelling of the namespace is an error, never an empty answer.
	mis := "s3a" + strings.TrimPrefix(testNamespace, "s3") + "/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	if keys, err := ns.Keys(nil, mis, AddressFull); !errors.Is(err, ErrNamespaceMismatch) || len(keys) != 0 {
		t.Errorf("Keys(%q) = %q, %v; want ErrNamespaceMismatch", mis, keys, err)
	}
	if _, err := ParseNamespace("bucket/repo"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ParseNamespace(bucket/repo): err = %v, want ErrInvalidInput", err)
	}
}
