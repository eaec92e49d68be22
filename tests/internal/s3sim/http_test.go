package s3sim_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/sweep/s3list"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// serve serves store over loopback HTTP for the test and opens it through
// s3blob.
func serve(t *testing.T, store *s3sim.Store) (*s3sim.Server, *blob.Bucket) {
	t.Helper()
	srv, err := store.Serve("sim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b, err := srv.OpenBucket(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return srv, b
}

// entry is a listing's entry, as both buckets give it.
type entry struct {
	Key   string
	IsDir bool
	Size  int64
	Mod   time.Time
	MD5   string
}

func listPages(t *testing.T, b *blob.Bucket, opts *blob.ListOptions, size int) [][]entry {
	t.Helper()
	var pages [][]entry
	tok := blob.FirstPageToken
	for {
		objs, next, err := b.ListPage(context.Background(), tok, size, opts)
		if err != nil {
			t.Fatal(err)
		}
		var page []entry
		for _, o := range objs {
			page = append(page, entry{o.Key, o.IsDir, o.Size, o.ModTime.UTC().Truncate(time.Millisecond), fmt.Sprintf("%x", o.MD5)})
		}
		pages = append(pages, page)
		if len(next) == 0 {
			return pages
		}
		tok = next
	}
}

// TestHTTPListModel lists random stores through s3blob over HTTP and
// through the driver, with prefixes and delimiters that cut through names
// and several page sizes: both must list the same pages.
func TestHTTPListModel(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 30))
		old := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
		desc := []s3sim.Slice{
			{Prefix: "a/", Count: 1 + rng.IntN(50), Name: func(i int) string { return fmt.Sprintf("k %03d&<é>", 2*i) }, ModTime: old, Size: 1},
			{Prefix: "a/s/", Count: 1 + rng.IntN(300), ModTime: old, Size: 2},
			{Prefix: "b/", Count: 1 + rng.IntN(1500), Name: func(i int) string { return fmt.Sprintf("d%02d/o%04d", i/70, i) }, ModTime: old, Size: 3},
		}
		store, err := s3sim.New(desc, s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(math.Inf(1), math.Inf(1)))
		if err != nil {
			t.Fatal(err)
		}
		_, hb := serve(t, store)
		db := store.Bucket()
		for range 20 {
			if err := db.WriteAll(ctx, fmt.Sprintf("a/s/%x", rng.Uint32()), []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, opts := range []*blob.ListOptions{
			{}, {Prefix: "a/"}, {Prefix: "b/", Delimiter: "/"}, {Prefix: "b/d0"}, {Delimiter: "/"}, {Prefix: "a/k 0"}, {Delimiter: "0"},
		} {
			for _, size := range []int{7, 1000} {
				want, got := listPages(t, db, opts, size), listPages(t, hb, opts, size)
				if len(want) != len(got) {
					t.Fatalf("seed %d %+v size %d: %d pages over HTTP, %d through the driver", seed, opts, size, len(got), len(want))
				}
				for i := range want {
					if !slices.Equal(want[i], got[i]) {
						t.Fatalf("seed %d %+v size %d page %d:\n http %v\ndriver %v", seed, opts, size, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestHTTPDecoderAgrees: sweep/s3list's decoder and the SDK read the same
// pages from the server: keys, sizes, times, ETags, prefixes, tokens.
func TestHTTPDecoderAgrees(t *testing.T) {
	ctx := context.Background()
	old := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	store, err := s3sim.New([]s3sim.Slice{
		{Prefix: "a/", Count: 40, Name: func(i int) string { return fmt.Sprintf("k %03d&<é>\"'", i) }, ModTime: old, Size: 11},
		{Prefix: "b/", Count: 2500, Name: func(i int) string { return fmt.Sprintf("d%02d/o%04d", i/100, i) }, ModTime: old, Size: 0},
	}, s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(math.Inf(1), math.Inf(1)))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, store)
	db := store.Bucket()
	for _, c := range []struct{ prefix, delim, startAfter string }{
		{"", "", ""}, {"b/", "/", ""}, {"", "/", ""}, {"b/", "", "b/d07"}, {"a/", "", ""},
	} {
		in := &s3.ListObjectsV2Input{Bucket: aws.String("sim"), MaxKeys: aws.Int32(333)}
		q := url.Values{"list-type": {"2"}, "max-keys": {"333"}}
		if c.prefix != "" {
			in.Prefix, q["prefix"] = aws.String(c.prefix), []string{c.prefix}
		}
		if c.delim != "" {
			in.Delimiter, q["delimiter"] = aws.String(c.delim), []string{c.delim}
		}
		if c.startAfter != "" {
			in.StartAfter, q["start-after"] = aws.String(c.startAfter), []string{c.startAfter}
		}
		// What the driver lists, after start-after.
		var want, got []entry
		for _, p := range listPages(t, db, &blob.ListOptions{Prefix: c.prefix, Delimiter: c.delim}, 1000) {
			for _, e := range p {
				if e.Key > c.startAfter {
					want = append(want, e)
				}
			}
		}
		for pages := 0; ; pages++ {
			out, err := srv.Client().ListObjectsV2(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(srv.URL() + "/sim?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			page, err := s3list.DecodeListPage(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Contents) != len(out.Contents) || len(page.CommonPrefixes) != len(out.CommonPrefixes) ||
				page.IsTruncated != aws.ToBool(out.IsTruncated) || page.NextContinuationToken != aws.ToString(out.NextContinuationToken) ||
				page.KeyCount != int64(aws.ToInt32(out.KeyCount)) {
				t.Fatalf("%+v page %d: decoder %d keys %d prefixes truncated %v next %q count %d; SDK %d %d %v %q %d", c, pages,
					len(page.Contents), len(page.CommonPrefixes), page.IsTruncated, page.NextContinuationToken, page.KeyCount,
					len(out.Contents), len(out.CommonPrefixes), aws.ToBool(out.IsTruncated), aws.ToString(out.NextContinuationToken), aws.ToInt32(out.KeyCount))
			}
			for i, o := range out.Contents {
				d := page.Contents[i]
				if d.Key != aws.ToString(o.Key) || d.Size != aws.ToInt64(o.Size) || !d.LastModified.Equal(aws.ToTime(o.LastModified)) || d.ETag != aws.ToString(o.ETag) {
					t.Fatalf("%+v page %d object %d: decoder %+v, SDK %+v", c, pages, i, d, o)
				}
				got = append(got, entry{d.Key, false, d.Size, d.LastModified.UTC(), strings.Trim(d.ETag, `"`)})
			}
			for i, p := range out.CommonPrefixes {
				if page.CommonPrefixes[i] != aws.ToString(p.Prefix) {
					t.Fatalf("prefix %d: decoder %q, SDK %q", i, page.CommonPrefixes[i], aws.ToString(p.Prefix))
				}
				got = append(got, entry{Key: page.CommonPrefixes[i], IsDir: true, Mod: time.Time{}.UTC().Truncate(time.Millisecond), MD5: ""})
			}
			if !aws.ToBool(out.IsTruncated) {
				break
			}
			in.ContinuationToken, q["continuation-token"] = out.NextContinuationToken, []string{page.NextContinuationToken}
		}
		slices.SortFunc(got, func(a, b entry) int { return strings.Compare(a.Key, b.Key) })
		if !slices.Equal(got, want) {
			t.Errorf("%+v: the pages hold\n%v\nthe driver lists\n%v", c, got, want)
		}
	}
}

// TestHTTPObjects writes, reads, copies and deletes through s3blob over
// HTTP: a small object, one of several multipart parts, byte ranges,
// metadata, If-None-Match, missing keys; and batches through
// DeleteObjects; each call one request of the store.
func TestHTTPObjects(t *testing.T) {
	ctx := context.Background()
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store, err := s3sim.New([]s3sim.Slice{{Prefix: "data/s/", Count: 2000, ModTime: old, Size: 100}},
		s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(math.Inf(1), math.Inf(1)))
	if err != nil {
		t.Fatal(err)
	}
	srv, b := serve(t, store)

	big := make([]byte, 12<<20+3) // three parts of the uploader's 5 MiB
	for i := range big {
		big[i] = byte(i * 7)
	}
	before := store.Stats()
	if err := b.WriteAll(ctx, "big", big, &blob.WriterOptions{Metadata: map[string]string{"m": "v"}, ContentType: "x/y"}); err != nil {
		t.Fatal(err)
	}
	if d := store.Stats().Sub(before); d.Puts != 5 { // create, 3 parts, complete
		t.Errorf("multipart upload made %d puts, want 5", d.Puts)
	}
	got, err := b.ReadAll(ctx, "big")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(big))
	}
	a, err := b.Attributes(ctx, "big")
	if err != nil || a.Size != int64(len(big)) || a.Metadata["m"] != "v" || a.ContentType != "x/y" {
		t.Fatalf("attributes %+v, %v", a, err)
	}
	for _, r := range [][2]int64{{0, 10}, {5 << 20, 100}, {int64(len(big)) - 5, -1}, {17, 0}} {
		rd, err := b.NewRangeReader(ctx, "big", r[0], r[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := io.ReadAll(rd)
		rd.Close()
		end := int64(len(big))
		if r[1] >= 0 {
			end = r[0] + r[1]
		}
		if err != nil || !bytes.Equal(p, big[r[0]:end]) {
			t.Errorf("range %v: %d bytes, %v", r, len(p), err)
		}
	}
	// A synthesised object: its zeros, and a range.
	k := listRows(t, store.Bucket(), "data/")[5].Key
	if p, err := b.ReadAll(ctx, k); err != nil || len(p) != 100 || bytes.Count(p, []byte{0}) != 100 {
		t.Errorf("synthesised object: %d bytes, %v", len(p), err)
	}
	if err := b.WriteAll(ctx, "small", []byte("hello"), &blob.WriterOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "small", []byte("again"), &blob.WriterOptions{IfNotExist: true}); gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Errorf("second write with IfNotExist: %v", err)
	}
	if err := b.Copy(ctx, "copy/of small+x", "small", nil); err != nil {
		t.Fatal(err)
	}
	if p, err := store.Bucket().ReadAll(ctx, "copy/of small+x"); err != nil || string(p) != "hello" {
		t.Errorf("copy: %q, %v", p, err)
	}
	if _, err := b.ReadAll(ctx, "missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("read of a missing key: %v", err)
	}
	if _, err := b.Attributes(ctx, "missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("attributes of a missing key: %v", err)
	}
	if err := b.Delete(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "small"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("second delete: %v", err)
	}

	// DeleteObjects: S3 reports a missing key deleted.
	rows := listRows(t, store.Bucket(), "data/")
	var ids []types.ObjectIdentifier
	for _, r := range rows[:10] {
		ids = append(ids, types.ObjectIdentifier{Key: aws.String(r.Key)})
	}
	ids = append(ids, types.ObjectIdentifier{Key: aws.String("data/s/missing")})
	out, err := srv.Client().DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("sim"), Delete: &types.Delete{Objects: ids}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Deleted) != 11 || len(out.Errors) != 0 || store.NumGone() != 10 {
		t.Errorf("DeleteObjects: %d deleted, %d errors; the store lost %d", len(out.Deleted), len(out.Errors), store.NumGone())
	}
	for _, r := range rows[:10] {
		if store.Exists(r.Key) {
			t.Errorf("%s still there", r.Key)
		}
	}
}

// TestHTTPSlowDown: a throttled request answers 503 SlowDown, which the
// SDK sees as such (after its retries).
func TestHTTPSlowDown(t *testing.T) {
	// A clock that stands still: the throttle's bucket never refills.
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store, err := s3sim.New(nil, s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(1, 1), s3sim.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, store)
	var errs []error
	for range 2 {
		_, err := srv.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("sim"), Key: aws.String("k")},
			func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		errs = append(errs, err)
	}
	if !strings.Contains(fmt.Sprint(errs[0]), "404") || !strings.Contains(fmt.Sprint(errs[1]), "503") {
		t.Fatalf("HEADs at one request a second: %v, want a 404 then a 503", errs)
	}
	resp, err := http.Get(srv.URL() + "/sim/k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("<Code>SlowDown</Code>")) {
		t.Errorf("throttled GET: %d %s", resp.StatusCode, body)
	}
	if store.Stats().Throttled == 0 {
		t.Error("the store counted no throttled request")
	}
}

// TestHTTPInventory reads a report through s3blob over HTTP with the same
// independent decoders as TestInventoryModel.
func TestHTTPInventory(t *testing.T) {
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, format := range []s3sim.InventoryFormat{s3sim.InventoryCSV, s3sim.InventoryParquet} {
		store, err := s3sim.New([]s3sim.Slice{{Prefix: "repo/data/s/", Count: 5000, ModTime: old, Size: 100}},
			s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(math.Inf(1), math.Inf(1)))
		if err != nil {
			t.Fatal(err)
		}
		_, b := serve(t, store)
		want := listRows(t, b, "repo/")
		inv, err := store.AddInventory(s3sim.InventoryConfig{SourceBucket: "sim", ConfigID: "c", DestinationPrefix: "inv",
			Format: format, ObjectsPerFile: 2000, Time: old.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		_, rows := readReport(t, b, inv.ManifestKey)
		if len(rows) != len(want) || len(inv.Files) != 3 {
			t.Fatalf("format %d: %d rows in %d files, want %d in 3", format, len(rows), len(inv.Files), len(want))
		}
		for i := range want {
			if rows[i] != want[i] {
				t.Fatalf("row %d: %+v, want %+v", i, rows[i], want[i])
			}
		}
	}
}

// TestOpenURL opens a served store by its URL, as another process does,
// and reads and writes the same objects as the store's own bucket.
func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	store, err := s3sim.New([]s3sim.Slice{{Prefix: "data/a/", Count: 3, Size: 5}}, s3sim.WithLatency(s3sim.NoLatency))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := store.Serve("sim")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b, err := s3sim.OpenURL(ctx, srv.URL(), "sim")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, "x/written", []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := store.Bucket().ReadAll(ctx, "x/written")
	if err != nil || string(got) != "hello" {
		t.Errorf("the store read %q, %v; want what was written over its URL", got, err)
	}
	if got := listPages(t, b, &blob.ListOptions{Prefix: "data/"}, 10); len(got) != 1 || len(got[0]) != 3 {
		t.Errorf("listed %v over the URL; want the 3 objects of data/a/", got)
	}
	other, err := s3sim.OpenURL(ctx, srv.URL(), "other") // opening checks nothing; the calls fail
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ReadAll(ctx, "x/written"); err == nil {
		t.Error("read another bucket's object over the URL")
	}
}
