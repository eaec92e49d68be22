package parquetguard_test

import (
	"bytes"
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
// error, failing t when a page is not as ReadPlain documents: exactly n
// values, each after its length, each within the default MaxValueSize, in
// row groups that never go back.
func readPlain(t *testing.T, data []byte) (got []string, err error) {
	t.Helper()
	last := 0
	err = parquetguard.ReadPlain(bytes.NewReader(data), int64(len(data)), parquetguard.Limits{}, "a", func(rg int, values []byte, n int) error {
		if rg < last {
			t.Fatalf("a page of row group %d after one of %d", rg, last)
		}
		last = rg
		count := 0
		for len(values) > 0 {
			if len(values) < 4 {
				t.Fatalf("a page ends with %d bytes of a length", len(values))
			}
			l := binary.LittleEndian.Uint32(values)
			if uint64(l) > uint64(len(values)-4) || l > parquetguard.DefaultMaxValueSize {
				t.Fatalf("a value of %d bytes, %d left", l, len(values)-4)
			}
			got = append(got, string(values[4:4+l]))
			values = values[4+l:]
			count++
		}
		if count != n {
			t.Fatalf("a page of %d values handed over as %d", count, n)
		}
		return nil
	})
	return got, err
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
// order, whatever the layout; and refuses, with ErrNotPlain and before any
// value, a column it does not hand over (a dictionary, an optional column,
// another type, a missing or doubled name). An error of the page function
// ends it, wrapped.
func TestReadPlainModel(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 35))
		want := randomValues(r, r.IntN(3000))
		data := writePlain(t, r, want)
		got, err := readPlain(t, data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
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
