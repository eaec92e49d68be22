package s3sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

var old = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testSlices is a small namespace: slices of the data folder, loose
// objects beside them, and a folder of another shape.
func testSlices() []Slice {
	return []Slice{
		{Prefix: "_lakefs/x/", Count: 3, Name: func(i int) string { return fmt.Sprintf("r%d", i) }, ModTime: old, Size: 1},
		{Prefix: "data/", Count: 4, Name: func(i int) string { return fmt.Sprintf("loose%02d", i) }, ModTime: old, Size: 2},
		{Prefix: "data/s1/", Count: 37, ModTime: old, Size: 5},
		{Prefix: "data/s2/", Count: 0},
		{Prefix: "data/s3/", Count: 5, ModTime: old.Add(time.Hour), Size: 0},
		{Prefix: "data/s4/", Count: 130, Name: func(i int) string { return fmt.Sprintf("d%d/o%03d", i/40, i) }, ModTime: old, Size: 3},
		{Prefix: "dummy", Count: 1, Name: func(int) string { return "" }, ModTime: old, Size: 1},
	}
}

type entry struct {
	Key   string
	IsDir bool
	Size  int64
	MD5   string
}

func listAll(t *testing.T, b *blob.Bucket, prefix, delim string, pageSize int) []entry {
	t.Helper()
	ctx := context.Background()
	var out []entry
	tok := blob.FirstPageToken
	for {
		objs, next, err := b.ListPage(ctx, tok, pageSize, &blob.ListOptions{Prefix: prefix, Delimiter: delim})
		if err != nil {
			t.Fatalf("ListPage(%q, %q, %d): %v", prefix, delim, pageSize, err)
		}
		if len(objs) > min(pageSize, MaxKeys) {
			t.Fatalf("ListPage(%q, %q, %d): %d entries", prefix, delim, pageSize, len(objs))
		}
		for _, o := range objs {
			out = append(out, entry{o.Key, o.IsDir, o.Size, fmt.Sprintf("%x", o.MD5)})
		}
		if len(next) == 0 {
			return out
		}
		tok = next
	}
}

func newTestStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := New(testSlices(), append([]Option{WithLatency(NoLatency), WithRates(math.Inf(1), math.Inf(1))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLikeMemblob runs the same random writes, overwrites and deletes on a
// store and on memblob holding the same objects, and compares listings
// (with and without a delimiter, at several page sizes), attributes,
// contents and error codes after each round. Over HTTP, through s3blob and the SDK, the same holds.
func TestLikeMemblob(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(fmt.Sprintf("http=%v", overHTTP), func(t *testing.T) { testLikeMemblob(t, overHTTP, false) })
	}
	t.Run("disk", func(t *testing.T) { testLikeMemblob(t, false, true) })
}

// simBucket opens store through its driver, or through s3blob over HTTP.
func simBucket(t *testing.T, store *Store, overHTTP bool) *blob.Bucket {
	t.Helper()
	if !overHTTP {
		return store.Bucket()
	}
	srv, err := store.Serve("sim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b, err := srv.OpenBucket(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testLikeMemblob compares a store with memblob, the store's written
// objects on disk (WithDiskOverlay) if asked.
func testLikeMemblob(t *testing.T, overHTTP, disk bool) {
	ctx := context.Background()
	var opts []Option
	dir := t.TempDir()
	if disk {
		opts = append(opts, WithDiskOverlay(dir))
	}
	store := newTestStore(t, opts...)
	sim := simBucket(t, store, overHTTP)
	defer sim.Close()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	var keys []string
	for _, d := range testSlices() {
		if d.Name == nil {
			d.Name = XIDNames(d.Prefix, d.ModTime)
		}
		for i := range d.Count {
			k := d.Prefix + d.Name(i)
			keys = append(keys, k)
			if err := mem.WriteAll(ctx, k, make([]byte, d.Size), &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"data/", "data/s1/", "data/s4/d1/", "data/s5/", "_lakefs/", "a", "dummy", "z/"}
	prefixes := []string{"", "data", "data/", "data/s1/", "data/s4/", "data/s4/d1/", "_lakefs/", "dummy", "nothing/"}
	pageSizes := []int{1, 7, 1000}
	if overHTTP {
		pageSizes = []int{7, 1000} // a request over loopback costs a millisecond or so
	}
	for round := range 4 {
		for range 60 {
			var key string
			if rng.IntN(2) == 0 {
				key = keys[rng.IntN(len(keys))]
			} else {
				key = parts[rng.IntN(len(parts))] + fmt.Sprint(rng.IntN(30))
				keys = append(keys, key)
			}
			switch rng.IntN(3) {
			case 0, 1:
				data := []byte(fmt.Sprint(key, round))
				opts := &blob.WriterOptions{ContentType: "text/plain", Metadata: map[string]string{"r": fmt.Sprint(round)}}
				for _, b := range []*blob.Bucket{sim, mem} {
					if err := b.WriteAll(ctx, key, data, opts); err != nil {
						t.Fatal(err)
					}
				}
			case 2:
				e1, e2 := sim.Delete(ctx, key), mem.Delete(ctx, key)
				if gcerrors.Code(e1) != gcerrors.Code(e2) {
					t.Fatalf("Delete(%q) = %v, memblob %v", key, e1, e2)
				}
			}
		}
		for _, prefix := range prefixes {
			for _, delim := range []string{"", "/"} {
				for _, ps := range pageSizes {
					got, want := listAll(t, sim, prefix, delim, ps), listAll(t, mem, prefix, delim, ps)
					if !slices.Equal(got, want) {
						t.Fatalf("round %d: List(%q, %q, %d):\n got %v\nwant %v", round, prefix, delim, ps, got, want)
					}
				}
			}
		}
		for _, key := range keys {
			a1, e1 := sim.Attributes(ctx, key)
			a2, e2 := mem.Attributes(ctx, key)
			if gcerrors.Code(e1) != gcerrors.Code(e2) {
				t.Fatalf("Attributes(%q) = %v, memblob %v", key, e1, e2)
			}
			if e1 == nil && (a1.Size != a2.Size || !bytes.Equal(a1.MD5, a2.MD5) || a1.ContentType != a2.ContentType || fmt.Sprint(a1.Metadata) != fmt.Sprint(a2.Metadata)) {
				t.Fatalf("Attributes(%q) = %+v, memblob %+v", key, a1, a2)
			}
			d1, e1 := sim.ReadAll(ctx, key)
			d2, e2 := mem.ReadAll(ctx, key)
			if gcerrors.Code(e1) != gcerrors.Code(e2) || !bytes.Equal(d1, d2) {
				t.Fatalf("ReadAll(%q) = %q, %v; memblob %q, %v", key, d1, e1, d2, e2)
			}
			if e1 == nil && !overHTTP { // S3 answers a range past the end with an error
				r1, r2 := readRange(ctx, sim, key, 2, 3), readRange(ctx, mem, key, 2, 3)
				if r1 != r2 {
					t.Fatalf("range of %q = %q, memblob %q", key, r1, r2)
				}
			}
		}
	}
	if disk {
		files, err := os.ReadDir(dir)
		if n := store.OverlayBytes(); err != nil || len(files) == 0 || n != 0 {
			t.Fatalf("with the overlay on disk: %d files (%v) in its folder, %d bytes in memory", len(files), err, n)
		}
	}
	if _, err := sim.ReadAll(ctx, "data/s1/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("ReadAll(missing) = %v, want NotFound", err)
	}
	if err := sim.Delete(ctx, "data/s1/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("Delete(missing) = %v, want NotFound", err)
	}
}

// readRange reads n bytes of key from offset, or the error's text.
func readRange(ctx context.Context, b *blob.Bucket, key string, offset, n int64) string {
	r, err := b.NewRangeReader(ctx, key, offset, n, nil)
	if err != nil {
		return "error " + gcerrors.Code(err).String()
	}
	defer r.Close()
	d, err := io.ReadAll(r)
	if err != nil {
		return "error " + err.Error()
	}
	return string(d)
}

// TestSynthesisedAttributes: a synthesised object has its slice's time and
// size; a written one the clock's time; a range read reads the range.
func TestSynthesisedAttributes(t *testing.T) {
	ctx := context.Background()
	now := old.Add(48 * time.Hour)
	store := newTestStore(t, WithClock(func() time.Time { return now }))
	b := store.Bucket()
	defer b.Close()
	key := "data/s3/" + XIDNames("data/s3/", old.Add(time.Hour))(2)
	a, err := b.Attributes(ctx, key)
	if err != nil || !a.ModTime.Equal(old.Add(time.Hour)) || a.Size != 0 {
		t.Fatalf("Attributes(%q) = %+v, %v", key, a, err)
	}
	if err := b.WriteAll(ctx, "data/new", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	it := b.List(&blob.ListOptions{Prefix: "data/new"})
	if o, err := it.Next(ctx); err != nil || !o.ModTime.Equal(now) {
		t.Fatalf("List = %+v, %v; want ModTime %v", o, err, now)
	}
	r, err := b.NewRangeReader(ctx, "data/new", 3, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "3456" {
		t.Fatalf("range read = %q", got)
	}
	if err := b.WriteAll(ctx, "data/new", nil, &blob.WriterOptions{IfNotExist: true}); gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Fatalf("IfNotExist over an object = %v", err)
	}
	if err := b.WriteAll(ctx, key, nil, &blob.WriterOptions{IfNotExist: true}); gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Fatalf("IfNotExist over a synthesised object = %v", err)
	}
	// A cancelled write leaves nothing.
	cctx, cancel := context.WithCancel(ctx)
	w, err := b.NewWriter(cctx, "data/cancelled", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	cancel()
	if err := w.Close(); err == nil || store.Exists("data/cancelled") {
		t.Fatalf("cancelled write: Close = %v, exists %v", err, store.Exists("data/cancelled"))
	}
}

// TestPages: a listing of n keys takes ceil(n/1000) pages whatever page
// size the caller asks above 1000, and a generated namespace is listed in
// order without holding it.
func TestPages(t *testing.T) {
	ctx := context.Background()
	const n = 25_500
	store, err := New([]Slice{{Prefix: "data/a/", Count: n, ModTime: old}, {Prefix: "data/b/", Count: n, ModTime: old}}, WithLatency(NoLatency))
	if err != nil {
		t.Fatal(err)
	}
	b := store.Bucket()
	defer b.Close()
	for _, ps := range []int{1000, 5000} {
		before := store.Stats().ListPages
		tok := blob.FirstPageToken
		prev, count := "", 0
		for len(tok) > 0 || count == 0 {
			objs, next, err := b.ListPage(ctx, tok, ps, &blob.ListOptions{Prefix: "data/a/"})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.Key <= prev {
					t.Fatalf("%q after %q", o.Key, prev)
				}
				prev = o.Key
				count++
			}
			tok = next
		}
		if pages := store.Stats().ListPages - before; count != n || pages != (n+999)/1000 {
			t.Fatalf("page size %d: %d keys in %d pages, want %d in %d", ps, count, pages, n, (n+999)/1000)
		}
	}
	// The iterator's default page size, with a delimiter: one page of
	// folders, then the keys of both slices.
	before := store.Stats().ListPages
	if got := listAll(t, b, "data/", "/", 1000); len(got) != 2 || store.Stats().ListPages-before != 1 {
		t.Fatalf("List(data/, /) = %v in %d pages", got, store.Stats().ListPages-before)
	}
	before = store.Stats().ListPages
	it, count := b.List(nil), 0
	for {
		if _, err := it.Next(ctx); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		count++
	}
	if pages := store.Stats().ListPages - before; count != 2*n || pages != (2*n+999)/1000 {
		t.Fatalf("List(nil): %d keys in %d pages", count, pages)
	}
}

// code is the code package sweep reads from a BatchDeleter's error.
func code(err error) gcerrors.ErrorCode {
	var c interface{ ErrorCode() gcerrors.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return gcerrors.Code(err)
}

// TestDeleteBatch: a batch deletes what exists, says NotFound for the rest,
// refuses more than 1000 keys, and Gone reads the deletions back.
func TestDeleteBatch(t *testing.T) {
	ctx := context.Background()
	store := newTestStore(t)
	name := XIDNames("data/s1/", old)
	keys := []string{"data/s1/" + name(3), "data/s1/" + name(30), "data/s1/missing", "_lakefs/x/r1"}
	failed, err := store.DeleteBatch(ctx, keys)
	if err != nil || len(failed) != 1 || code(failed["data/s1/missing"]) != gcerrors.NotFound {
		t.Fatalf("DeleteBatch = %v, %v", failed, err)
	}
	var gone []int
	store.Gone(2, func(i int) { gone = append(gone, i) })
	if !slices.Equal(gone, []int{3, 30}) || store.NumGone() != 3 || store.Exists(keys[0]) || !store.Exists("data/s1/"+name(4)) {
		t.Fatalf("Gone = %v, NumGone = %d", gone, store.NumGone())
	}
	if _, err := store.DeleteBatch(ctx, make([]string, 1001)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("DeleteBatch(1001 keys) = %v", err)
	}
	if st := store.Stats(); st.DeleteBatches != 1 || st.BatchKeys != 4 {
		t.Fatalf("Stats = %+v", st)
	}
	// A batch whose context ended is not sent: none of its keys count.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := store.DeleteBatch(cctx, keys[:2]); !errors.Is(err, context.Canceled) {
		t.Fatalf("DeleteBatch(cancelled) = %v", err)
	}
	if st := store.Stats(); st.DeleteBatches != 1 || st.BatchKeys != 4 {
		t.Fatalf("Stats after a cancelled batch = %+v, want 1 batch of 4 keys", st)
	}
}

// TestThrottle: past the rate of a partition, requests answer SlowDown
// (ResourceExhausted) until the bucket refills; other partitions and the
// other class are not affected.
func TestThrottle(t *testing.T) {
	ctx := context.Background()
	now := old
	store, err := New(testSlices(), WithLatency(NoLatency), WithRates(10, 5), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	b := store.Bucket()
	defer b.Close()
	key := "data/s1/" + XIDNames("data/s1/", old)(0)
	for i := range 10 {
		if _, err := b.Attributes(ctx, key); err != nil {
			t.Fatalf("head %d: %v", i, err)
		}
	}
	if _, err := b.Attributes(ctx, key); gcerrors.Code(err) != gcerrors.ResourceExhausted {
		t.Fatalf("11th head in a second = %v, want ResourceExhausted", err)
	}
	if _, err := b.Attributes(ctx, "data/s3/x"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("head in another partition = %v, want NotFound", err)
	}
	if err := b.WriteAll(ctx, "data/s1/w", nil, nil); err != nil {
		t.Fatalf("write while reads are throttled = %v", err)
	}
	// A batch of 5 keys in one partition takes its 4 tokens left and one more.
	batch := []string{"data/s1/a", "data/s1/b", "data/s1/c", "data/s1/d", "data/s1/e"}
	if _, err := store.DeleteBatch(ctx, batch); code(err) != gcerrors.ResourceExhausted {
		t.Fatalf("batch past the write rate = %v, want ResourceExhausted", err)
	}
	now = now.Add(time.Second)
	if _, err := b.Attributes(ctx, key); err != nil {
		t.Fatalf("head a second later: %v", err)
	}
	if _, err := store.DeleteBatch(ctx, batch); err != nil {
		t.Fatalf("batch a second later: %v", err)
	}
	if st := store.Stats(); st.Throttled != 2 || st.Heads != 13 {
		t.Fatalf("Stats = %+v", st)
	}
}

// TestLatency: each request takes the latency, which its context cuts
// short; concurrent requests overlap.
func TestLatency(t *testing.T) {
	ctx := context.Background()
	store, err := New(testSlices(), WithLatency(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	b := store.Bucket()
	defer b.Close()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Exists(ctx, "dummy")
		}()
	}
	wg.Wait()
	if d := time.Since(start); d < 20*time.Millisecond || d > 500*time.Millisecond {
		t.Fatalf("8 concurrent heads took %v", d)
	}
	store, _ = New(testSlices(), WithLatency(time.Hour))
	b = store.Bucket()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := b.Attributes(cctx, "dummy"); gcerrors.Code(err) != gcerrors.DeadlineExceeded {
		t.Fatalf("head with an hour of latency = %v", err)
	}
}

// TestNewRefuses descriptions that would list out of order.
func TestNewRefuses(t *testing.T) {
	for name, d := range map[string][]Slice{
		"overlap":    {{Prefix: "b/", Count: 3}, {Prefix: "a/", Count: 3}},
		"descending": {{Prefix: "a/", Count: 100, Name: func(i int) string { return fmt.Sprintf("%03d", 100-i) }}},
		"negative":   {{Prefix: "a/", Count: -1}},
	} {
		if _, err := New(d); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: New = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := New(nil, WithLatency(-5)); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative latency: %v", err)
	}
}

// TestThrottleBatchAboveRate: a delete batch of more keys in a partition
// than its write rate passes once the partition's bucket is full, and
// leaves it in debt, so that the rate holds over time; before, it was
// refused for ever.
func TestThrottleBatchAboveRate(t *testing.T) {
	ctx := context.Background()
	now := old
	store, err := New(testSlices(), WithLatency(NoLatency), WithRates(10, 5), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	name := XIDNames("data/s1/", old)
	batch := func(from int) []string {
		var keys []string
		for i := from; i < from+8; i++ {
			keys = append(keys, "data/s1/"+name(i))
		}
		return keys
	}
	if _, err := store.DeleteBatch(ctx, batch(0)); err != nil {
		t.Fatalf("8 keys at a write rate of 5, bucket full: %v", err)
	}
	// 8 keys cost 1.6 s of the rate: refused until the bucket is full again.
	for _, wait := range []time.Duration{0, time.Second} {
		now = old.Add(wait)
		if _, err := store.DeleteBatch(ctx, batch(8)); code(err) != gcerrors.ResourceExhausted {
			t.Fatalf("8 more keys %v later = %v, want ResourceExhausted", wait, err)
		}
	}
	now = old.Add(1600 * time.Millisecond)
	if _, err := store.DeleteBatch(ctx, batch(8)); err != nil {
		t.Fatalf("8 more keys 1.6 s later: %v", err)
	}
	if n := store.NumGone(); n != 16 {
		t.Fatalf("NumGone = %d, want 16", n)
	}
}

// TestLargeWrittenObject: an object written in uneven pieces across many of
// the writer's chunks reads back whole and in ranges (across the chunks'
// ends) as memblob's, with memblob's MD5; so does a copy of it; the
// overlay counts its bytes once, and no longer after it is deleted.
func TestLargeWrittenObject(t *testing.T) {
	ctx := context.Background()
	store := newTestStore(t)
	sim := store.Bucket()
	defer sim.Close()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	before := store.OverlayBytes()
	for _, size := range []int{0, 1, 4<<10 + 1, 3*writeChunk + 12345} {
		data := make([]byte, size)
		rand.NewChaCha8([32]byte{byte(size)}).Read(data)
		key := fmt.Sprintf("big/%d", size)
		for _, b := range []*blob.Bucket{sim, mem} {
			w, err := b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
			if err != nil {
				t.Fatal(err)
			}
			for p := data; len(p) > 0; {
				n := min(len(p), 1+rng.IntN(300<<10))
				if _, err := w.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := sim.Copy(ctx, key+".copy", key, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := store.OverlayBytes()-before, int64(2*size); got != want {
			t.Fatalf("size %d: the overlay grew %d bytes, want %d", size, got, want)
		}
		a1, err1 := sim.Attributes(ctx, key)
		a2, err2 := mem.Attributes(ctx, key)
		if err1 != nil || err2 != nil || a1.Size != a2.Size || !bytes.Equal(a1.MD5, a2.MD5) {
			t.Fatalf("size %d: Attributes %+v (%v), memblob %+v (%v)", size, a1, err1, a2, err2)
		}
		for _, k := range []string{key, key + ".copy"} {
			if got, err := sim.ReadAll(ctx, k); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("ReadAll(%q): %d bytes (%v), want %d", k, len(got), err, size)
			}
			for range 12 {
				off := int64(rng.IntN(size + 1))
				n := int64(rng.IntN(writeChunk + 1))
				if rng.IntN(4) == 0 {
					n = -1
				}
				if r1, r2 := readRange(ctx, sim, k, off, n), readRange(ctx, mem, key, off, n); r1 != r2 {
					t.Fatalf("range %d+%d of %q: %d bytes, memblob %d", off, n, k, len(r1), len(r2))
				}
			}
		}
		for _, k := range []string{key, key + ".copy"} {
			if err := sim.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if got := store.OverlayBytes(); got != before {
			t.Fatalf("size %d: after the deletes the overlay holds %d bytes, want %d", size, got, before)
		}
	}
}
