package retention

import (
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob/memblob"
)

func TestWriteCommitsCSV(t *testing.T) {
	active := []ActiveCommit{
		{CommitID: "a1", MetaRangeID: "m1"},
		{CommitID: "b,2", MetaRangeID: ""}, // quoted by encoding/csv, read back whole
		{CommitID: "c3", MetaRangeID: "m\"3"},
	}
	for name, bucket := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			key, err := WriteCommitsCSV(t.Context(), bucket, "_lakefs", "run1", active)
			if err != nil {
				t.Fatal(err)
			}
			if want := "_lakefs/retention/gc/commits/run_id=run1/commits.csv"; key != want {
				t.Errorf("key = %q, want %q", key, want)
			}
			b, err := bucket.ReadAll(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			wantText := "commit_id,expired,metarange_id\na1,false,m1\n\"b,2\",false,\nc3,false,\"m\"\"3\"\n"
			if string(b) != wantText {
				t.Errorf("report:\n%s\nwant:\n%s", b, wantText)
			}
			rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range active {
				if want := []string{c.CommitID, "false", c.MetaRangeID}; !slices.Equal(rows[i+1], want) {
					t.Errorf("row %d = %q, want %q", i+1, rows[i+1], want)
				}
			}
		})
	}
}

func TestWriteCommitsCSVEmptyAndPrefix(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	key, err := WriteCommitsCSV(t.Context(), bucket, "", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "_lakefs/retention/gc/commits/run_id=r/commits.csv" {
		t.Errorf("key = %q", key)
	}
	if b, _ := bucket.ReadAll(t.Context(), key); string(b) != "commit_id,expired,metarange_id\n" {
		t.Errorf("empty report = %q", b)
	}
	for _, runID := range []string{"", "a/b", "..", "a b", "a\\b"} {
		if _, err := WriteCommitsCSV(t.Context(), bucket, "p", runID, nil); err == nil {
			t.Errorf("run ID %q accepted", runID)
		}
	}
}

// cancelAfter is a context whose Err reports cancellation from its n-th
// call on: a cancellation that arrives in the middle of a write.
type cancelAfter struct {
	context.Context
	calls, n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

func TestWriteCommitsCSVCanceled(t *testing.T) {
	active := make([]ActiveCommit, 8*ctxCheckEvery)
	for i := range active {
		active[i] = ActiveCommit{CommitID: fmt.Sprintf("%064x", i), MetaRangeID: fmt.Sprintf("%064x", -i)}
	}
	for name, bucket := range buckets(t) {
		for _, n := range []int64{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/after %d checks", name, n), func(t *testing.T) {
				ctx := &cancelAfter{Context: t.Context()}
				ctx.n.Store(n)
				key, err := WriteCommitsCSV(ctx, bucket, "_lakefs", fmt.Sprint("run", n), active)
				if err == nil {
					t.Fatalf("wrote %s despite cancellation", key)
				}
				keys := bucket.List(nil)
				if obj, err := keys.Next(t.Context()); err == nil {
					t.Errorf("canceled write left %s", obj.Key)
				}
			})
		}
	}
}

func TestNewRunID(t *testing.T) {
	start := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	var prev string
	for i := range 100 {
		now := start.Add(time.Duration(i) * 1500 * time.Millisecond)
		id := NewRunID(now)
		parsed, err := xid.FromString(id)
		if err != nil {
			t.Fatalf("%q is not an xid: %v", id, err)
		}
		// 4000-01-01 minus now, kept in the xid's 32 bits of seconds.
		if got, want := parsed.Time().Unix(), int64(uint32(64060588800-now.Unix())); got != want {
			t.Fatalf("xid time %d, want %d", got, want)
		}
		if prev != "" && id >= prev {
			t.Fatalf("run ID %q at %v does not sort before %q", id, now, prev)
		}
		prev = id
	}
	a, b := NewRunID(start), NewRunID(start)
	if a == b {
		t.Errorf("two runs in one second share ID %q", a)
	}
}
