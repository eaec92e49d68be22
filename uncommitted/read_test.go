package uncommitted_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"
)

// TestReadRun reads a folder as lakeFS leaves it: no manifest, so only
// with AllowUnverified.
func TestReadRun(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	folder := "_lakefs/retention/gc/uncommitted/r1/uncommitted/"
	// a file written by another writer (plain parquet-go defaults), a marker,
	// and an empty Parquet file, as Spark leaves them
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []uncommitted.Row{{PhysicalAddress: "data/a", CreationDate: 7}, {PhysicalAddress: "data/b", CreationDate: 8}}); err != nil {
		t.Fatal(err)
	}
	var empty bytes.Buffer
	if err := parquet.Write[uncommitted.Row](&empty, nil); err != nil {
		t.Fatal(err)
	}
	for key, data := range map[string][]byte{
		folder + "part-0": buf.Bytes(), folder + "part-1": empty.Bytes(),
		folder + "_SUCCESS": nil, folder + ".hidden": []byte("x"),
		"_lakefs/retention/gc/uncommitted/r10/uncommitted/other": []byte("not this run"),
	} {
		if err := bucket.WriteAll(ctx, key, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	for r, err := range uncommitted.ReadRun(ctx, bucket, "/_lakefs/", "r1") {
		if !errors.Is(err, uncommitted.ErrIncomplete) {
			t.Fatalf("a run without manifest, read without AllowUnverified: %v, %v; want ErrIncomplete", r, err)
		}
	}
	var got []uncommitted.Row
	for r, err := range uncommitted.ReadRun(ctx, bucket, "/_lakefs/", "r1", uncommitted.AllowUnverified()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0] != (uncommitted.Row{PhysicalAddress: "data/a", CreationDate: 7}) || got[1].PhysicalAddress != "data/b" {
		t.Fatalf("rows %v", got)
	}

	// early break
	for range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r1", uncommitted.AllowUnverified()) {
		break
	}

	// a file that is not Parquet, or lacks the address column
	if err := bucket.WriteAll(ctx, folder+"part-2", []byte("PAR1 garbage PAR1"), nil); err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer
	if err := parquet.Write(&other, []struct {
		Address string `parquet:"address"`
	}{{"data/c"}}); err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(ctx, folder+"part-3", other.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"part-2", "part-3"} {
		b2 := memblob.OpenBucket(nil)
		data, _ := bucket.ReadAll(ctx, folder+bad)
		_ = b2.WriteAll(ctx, folder+bad, data, nil)
		var err error
		for _, e := range uncommitted.ReadRun(ctx, b2, "_lakefs", "r1", uncommitted.AllowUnverified()) {
			if e != nil {
				err = e
			}
		}
		if !errors.Is(err, uncommitted.ErrInvalidFile) {
			t.Errorf("%s: err %v, want ErrInvalidFile", bad, err)
		}
		b2.Close()
	}

	// a bad run ID, and a cancelled context
	for _, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "../r1") {
		if !errors.Is(err, uncommitted.ErrInvalidToken) {
			t.Errorf("run ID ../r1: %v", err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var cerr error
	for _, err := range uncommitted.ReadRun(cctx, bucket, "_lakefs", "r1", uncommitted.AllowUnverified()) {
		cerr = err
	}
	if !errors.Is(cerr, context.Canceled) {
		t.Errorf("cancelled: %v", cerr)
	}
}

// FuzzReadRun feeds arbitrary bytes as a run's file, from files of every
// codec and hostile ones: ReadRun returns rows or an error, never panics,
// and allocates at most fuzzAllocBound.
func FuzzReadRun(f *testing.F) {
	var buf bytes.Buffer
	_ = parquet.Write(&buf, []uncommitted.Row{{PhysicalAddress: "data/a", CreationDate: 7}, {PhysicalAddress: "data/b"}})
	valid := buf.Bytes()
	f.Add(valid)
	f.Add(valid[:len(valid)-9])
	f.Add(append([]byte("PAR1"), valid[len(valid)/2:]...))
	f.Add([]byte("PAR1PAR1"))
	// A footer of a list of 2^28 schema elements, in 9 bytes.
	f.Add([]byte("PAR1\x15\x02\x19\xfc\x80\x80\x80\x80\x01\x09\x00\x00\x00PAR1"))
	f.Add([]byte{})
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(fuzzRead)
}

// TestReadRunDamagedFooter flips one bit at a time in the footer of a file
// (where parquet-go's reader trusts the metadata most): ReadRun either
// fails with ErrInvalidFile or yields every row. Reading fewer rows without
// an error would make a GC delete live objects. An intact file is read
// first, as a GC reads many: some damaged footers read short only then.
func TestReadRunDamagedFooter(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	const rows = 300
	res, err := newPreparer(t, bucket).Prepare(ctx, repo, bigSource(1, rows), nil)
	if err != nil || res.Rows != rows {
		t.Fatalf("%+v, %v", res, err)
	}
	key := "_lakefs/retention/gc/uncommitted/" + res.RunID + "/uncommitted/" + res.Filename
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	footer := len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	damaged := memblob.OpenBucket(nil)
	defer damaged.Close()
	if got := len(readAll(t, ctx, bucket, res.RunID)); got != rows {
		t.Fatalf("%d rows of the intact file, want %d", got, rows)
	}
	for i := footer; i < len(data)-8; i++ {
		for _, bit := range []byte{0x01, 0x80} {
			d := slices.Clone(data)
			d[i] ^= bit
			if err := damaged.WriteAll(ctx, key, d, nil); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range uncommitted.ReadRun(ctx, damaged, "_lakefs", res.RunID, uncommitted.AllowUnverified()) {
				if err != nil {
					if !errors.Is(err, uncommitted.ErrInvalidFile) {
						t.Fatalf("byte %d ^ %#x: error %v does not wrap ErrInvalidFile", i, bit, err)
					}
					n = -1
					break
				}
				n++
			}
			if n >= 0 && n != rows {
				t.Fatalf("byte %d ^ %#x of %d: %d rows of %d, and no error", i, bit, len(data), n, rows)
			}
		}
	}
}

// rewriteFooter returns a copy of a Parquet file whose footer was changed
// by edit.
func rewriteFooter(t *testing.T, data []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[len(data)-8-n:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	edit(&md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(slices.Clone(data[:len(data)-8-n]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// TestReadRunInconsistentFooter: a footer whose counts or chunk types
// disagree is refused, even where parquet-go would read it.
func TestReadRunInconsistentFooter(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	res, err := newPreparer(t, bucket).Prepare(ctx, repo, bigSource(1, 300), nil)
	if err != nil {
		t.Fatal(err)
	}
	key := "_lakefs/retention/gc/uncommitted/" + res.RunID + "/uncommitted/" + res.Filename
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*format.FileMetaData){
		"more rows than stored": func(md *format.FileMetaData) {
			md.NumRows++
			md.RowGroups[0].NumRows++
			for i := range md.RowGroups[0].Columns {
				md.RowGroups[0].Columns[i].MetaData.NumValues++
			}
		},
		"chunk with fewer values than rows": func(md *format.FileMetaData) { md.RowGroups[0].Columns[1].MetaData.NumValues-- },
		"row groups short of the file":      func(md *format.FileMetaData) { md.NumRows++ },
		"chunk of another type":             func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.Type = format.Int64 },
		"chunk missing":                     func(md *format.FileMetaData) { md.RowGroups[0].Columns = md.RowGroups[0].Columns[:1] },
		"chunks swapped": func(md *format.FileMetaData) {
			c := md.RowGroups[0].Columns
			c[0], c[1] = c[1], c[0]
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			if err := b.WriteAll(ctx, key, rewriteFooter(t, data, edit), nil); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range uncommitted.ReadRun(ctx, b, "_lakefs", res.RunID, uncommitted.AllowUnverified()) {
				if err != nil {
					if !errors.Is(err, uncommitted.ErrInvalidFile) {
						t.Fatalf("error %v does not wrap ErrInvalidFile", err)
					}
					return
				}
				n++
			}
			t.Fatalf("read %d rows and no error", n)
		})
	}
}
