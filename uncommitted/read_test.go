package uncommitted_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"
)

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
	var got []uncommitted.Row
	for r, err := range uncommitted.ReadRun(ctx, bucket, "/_lakefs/", "r1") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0] != (uncommitted.Row{PhysicalAddress: "data/a", CreationDate: 7}) || got[1].PhysicalAddress != "data/b" {
		t.Fatalf("rows %v", got)
	}

	// early break
	for range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r1") {
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
		for _, e := range uncommitted.ReadRun(ctx, b2, "_lakefs", "r1") {
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
	for _, err := range uncommitted.ReadRun(cctx, bucket, "_lakefs", "r1") {
		cerr = err
	}
	if !errors.Is(cerr, context.Canceled) {
		t.Errorf("cancelled: %v", cerr)
	}
}

// FuzzReadRun feeds arbitrary bytes as a run's file: ReadRun returns rows
// or an error, never panics.
func FuzzReadRun(f *testing.F) {
	var buf bytes.Buffer
	_ = parquet.Write(&buf, []uncommitted.Row{{PhysicalAddress: "data/a", CreationDate: 7}, {PhysicalAddress: "data/b"}})
	valid := buf.Bytes()
	f.Add(valid)
	f.Add(valid[:len(valid)-9])
	f.Add(append([]byte("PAR1"), valid[len(valid)/2:]...))
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
			t.Fatal(err)
		}
		for _, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", "r") {
			if err != nil && !errors.Is(err, uncommitted.ErrInvalidFile) {
				t.Fatalf("error %v does not wrap ErrInvalidFile", err)
			}
		}
	})
}
