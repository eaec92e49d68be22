package parquetguard_test

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// plainRow is a row of a required string column of PLAIN values, a, as
// package uncommitted's files hold addresses, and another column.
type plainRow struct {
	A string `parquet:"a,plain"`
	N int64  `parquet:"n"`
}

// randomValues returns n strings: paths, empty ones, long ones (to 5 KiB),
// repeats and arbitrary bytes.
func randomValues(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		switch r.IntN(8) {
		case 0:
			out[i] = ""
		case 1:
			out[i] = string(bytes.Repeat([]byte{byte(r.IntN(256))}, r.IntN(5000)))
		case 2:
			if i > 0 {
				out[i] = out[i-1]
			}
		case 3:
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
			out[i] = string(b)
		default:
			out[i] = fmt.Sprintf("data/%x/%x", r.IntN(50), r.Uint64())
		}
	}
	return out
}

// writePlain writes values as column a of plainRow in a random layout:
// any codec, v1 or v2 pages, pages and row groups of random sizes.
func writePlain(t testing.TB, r *rand.Rand, values []string) []byte {
	t.Helper()
	rows := make([]plainRow, len(values))
	for i, v := range values {
		rows[i] = plainRow{A: v, N: int64(i)}
	}
	codec := guardtest.Codecs[r.IntN(len(guardtest.Codecs))]
	if codec == &parquet.Lz4Raw {
		codec = &parquet.Zstd // Check refuses pages that compress less than 3:1
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.Compression(codec), parquet.DataPageVersion(1+r.IntN(2)),
		parquet.PageBufferSize(256+r.IntN(16<<10)), parquet.MaxRowsPerRowGroup(int64(1+r.IntN(1000)))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readPlain returns what ReadPlain hands over of column a of data, and its
// error, failing t when a page is not as PageFunc states: exactly n
// values, each after its length, each within the default MaxValueSize, in
// row groups that never go back.
func readPlain(t *testing.T, data []byte) (got []string, err error) {
	t.Helper()
	got, _, err = readPlainGroups(t, data, parquetguard.Limits{})
	return got, err
}

// readPlainGroups is readPlain with limits lim, and returns as well how
// many values it handed over of each row group (groups[rg]).
func readPlainGroups(t *testing.T, data []byte, lim parquetguard.Limits) (got []string, groups []int, err error) {
	t.Helper()
	maxValue := uint32(cmp.Or(lim.MaxValueSize, parquetguard.DefaultMaxValueSize))
	err = parquetguard.ReadPlain(bytes.NewReader(data), int64(len(data)), lim, "a", func(rg int, values []byte, n int) error {
		if rg < max(0, len(groups)-1) {
			t.Fatalf("a page of row group %d after one of %d", rg, len(groups)-1)
		}
		for len(groups) <= rg {
			groups = append(groups, 0)
		}
		count := 0
		for len(values) > 0 {
			if len(values) < 4 {
				t.Fatalf("a page ends with %d bytes of a length", len(values))
			}
			l := binary.LittleEndian.Uint32(values)
			if uint64(l) > uint64(len(values)-4) || l > maxValue {
				t.Fatalf("a value of %d bytes, %d left", l, len(values)-4)
			}
			got = append(got, string(values[4:4+l]))
			values = values[4+l:]
			count++
		}
		if count != n {
			t.Fatalf("a page of %d values handed over as %d", count, n)
		}
		groups[rg] += n
		return nil
	})
	return got, groups, err
}

// parquetGoValues reads column a of data with parquet-go, a panic an error.
func parquetGoValues(data []byte) (out []string, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("panic: %v", v)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	leaf, ok := f.Schema().Lookup("a")
	if !ok {
		return nil, errors.New("no column a")
	}
	buf := make([]parquet.Value, 64)
	for _, rg := range f.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			page, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				pages.Close()
				return nil, err
			}
			vr := page.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					out = append(out, string(v.ByteArray()))
				}
				if err != nil || n == 0 {
					break
				}
			}
			parquet.Release(page)
		}
		pages.Close()
	}
	return out, nil
}

// TestReadPlainModel: ReadPlain hands over exactly the values written, in
// order, each row group's with its index, whatever the layout; and refuses, with ErrNotPlain and before any
// value, a column it does not hand over (a dictionary, an optional column,
// another type, a missing or doubled name). An error of the page function
// ends it, wrapped.
func TestReadPlainModel(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 35))
		want := randomValues(r, r.IntN(3000))
		data := writePlain(t, r, want)
		got, groups, err := readPlainGroups(t, data, parquetguard.Limits{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		// Each row group's values, in the row group the footer says.
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		rgs := f.Metadata().RowGroups
		if len(groups) > len(rgs) {
			t.Fatalf("seed %d: values of row group %d of %d", seed, len(groups)-1, len(rgs))
		}
		for i, rg := range rgs {
			if n := append(groups, make([]int, len(rgs))...)[i]; int64(n) != rg.NumRows {
				t.Fatalf("seed %d: %d values of row group %d, of %d rows", seed, n, i, rg.NumRows)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d values, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: value %d differs (%d bytes, want %d)", seed, i, len(got[i]), len(want[i]))
			}
		}
	}

	type dictRow struct {
		A string `parquet:"a,dict"`
	}
	type optRow struct {
		A *string `parquet:"a,optional,plain"`
	}
	type intRow struct {
		A int64 `parquet:"a"`
	}
	type nestRow struct {
		G struct {
			A string `parquet:"a,plain"`
		} `parquet:"g"`
	}
	s := "data/x"
	for name, rows := range map[string]any{
		"dictionary": []dictRow{{"data/a"}, {"data/b"}},
		"optional":   []optRow{{&s}, {nil}},
		"int64":      []intRow{{1}, {2}},
		"no column":  []nestRow{{}},
	} {
		var buf bytes.Buffer
		var err error
		switch rows := rows.(type) {
		case []dictRow:
			err = parquet.Write(&buf, rows)
		case []optRow:
			err = parquet.Write(&buf, rows)
		case []intRow:
			err = parquet.Write(&buf, rows)
		case []nestRow:
			err = parquet.Write(&buf, rows)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := readPlain(t, buf.Bytes())
		if !errors.Is(err, parquetguard.ErrNotPlain) || len(got) != 0 {
			t.Errorf("%s: %d values, %v; want none and ErrNotPlain", name, len(got), err)
		}
	}

	r := rand.New(rand.NewPCG(1, 36))
	data := writePlain(t, r, randomValues(r, 500))
	stop := errors.New("stop")
	pages := 0
	err := parquetguard.ReadPlain(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}, "a", func(int, []byte, int) error {
		pages++
		return stop
	})
	if !errors.Is(err, stop) || pages != 1 {
		t.Fatalf("a page function's error after %d pages: %v", pages, err)
	}
	if err := parquetguard.ReadPlain(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}, "a", nil); err == nil {
		t.Fatal("ReadPlain without a page function: no error")
	}
}

// FuzzReadPlain feeds arbitrary bytes, from files of PLAIN strings in
// random layouts, one with a dictionary, and the hostile files of
// guardtest. ReadPlain never panics; every page it hands over is as it
// documents (readPlain); it accepts no file Check refuses (ErrNotPlain
// aside, which asks for the other reading); and what it hands over of a
// file it accepts is what parquet-go reads, when parquet-go reads it.
func FuzzReadPlain(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 8 {
		var buf bytes.Buffer
		buf.Write(writePlain(f, r, randomValues(r, 1+r.IntN(20))))
		f.Add(buf.Bytes())
	}
	var buf bytes.Buffer
	type dictRow struct {
		A string `parquet:"a,dict"`
	}
	if err := parquet.Write(&buf, []dictRow{{"data/a"}, {"data/b"}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	for _, data := range guardtest.HostileSeeds("a", "n") {
		f.Add(data)
	}
	f.Fuzz(plainThenRead)
}

// FuzzReadPlainPages builds files from fuzzed page headers and payloads
// (guardtest.Fuzzed: PLAIN, dictionary, delta and nullable values, v1 and
// v2 pages, every codec), with FuzzReadPlain's property.
func FuzzReadPlainPages(f *testing.F) {
	for _, s := range guardtest.FuzzSeeds() {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		plainThenRead(t, guardtest.Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File("a"))
	})
}

// plainThenRead is the property of the ReadPlain fuzz targets: see
// FuzzReadPlain.
func plainThenRead(t *testing.T, data []byte) {
	got, err := readPlain(t, data)
	cerr := parquetguard.Check(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}, "a")
	if cerr != nil && err == nil {
		t.Fatalf("ReadPlain accepts a file Check refuses: %v", cerr)
	}
	if err != nil {
		return
	}
	if want, werr := parquetGoValues(data); werr == nil && !slices.Equal(got, want) {
		t.Fatalf("ReadPlain hands over %d values, parquet-go reads %d, not the same", len(got), len(want))
	}
}

// TestPageFuncContract: the clauses of PageFunc that the files of
// TestReadPlainModel, all honest, cannot break. A page holds exactly n
// values: one whose header claims more is not handed over (ErrNotPlain:
// parquet-go reads it, short), nor one that holds more, or a value that
// overruns it, or a length cut short (Check's refusal). A value is at most
// MaxValueSize, whatever the limit. A page of no values is handed over
// empty, with n 0.
func TestPageFuncContract(t *testing.T) {
	page := func(n int32, data []byte) []byte {
		return guardtest.File(int64(n), guardtest.Column{Name: "a", Type: format.ByteArray, Pages: []guardtest.Page{
			guardtest.DataPage(format.Uncompressed, format.Plain, n, data)}})
	}
	two := guardtest.Plain([]byte("data/a"), []byte("data/bb"))
	for _, tc := range []struct {
		name     string
		file     []byte
		notPlain bool
	}{
		{"fewer values than its header claims", page(3, two), true},
		{"more values than its header claims", page(1, two), false},
		{"a value past the page's end", page(2, two[:len(two)-1]), false},
		{"a length cut short", page(3, append(slices.Clone(two), 7, 0)), false},
	} {
		got, err := readPlain(t, tc.file)
		if err == nil || errors.Is(err, parquetguard.ErrNotPlain) != tc.notPlain || len(got) != 0 {
			t.Errorf("%s: handed over %q, %v; want nothing and an error (ErrNotPlain: %v)", tc.name, got, err, tc.notPlain)
		}
	}

	// A value of 7 bytes, within a limit of 7, over one of 6.
	file := page(2, two)
	for _, limit := range []int{7, 6} {
		got, _, err := readPlainGroups(t, file, parquetguard.Limits{MaxValueSize: limit})
		if (limit == 7) != (err == nil && slices.Equal(got, []string{"data/a", "data/bb"})) || limit == 6 && len(got) != 0 {
			t.Errorf("MaxValueSize %d: handed over %q, %v", limit, got, err)
		}
	}

	// An empty page between two others.
	empty := guardtest.File(2, guardtest.Column{Name: "a", Type: format.ByteArray, Pages: []guardtest.Page{
		guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("data/a"))),
		guardtest.DataPage(format.Uncompressed, format.Plain, 0, nil),
		guardtest.DataPage(format.Uncompressed, format.Plain, 1, guardtest.Plain([]byte("data/b"))),
	}})
	var sizes, counts []int
	err := parquetguard.ReadPlain(bytes.NewReader(empty), int64(len(empty)), parquetguard.Limits{}, "a", func(rg int, values []byte, n int) error {
		sizes, counts = append(sizes, len(values)), append(counts, n)
		return nil
	})
	if err != nil || !slices.Equal(counts, []int{1, 0, 1}) || sizes[1] != 0 {
		t.Errorf("pages of %v values, of %v bytes: %v", counts, sizes, err)
	}
}
