package uncommitted_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

var repo = uncommitted.Repository{ID: "repo1", StorageNamespace: namespace}

// bigSource has branches of n generated entries, enough for several row
// groups per file.
func bigSource(branches, n int) *memSource {
	src := newMemSource()
	for b := range branches {
		es := make([]uncommitted.Entry, n)
		for i := range es {
			es[i] = uncommitted.Entry{
				Key:             fmt.Sprintf("k%07d", i),
				PhysicalAddress: fmt.Sprintf("data/b%d/%016x", b, uint64(i)*0x9e3779b97f4a7c15),
				CreationDate:    time.Unix(int64(i), 0),
			}
		}
		src.add(fmt.Sprint("branch", b), es...)
	}
	return src
}

func listKeys(t *testing.T, bucket *blob.Bucket) []string {
	t.Helper()
	var keys []string
	it := bucket.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, obj.Key)
	}
}

// TestPrepareCancelledMidWrite cancels a call after row groups went into the
// bucket's writer: the call fails, no object appears, and the same mark
// then completes the run with every row exactly once.
func TestPrepareCancelledMidWrite(t *testing.T) {
	for name, open := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			bucket := open(t)
			src := bigSource(3, 5000)
			p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(64<<10))

			first, err := p.Prepare(context.Background(), repo, src, nil)
			if err != nil || first.Checkpoint == nil {
				t.Fatalf("first call: %+v, %v", first, err)
			}
			before := listKeys(t, bucket)

			ctx, cancel := context.WithCancel(context.Background())
			seen := 0
			src.onEntry = func(string, uncommitted.Entry) error {
				if seen++; seen == 4000 { // past a row group of 64 KiB
					cancel()
				}
				return nil
			}
			big := newPreparer(t, bucket, uncommitted.WithMaxFileSize(512<<10))
			if _, err := big.Prepare(ctx, repo, src, first.Checkpoint); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: err %v, want context.Canceled", err)
			}
			if seen < 4000 {
				t.Fatalf("cancelled after %d entries only", seen)
			}
			if after := listKeys(t, bucket); !slices.Equal(before, after) {
				t.Fatalf("objects after a cancelled call: %v, before: %v", after, before)
			}

			src.onEntry = nil
			runToEnd(t, context.Background(), p, bucket, src, first.Checkpoint, 100)
			got := readAll(t, context.Background(), bucket, first.RunID)
			if len(got) != 15000 {
				t.Fatalf("%d rows, want 15000", len(got))
			}
			sortRows(got)
			for i := 1; i < len(got); i++ {
				if got[i] == got[i-1] {
					t.Fatalf("row %v written twice", got[i])
				}
			}
		})
	}
}

// TestPrepareErrors: an error of the source, the branch listing or the
// trailer fails the call, wrapped, with no object written; a deleted
// branch is skipped.
func TestPrepareErrors(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name    string
		onEntry func(string, uncommitted.Entry) error
		trailer func(context.Context) iter.Seq2[string, error]
		want    error
		rows    int64
	}{
		{name: "source error mid-branch", want: boom,
			onEntry: func(b string, e uncommitted.Entry) error {
				if b == "branch1" && e.Key == "k0000500" {
					return fmt.Errorf("kv: %w", boom)
				}
				return nil
			}},
		{name: "branch deleted mid-branch is skipped", rows: 2500,
			onEntry: func(b string, e uncommitted.Entry) error {
				if b == "branch1" && e.Key == "k0000500" {
					return fmt.Errorf("kv: %w", uncommitted.ErrBranchNotFound)
				}
				return nil
			}},
		{name: "trailer error", want: boom,
			trailer: func(context.Context) iter.Seq2[string, error] {
				return func(yield func(string, error) bool) {
					if yield("data/t/1", nil) {
						yield("", boom)
					}
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			src := bigSource(3, 1000)
			src.onEntry = c.onEntry
			var opts []uncommitted.Option
			if c.trailer != nil {
				opts = append(opts, uncommitted.WithTrailer(c.trailer))
			}
			res, err := newPreparer(t, bucket, opts...).Prepare(context.Background(), repo, src, nil)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
				if keys := listKeys(t, bucket); len(keys) != 0 {
					t.Fatalf("a failed call left %v", keys)
				}
				return
			}
			if err != nil || res.Rows != c.rows || res.Checkpoint != nil {
				t.Fatalf("got %+v, %v; want %d rows", res, err, c.rows)
			}
		})
	}
}

type orderSource struct {
	*memSource
	branches iter.Seq2[string, error]
}

func (s *orderSource) Branches(context.Context, string) iter.Seq2[string, error] {
	return s.branches
}

func TestPrepareOutOfOrderSource(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	p := newPreparer(t, bucket)

	src := &orderSource{memSource: bigSource(2, 3)}
	src.branches = func(yield func(string, error) bool) { _ = yield("branch1", nil) && yield("branch0", nil) }
	if _, err := p.Prepare(context.Background(), repo, src, nil); !errors.Is(err, uncommitted.ErrOutOfOrder) {
		t.Fatalf("branches out of order: %v", err)
	}

	keys := newMemSource()
	keys.entries["main"] = []uncommitted.Entry{{Key: "b", PhysicalAddress: "data/1"}, {Key: "a", PhysicalAddress: "data/2"}}
	if _, err := p.Prepare(context.Background(), repo, keys, nil); !errors.Is(err, uncommitted.ErrOutOfOrder) {
		t.Fatalf("keys out of order: %v", err)
	}
	if k := listKeys(t, bucket); len(k) != 0 {
		t.Fatalf("failed calls left %v", k)
	}
}

// TestPrepareInvalidUTF8Keys: JSON cannot carry invalid UTF-8, so marks
// are chosen among valid names between the last entry scanned and the next
// one; every row is still written exactly once, and every call progresses.
func TestPrepareInvalidUTF8Keys(t *testing.T) {
	for _, budget := range []int64{1, 300} {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		src := newMemSource()
		var want []string
		for _, branch := range []string{"a", "b\x80", "b\x80\x01", "b\xffy", "c"} {
			var es []uncommitted.Entry
			for _, k := range []string{"k", "k\x01", "k\x80", "k\x80\x00", "k\x80\x01", "k\x81z", "k\xc3", "k\xff", "l"} {
				addr := fmt.Sprintf("data/%x/%x", branch, k)
				es = append(es, uncommitted.Entry{Key: k, PhysicalAddress: addr})
				want = append(want, addr)
			}
			src.add(branch, es...)
		}
		p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(budget))
		runID, files := runToEnd(t, context.Background(), p, bucket, src, nil, len(want))
		var got []string
		for _, r := range readAll(t, context.Background(), bucket, runID) {
			got = append(got, r.PhysicalAddress)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("budget %d: got %q\nwant %q", budget, got, want)
		}
		// Branches a and c stop before k\x01, k\x80 and l (no valid name
		// lies between k\x80 and k\xff) and at their end; the three invalid
		// branches cannot hold a mark, so they share one file.
		if budget == 1 && files != 9 {
			t.Fatalf("%d files for budget 1, want 9: calls did not stop where they could", files)
		}
	}
}

// TestPrepareNothingToExport: no rows, no data file, but the run's
// location and its manifest: the run reads back as complete and empty.
func TestPrepareNothingToExport(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := newMemSource()
	src.add("main", uncommitted.Entry{Key: "a", Tombstone: true}, uncommitted.Entry{Key: "b", PhysicalAddress: "gs://x/y", AddressType: uncommitted.Full})
	res, err := newPreparer(t, bucket).Prepare(ctx, repo, src, nil)
	if err != nil || res.Location != uncommitted.Location(namespace, "_lakefs", res.RunID) || res.Filename != "" || res.Checkpoint != nil || res.Rows != 0 || res.RunID == "" {
		t.Fatalf("got %+v, %v", res, err)
	}
	manifest := "_lakefs/retention/gc/uncommitted/" + res.RunID + "/uncommitted/" + uncommitted.ManifestName
	if k := listKeys(t, bucket); !slices.Equal(k, []string{manifest}) {
		t.Fatalf("objects %v, want the manifest only", k)
	}
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", res.RunID) {
		t.Fatalf("an empty run yields %q, %v", a, err)
	}
}

func TestPrepareRunIDs(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(1, 3)
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	older, err := newPreparer(t, bucket, uncommitted.WithClock(clock)).Prepare(context.Background(), repo, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := newPreparer(t, bucket, uncommitted.WithClock(func() time.Time { return clock().Add(time.Second) })).Prepare(context.Background(), repo, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(newer.RunID) != 20 || newer.RunID >= older.RunID {
		t.Fatalf("run IDs %q (newer) and %q (older): the newer run must sort first", newer.RunID, older.RunID)
	}
	if _, err := newPreparer(t, bucket, uncommitted.WithRunID(func() string { return "a/b" })).Prepare(context.Background(), repo, src, nil); !errors.Is(err, uncommitted.ErrInvalidToken) {
		t.Fatalf("run ID with '/': %v", err)
	}
	if _, err := newPreparer(t, bucket).Prepare(context.Background(), repo, src, &uncommitted.Checkpoint{BranchID: "x"}); !errors.Is(err, uncommitted.ErrInvalidToken) {
		t.Fatalf("mark without run ID: %v", err)
	}
}

func TestLocation(t *testing.T) {
	for _, c := range [][4]string{
		{"s3://b/repo", "_lakefs", "r1", "s3://b/repo/_lakefs/retention/gc/uncommitted/r1/uncommitted/"},
		{"s3://b/repo/", "/_lakefs/", "r1", "s3://b/repo/_lakefs/retention/gc/uncommitted/r1/uncommitted/"},
		{"local://x//", "meta/gc", "r2", "local://x/meta/gc/retention/gc/uncommitted/r2/uncommitted/"},
	} {
		if got := uncommitted.Location(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("Location(%q, %q, %q) = %q, want %q", c[0], c[1], c[2], got, c[3])
		}
	}
}

// TestParquetLayout checks what readers depend on: the two columns and
// their types, the codec (GZIP by default, as lakeFS's; ZSTD with Zstd),
// data page v1 and PLAIN values, several row groups.
func TestParquetLayout(t *testing.T) {
	for _, c := range []struct {
		name  string
		codec compress.Codec // nil: the default
		want  format.CompressionCodec
	}{{"default", nil, format.Gzip}, {"zstd", uncommitted.Zstd(), format.Zstd}} {
		t.Run(c.name, func(t *testing.T) { testParquetLayout(t, c.codec, c.want) })
	}
}

func testParquetLayout(t *testing.T, codec compress.Codec, wantCodec format.CompressionCodec) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	res, err := newPreparer(t, bucket, uncommitted.WithMaxFileSize(256<<10), uncommitted.WithCompression(codec)).Prepare(context.Background(), repo, bigSource(1, 20000), nil)
	if err != nil {
		t.Fatal(err)
	}
	key := "_lakefs/retention/gc/uncommitted/" + res.RunID + "/uncommitted/" + res.Filename
	data, err := bucket.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	if md.NumRows != res.Rows || len(md.RowGroups) < 2 {
		t.Fatalf("%d rows in %d row groups; want %d rows in several", md.NumRows, len(md.RowGroups), res.Rows)
	}
	wantSchema := map[string]struct {
		typ       format.Type
		converted deprecated.ConvertedType
	}{"physical_address": {format.ByteArray, deprecated.UTF8}, "creation_date": {format.Int64, -1}}
	for _, el := range md.Schema[1:] {
		want, ok := wantSchema[el.Name]
		if typ, set := el.Type.Get(); !ok || !set || typ != want.typ {
			t.Fatalf("schema element %+v", el)
		}
		if ct, set := el.ConvertedType.Get(); want.converted >= 0 && (!set || ct != want.converted) {
			t.Fatalf("column %s converted type %v, want %v", el.Name, ct, want.converted)
		}
		if rep, _ := el.RepetitionType.Get(); rep != format.Required {
			t.Fatalf("column %s is %v, want required", el.Name, rep)
		}
	}
	for _, rg := range md.RowGroups {
		for _, col := range rg.Columns {
			if col.MetaData.Codec != wantCodec {
				t.Fatalf("codec %v, want %v", col.MetaData.Codec, wantCodec)
			}
			for _, e := range col.MetaData.Encoding {
				if e != format.Plain && e != format.RLE { // RLE: the levels
					t.Fatalf("column %v encoding %v", col.MetaData.PathInSchema, e)
				}
			}
			if len(col.MetaData.EncodingStats) == 0 {
				t.Fatal("no page encoding stats")
			}
			for _, s := range col.MetaData.EncodingStats {
				if s.PageType != format.DataPage {
					t.Fatalf("page type %v, want DATA_PAGE (v1)", s.PageType)
				}
			}
		}
	}
}

// TestPrepareTimeBudget: with a clock that moves 1 s a read and a 5 s
// budget, a call stops at its fifth read of the clock, which it reads every
// 16 entries: no call writes more than 5*16 rows.
func TestPrepareTimeBudget(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(3, 400)
	clock := &fakeClock{t: time.Unix(1e9, 0), step: time.Second}
	p := newPreparer(t, bucket, uncommitted.WithClock(clock.now), uncommitted.WithPrepareDuration(5*time.Second))
	var mark *uncommitted.Checkpoint
	calls := 0
	for {
		calls++
		res, err := p.Prepare(context.Background(), repo, src, mark)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows > 5*16 || res.Rows == 0 {
			t.Fatalf("call %d wrote %d rows in a 5 s budget at 1 s a clock read", calls, res.Rows)
		}
		if mark = res.Checkpoint; mark == nil {
			break
		}
	}
	if calls < 1200/(5*16) {
		t.Fatalf("%d calls for 1200 rows", calls)
	}
}

// TestTrailerAfterBranches: the trailer is read once, in the call that
// completes the run, after the last branch was scanned.
func TestTrailerAfterBranches(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(3, 100)
	scanned := map[string]bool{}
	src.onEntry = func(b string, e uncommitted.Entry) error {
		if e.Key == "k0000099" {
			scanned[b] = true
		}
		return nil
	}
	reads := 0
	trailer := func(context.Context) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			reads++
			if len(scanned) != 3 {
				t.Errorf("trailer read after %d of 3 branches", len(scanned))
			}
			for i := range 5000 { // far beyond the budget: never split
				if !yield(fmt.Sprintf("data/copies/%d", i), nil) {
					t.Error("trailer split")
					return
				}
			}
		}
	}
	p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(1<<10), uncommitted.WithTrailer(trailer))
	runID, _ := runToEnd(t, context.Background(), p, bucket, src, nil, 1000)
	if reads != 1 {
		t.Fatalf("trailer read %d times", reads)
	}
	if n := len(readAll(t, context.Background(), bucket, runID)); n != 300+5000 {
		t.Fatalf("%d rows, want %d", n, 300+5000)
	}
}

func TestPrepareLogs(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(2, 3)
	src.gone["branch0"] = true
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	res, err := newPreparer(t, bucket, uncommitted.WithLogger(logger)).Prepare(context.Background(), repo, src, nil)
	if err != nil || res.Rows != 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, want := range []string{"prepare uncommitted: start", "branch deleted, skipped", "branch=branch0", "prepare uncommitted: done", "rows=3"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestPrepareMarkAtDeletedBranch: when the branch a mark points into was
// deleted between two calls (no longer listed, or listed but reported
// deleted), the run continues with the next branch from its first key.
func TestPrepareMarkAtDeletedBranch(t *testing.T) {
	for _, how := range []string{"unlisted", "not found"} {
		t.Run(how, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			src := bigSource(3, 10)
			p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(1))
			var mark *uncommitted.Checkpoint
			for range 3 { // into branch0, then stop before its key k0000003
				res, err := p.Prepare(context.Background(), repo, src, mark)
				if err != nil {
					t.Fatal(err)
				}
				mark = res.Checkpoint
			}
			if mark == nil || mark.BranchID != "branch0" || mark.Path == "" {
				t.Fatalf("mark %+v, want one inside branch0", mark)
			}
			if how == "unlisted" {
				delete(src.entries, "branch0")
			} else {
				src.gone["branch0"] = true
			}
			runToEnd(t, context.Background(), p, bucket, src, mark, 100)
			got := map[string]int{}
			for _, r := range readAll(t, context.Background(), bucket, mark.RunID) {
				got[r.PhysicalAddress]++
			}
			for _, b := range []string{"branch1", "branch2"} {
				for _, e := range src.entries[b] {
					if got[e.PhysicalAddress] != 1 {
						t.Errorf("%s %s: %d rows", b, e.Key, got[e.PhysicalAddress])
					}
				}
			}
		})
	}
}

// TestPrepareNeedsNamespace: without a storage namespace no full address
// can be placed, and skipping them all would let a GC delete them: the call
// fails instead.
func TestPrepareNeedsNamespace(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := newMemSource()
	src.add("main", uncommitted.Entry{Key: "a", PhysicalAddress: namespace + "/data/a", AddressType: uncommitted.Full})
	for _, ns := range []string{"", "/", "//"} {
		res, err := newPreparer(t, bucket).Prepare(context.Background(), uncommitted.Repository{ID: "r", StorageNamespace: ns}, src, nil)
		if err == nil {
			t.Errorf("namespace %q: %+v, want an error", ns, res)
		}
	}
	if k := listKeys(t, bucket); len(k) != 0 {
		t.Fatalf("objects %v", k)
	}
}

// quietSource stops iterating, without an error, once its ctx is done, as
// many iterators do.
type quietSource struct{ *memSource }

func (s quietSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for b, err := range s.memSource.Branches(ctx, from) {
			if ctx.Err() != nil || !yield(b, err) {
				return
			}
		}
	}
}

func (s quietSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for e, err := range s.memSource.Uncommitted(ctx, branch, from) {
			if ctx.Err() != nil || !yield(e, err) {
				return
			}
		}
	}
}

// TestPrepareQuietCancellation: a Source that stops quietly when ctx is
// cancelled must not make the run look complete, whether the call wrote
// rows or only scanned tombstones.
func TestPrepareQuietCancellation(t *testing.T) {
	for _, tombstones := range []bool{true, false} {
		t.Run(fmt.Sprint("tombstones=", tombstones), func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			src := bigSource(2, 300)
			if tombstones {
				for i := range src.entries["branch0"] {
					src.entries["branch0"][i].Tombstone = true
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src.onEntry = func(b string, e uncommitted.Entry) error {
				if b == "branch0" && e.Key == "k0000100" {
					cancel()
				}
				return nil
			}
			res, err := newPreparer(t, bucket).Prepare(ctx, repo, quietSource{src}, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %+v, %v; want context.Canceled", res, err)
			}
			if k := listKeys(t, bucket); len(k) != 0 {
				t.Fatalf("a cancelled call left %v", k)
			}
		})
	}
}

// TestPrepareUnknownAddressType: an entry whose type is neither Relative
// nor Full fails the call; treating it as Full would drop a relative
// address from the export.
func TestPrepareUnknownAddressType(t *testing.T) {
	for _, typ := range []uncommitted.AddressType{2, -1, 1 << 20} {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		src := newMemSource()
		src.add("main", uncommitted.Entry{Key: "a", PhysicalAddress: "data/a"}, uncommitted.Entry{Key: "b", PhysicalAddress: "data/b", AddressType: typ})
		res, err := newPreparer(t, bucket).Prepare(context.Background(), repo, src, nil)
		if !errors.Is(err, uncommitted.ErrUnknownAddressType) {
			t.Errorf("type %v: got %+v, %v; want ErrUnknownAddressType", typ, res, err)
		}
		if k := listKeys(t, bucket); len(k) != 0 {
			t.Errorf("type %v: a failed call left %v", typ, k)
		}
	}
}

// TestPrepareTimeBudgetWithoutRows: the time budget holds when the call
// writes nothing: a staging area of tombstones, of addresses outside the
// namespace, or of empty branches is scanned over several calls, each
// returning a mark, the run's location and no file.
func TestPrepareTimeBudgetWithoutRows(t *testing.T) {
	const n = 2000
	cases := map[string]func(src *memSource){
		"tombstones": func(src *memSource) {
			for i := range n {
				src.add("main", uncommitted.Entry{Key: fmt.Sprintf("k%05d", i), Tombstone: true})
			}
		},
		"outside the namespace": func(src *memSource) {
			for i := range n {
				src.add("main", uncommitted.Entry{Key: fmt.Sprintf("k%05d", i), PhysicalAddress: fmt.Sprintf("gs://other/%d", i), AddressType: uncommitted.Full})
			}
		},
		"empty branches": func(src *memSource) {
			for i := range n / 10 {
				src.entries[fmt.Sprintf("b%05d", i)] = nil
			}
		},
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			src := newMemSource()
			fill(src)
			clock := &fakeClock{t: time.Unix(1e9, 0), step: time.Second}
			p := newPreparer(t, bucket, uncommitted.WithClock(clock.now), uncommitted.WithPrepareDuration(5*time.Second))
			var mark *uncommitted.Checkpoint
			calls := 0
			for {
				calls++
				start := clock.now()
				res, err := p.Prepare(ctx, repo, src, mark)
				if err != nil {
					t.Fatal(err)
				}
				// 5 s of budget, a clock read every 16 entries or every
				// branch, and this test's two reads.
				if elapsed := clock.now().Sub(start); elapsed > 8*time.Second {
					t.Fatalf("call %d took %v of a 5 s budget", calls, elapsed)
				}
				if res.Rows != 0 || res.Filename != "" || res.Location != uncommitted.Location(namespace, "_lakefs", res.RunID) {
					t.Fatalf("call %d: %+v", calls, res)
				}
				if res.Checkpoint != nil && !markAfter(res.Checkpoint, mark) {
					t.Fatalf("call %d: mark %+v after %+v", calls, res.Checkpoint, mark)
				}
				if mark = res.Checkpoint; mark == nil {
					break
				}
			}
			if calls < 10 {
				t.Fatalf("%d calls: the budget did not stop them", calls)
			}
			if k := listKeys(t, bucket); len(k) != 1 || !strings.HasSuffix(k[0], "/"+uncommitted.ManifestName) {
				t.Fatalf("objects %v, want the manifest only", k)
			}
		})
	}
}

// TestPrepareRetryAfterAmbiguousClose: an upload that committed but
// reported an error is retried from the same mark; the retry replaces the
// file instead of adding its rows a second time, also for the call that
// completes the run (its manifest too).
func TestPrepareRetryAfterAmbiguousClose(t *testing.T) {
	ctx := context.Background()
	base := memblob.OpenBucket(nil)
	defer base.Close()
	failed := map[string]bool{}
	writes := 0
	bucket := newFlakyBucket(base, func(key string) bool {
		// the first, the third and the last file, and the manifest
		writes++
		fail := !failed[key] && (writes == 1 || writes == 4 || strings.HasSuffix(key, uncommitted.ManifestName))
		failed[key] = failed[key] || fail
		return fail
	})
	src := bigSource(2, 300)
	p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(2<<10))
	var mark *uncommitted.Checkpoint
	var runID string
	ambiguous := 0
	for calls := 0; calls < 1000; calls++ {
		res, err := p.Prepare(ctx, repo, src, mark)
		if errors.Is(err, errAmbiguous) {
			ambiguous++
			continue // retry from the same mark
		}
		if err != nil {
			t.Fatal(err)
		}
		if runID, mark = res.RunID, res.Checkpoint; mark == nil {
			break
		}
	}
	if ambiguous < 3 {
		t.Fatalf("%d ambiguous failures, want 3", ambiguous)
	}
	got, err := drain(uncommitted.Addresses(ctx, base, "_lakefs", runID))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if len(got) != 600 || len(slices.Compact(got)) != 600 {
		t.Fatalf("%d addresses, want the 600 staged ones once each", len(got))
	}

	t.Run("retry finds nothing to write", func(t *testing.T) {
		base := memblob.OpenBucket(nil)
		defer base.Close()
		src := bigSource(2, 100)
		runID := uncommitted.WithRunID(func() string { return "r1" })
		budget := uncommitted.WithMaxFileSize(1 << 10)
		p := newPreparer(t, base, runID, budget)
		first, err := p.Prepare(ctx, repo, src, nil)
		if err != nil || first.Checkpoint == nil {
			t.Fatalf("first page: %+v, %v", first, err)
		}
		flaky := newPreparer(t, newFlakyBucket(base, func(string) bool { return true }), runID, budget)
		if _, err := flaky.Prepare(ctx, repo, src, first.Checkpoint); !errors.Is(err, errAmbiguous) {
			t.Fatalf("second page: %v", err)
		}
		// Before the retry, every entry from the mark on was committed
		// and unstaged.
		src.entries["branch1"] = nil
		src.entries["branch0"] = src.entries["branch0"][:first.Rows]
		res, err := p.Prepare(ctx, repo, src, first.Checkpoint)
		if err != nil || res.Rows != 0 || res.Checkpoint != nil {
			t.Fatalf("retry: %+v, %v", res, err)
		}
		got, err := drain(uncommitted.Addresses(ctx, base, "_lakefs", res.RunID))
		if err != nil || int64(len(got)) != first.Rows {
			t.Fatalf("%d addresses, %v; want the first page's %d: the failed attempt's file is stale", len(got), err, first.Rows)
		}
	})
}

// TestPrepareInvalidOptions: a negative size or duration is an error of
// NewPreparer, which writes nothing; zero is the default.
func TestPrepareInvalidOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  uncommitted.Option
		want string
	}{
		{uncommitted.WithMaxFileSize(-1), "uncommitted: invalid input: negative max file size -1"},
		{uncommitted.WithPrepareDuration(-time.Second), "uncommitted: invalid input: negative prepare duration -1s"},
		{uncommitted.WithCompression(&parquet.Lz4Raw), "uncommitted: invalid input: compression LZ4_RAW: parquet-go reads its pages back wrong"},
	} {
		bucket := memblob.OpenBucket(nil)
		p, err := uncommitted.NewPreparer(bucket, tc.opt)
		if !errors.Is(err, uncommitted.ErrInvalidInput) || err.Error() != tc.want || p != nil {
			t.Errorf("NewPreparer = %v; want %q", err, tc.want)
		}
		if keys := listKeys(t, bucket); len(keys) != 0 {
			t.Errorf("%s: Prepare wrote %v", tc.want, keys)
		}
		bucket.Close()
	}
}

// newPreparer is uncommitted.NewPreparer for a bucket and options that are
// valid.
func newPreparer(tb testing.TB, bucket *blob.Bucket, opts ...uncommitted.Option) *uncommitted.Preparer {
	tb.Helper()
	p, err := uncommitted.NewPreparer(bucket, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
