package host

import (
	"context"
	"slices"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
)

// FuzzRunRecord: a run record is read from the namespace, where anything
// may be written. readRunRecord never panics, and whatever it accepts is a
// list of range IDs that reads back the same once written again; a record
// cut anywhere before its trailer's end is refused (a prune then keeps
// every cache).
func FuzzRunRecord(f *testing.F) {
	ctx := context.Background()
	key := layout.RangeCacheRunKey(storagePrefix, "r1")
	for _, ids := range [][]string{nil, {rangeID(1)}, {rangeID(1), rangeID(2), rangeID(3)}} {
		b := memblob.OpenBucket(nil)
		if err := writeRunRecord(ctx, b, "r1", ids); err != nil {
			f.Fatal(err)
		}
		data, err := b.ReadAll(ctx, key)
		if err != nil {
			f.Fatal(err)
		}
		b.Close()
		f.Add(data)
	}
	f.Add([]byte(recordHeader + "\n" + rangeID(1) + "\nend 2\n"))
	f.Add([]byte(recordHeader + "\r\n" + strings.ToUpper(rangeID(1)) + "\nend 1\n"))
	f.Add([]byte(recordHeader + "\n../" + rangeID(1)[3:] + "\nend 1\nend 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := memblob.OpenBucket(nil)
		defer b.Close()
		if err := b.WriteAll(ctx, key, data, nil); err != nil {
			t.Fatal(err)
		}
		ids, err := readRunRecord(ctx, b, key)
		if err != nil {
			return
		}
		for _, id := range ids {
			if !isRangeID(id) {
				t.Fatalf("accepted %q", id)
			}
		}
		if err := writeRunRecord(ctx, b, "r2", ids); err != nil {
			t.Fatal(err)
		}
		again, err := readRunRecord(ctx, b, layout.RangeCacheRunKey(storagePrefix, "r2"))
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("written again: %v, %v, want %v", again, err, ids)
		}
		// Cut short, it is refused.
		if i := strings.LastIndex(string(data), recordTrailer); i >= 0 {
			if err := b.WriteAll(ctx, key, data[:i], nil); err != nil {
				t.Fatal(err)
			}
			if got, err := readRunRecord(ctx, b, key); err == nil {
				t.Fatalf("a record cut before its trailer read as %v", got)
			}
		}
	})
}

// TestRunRecordBound: a record of more range IDs than a run can read is
// refused (the prune then keeps every cache), so that a record written by
// anyone takes a bounded memory to read.
func TestRunRecordBound(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { maxRecordIDs = n }(maxRecordIDs)
	maxRecordIDs = 3
	b := memblob.OpenBucket(nil)
	defer b.Close()
	key := layout.RangeCacheRunKey(storagePrefix, "r1")
	for n, ok := range map[int]bool{2: true, 3: true, 4: false} {
		var ids []string
		for i := range n {
			ids = append(ids, rangeID(i))
		}
		if err := writeRunRecord(ctx, b, "r1", ids); err != nil {
			t.Fatal(err)
		}
		got, err := readRunRecord(ctx, b, key)
		if (err == nil) != ok || ok && !slices.Equal(got, ids) {
			t.Errorf("%d IDs: %v, %v", n, got, err)
		}
	}
}
