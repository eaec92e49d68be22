package s3list

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// TestDecodeMatchesSDK: random pages, rendered with random escape forms,
// decode to what the SDK's own deserializer reads, and to the model.
func TestDecodeMatchesSDK(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	var d Decoder
	for i := range 300 {
		g := randPage(r, r.IntN(40))
		if i%50 == 0 {
			g = randPage(r, 0) // empty pages too
		}
		body := render(r, g)
		want, err := sdkDecode(body)
		if err != nil {
			t.Fatalf("page %d: sdk: %v\n%s", i, err, body)
		}
		got, err := d.Decode(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("page %d: %v\n%s", i, err, body)
		}
		if diff := samePage(got, want); diff != "" {
			t.Fatalf("page %d: ours vs sdk: %s\n%s", i, diff, body)
		}
		// And the model: line ends the renderer escaped survive.
		if diff := samePage(got, &g.Page); diff != "" {
			t.Fatalf("page %d: ours vs model: %s\n%s", i, diff, body)
		}
	}
}

// malformed are bodies both decoders refuse.
var malformed = []string{
	"",
	"<ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key></ListBucketResult>",
	"<ListBucketResult><KeyCount>x</KeyCount></ListBucketResult>",
	"<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a&bogus;</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a&#x1;</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a&#0;</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a\xff</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a]]>b</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key><Size>-x</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key><Size>99999999999999999999</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>2026-02-30T00:00:00.000Z</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>yesterday</LastModified></Contents></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a<b/></Key></Contents></ListBucketResult>",
	"<ListBucketResult><Contents></Key></Contents></ListBucketResult>",
	"<ListBucketResult><Name>b</Nam></ListBucketResult>",
	"<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>",
}

// TestDecodeMalformed: what the SDK refuses, the decoder refuses too, with
// ErrMalformed; and a 200 carrying an error document, which the SDK reads
// as an empty page, is an error here.
func TestDecodeMalformed(t *testing.T) {
	for _, body := range append(malformed,
		`<?xml version="1.0"?><Error><Code>InternalError</Code></Error>`,
		"<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>",
		`<!DOCTYPE x [<!ENTITY e "z">]><ListBucketResult/>`,
	) {
		_, err := DecodeListPage(strings.NewReader(body))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err %v, want ErrMalformed", body, err)
		}
		if !strings.HasPrefix(fmt.Sprint(err), "s3list: ") {
			t.Errorf("%q: message %q", body, err)
		}
	}
	for _, body := range malformed {
		if _, err := sdkDecode([]byte(body)); err == nil && body != "" {
			t.Errorf("%q: the SDK decodes it", body)
		}
	}
}

// TestDecodeBounded: a body over MaxPageBytes is refused before it is
// read whole.
func TestDecodeBounded(t *testing.T) {
	big := strings.NewReader("<ListBucketResult>" + strings.Repeat(" ", MaxPageBytes) + "</ListBucketResult>")
	if _, err := DecodeListPage(big); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v", err)
	}
}

// keysOf lists everything under opts with lp, page by page.
type pageLister interface {
	ListPage(ctx context.Context, tok []byte, n int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error)
}

func listAll(t *testing.T, lp pageLister, opts *blob.ListOptions, size int) ([]*blob.ListObject, [][]byte) {
	t.Helper()
	var (
		all    []*blob.ListObject
		tokens [][]byte
		tok    = blob.FirstPageToken
	)
	for {
		objs, next, err := lp.ListPage(context.Background(), tok, size, opts)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		all = append(all, objs...)
		tokens = append(tokens, next)
		if len(next) == 0 {
			return all, tokens
		}
		tok = next
		if len(tokens) > 10000 {
			t.Fatal("endless listing")
		}
	}
}

// TestListerMatchesS3blob: over a loopback S3 of random keys (escaped ones
// included), the lister's pages equal s3blob's: keys, times, sizes, MD5s,
// folders and tokens, with and without a delimiter, through a prefixed
// bucket too.
func TestListerMatchesS3blob(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	srv := &server{}
	seen := map[string]bool{}
	for range 700 {
		k := randKey(r)
		if r.IntN(2) == 0 {
			k = "ns/data/" + k
		}
		if seen[k] || !validKey(k) {
			continue
		}
		seen[k] = true
		o := randPage(r, 1).Contents[0]
		o.Key = k
		srv.objs = append(srv.objs, o)
	}
	slices.SortFunc(srv.objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	b := open(t, srv)
	l, err := FromBucket(b)
	if err != nil {
		t.Fatal(err)
	}
	pb := blob.PrefixedBucket(open(t, srv), "ns/")
	pl, err := FromBucket(pb)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		bucket *blob.Bucket
		l      *Lister
		opts   *blob.ListOptions
		size   int
	}{
		{"all", b, l, nil, 1000},
		{"small pages", b, l, &blob.ListOptions{}, 7},
		{"delimiter", b, l, &blob.ListOptions{Delimiter: "/"}, 13},
		{"prefix", b, l, &blob.ListOptions{Prefix: "ns/data/"}, 1000},
		{"prefixed bucket", pb, pl, &blob.ListOptions{Prefix: "data/"}, 50},
		{"prefixed bucket, delimiter", pb, pl, &blob.ListOptions{Prefix: "data/", Delimiter: "/"}, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, wantTok := listAll(t, c.bucket, c.opts, c.size)
			got, gotTok := listAll(t, c.l, c.opts, c.size)
			if len(want) == 0 {
				t.Fatal("nothing listed")
			}
			if len(got) != len(want) || len(gotTok) != len(wantTok) {
				t.Fatalf("%d objects in %d pages, want %d in %d", len(got), len(gotTok), len(want), len(wantTok))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Key != w.Key || !g.ModTime.Equal(w.ModTime) || g.Size != w.Size || !bytes.Equal(g.MD5, w.MD5) || g.IsDir != w.IsDir {
					t.Fatalf("object %d: %+v, want %+v", i, g, w)
				}
			}
			for i := range wantTok {
				if !bytes.Equal(gotTok[i], wantTok[i]) {
					t.Fatalf("token %d: %q, want %q", i, gotTok[i], wantTok[i])
				}
			}
		})
	}
}

// TestListerErrors: an error status keeps s3blob's code (sweep retries on
// it); a 200 error document is an error, not an empty page.
func TestListerErrors(t *testing.T) {
	srv := &server{objs: []Object{{Key: "a", Size: 1, LastModified: time.Unix(1, 0).UTC()}}}
	b := open(t, srv)
	l, err := FromBucket(b)
	if err != nil {
		t.Fatal(err)
	}
	srv.fail = func(*http.Request) (int, string) {
		return http.StatusServiceUnavailable, "<Error><Code>SlowDown</Code><Message>slow</Message></Error>"
	}
	_, _, werr := b.ListPage(context.Background(), blob.FirstPageToken, 10, nil)
	_, _, gerr := l.ListPage(context.Background(), blob.FirstPageToken, 10, nil)
	var api smithy.APIError
	if gerr == nil || errors.Is(gerr, io.EOF) || gcerrors.Code(gerr) != gcerrors.Code(werr) ||
		!errors.As(gerr, &api) || api.ErrorCode() != "SlowDown" {
		t.Fatalf("err %v (%v), s3blob's %v (%v)", gerr, gcerrors.Code(gerr), werr, gcerrors.Code(werr))
	}
	srv.fail = func(*http.Request) (int, string) {
		return http.StatusOK, "<Error><Code>InternalError</Code></Error>"
	}
	if _, _, err := l.ListPage(context.Background(), blob.FirstPageToken, 10, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("200 error document: %v", err)
	}
	srv.fail = func(*http.Request) (int, string) {
		return http.StatusOK, "<ListBucketResult><KeyCount>2</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>"
	}
	if _, _, err := l.ListPage(context.Background(), blob.FirstPageToken, 10, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("KeyCount 2 of no keys: %v", err)
	}
	srv.fail = func(*http.Request) (int, string) {
		return http.StatusOK, "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"
	}
	if _, _, err := l.ListPage(context.Background(), blob.FirstPageToken, 10, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated without a token: %v", err)
	}
}

// TestFromBucketNotS3: other buckets are refused.
func TestFromBucketNotS3(t *testing.T) {
	if _, err := FromBucket(nil); !errors.Is(err, ErrNotS3) {
		t.Fatal(err)
	}
}

// FuzzDecodeListPage: the decoder never panics; where it and the SDK both
// decode a body, they read the same page.
func FuzzDecodeListPage(f *testing.F) {
	r := rand.New(rand.NewPCG(29, 3))
	for range 8 {
		f.Add(render(r, randPage(r, r.IntN(4))))
	}
	for _, m := range malformed {
		f.Add([]byte(m))
	}
	f.Add([]byte(`<ListBucketResult><Contents><Key><![CDATA[a<b]]></Key><Size>1</Size><LastModified>2026-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>`))
	f.Add([]byte(`<x:ListBucketResult xmlns:x="u"><x:KEYCOUNT>0</x:KEYCOUNT><!-- c --><?p?></x:ListBucketResult>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := DecodeListPage(bytes.NewReader(body))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is no ErrMalformed", err)
			}
			return
		}
		want, err := sdkDecode(body)
		if err != nil {
			return
		}
		if diff := samePage(got, want); diff != "" {
			t.Fatalf("ours vs sdk: %s", diff)
		}
	})
}

// TestListerConcurrent: Mark lists several folders at once through one
// Lister; each listing gets its own pages (run with -race).
func TestListerConcurrent(t *testing.T) {
	srv := &server{}
	for i := range 300 {
		srv.objs = append(srv.objs, Object{Key: fmt.Sprintf("d%d/k%04d", i%3, i), Size: int64(i), LastModified: time.Unix(int64(i), 0).UTC()})
	}
	slices.SortFunc(srv.objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	l, err := FromBucket(open(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for d := range 3 {
		go func() {
			prefix := fmt.Sprintf("d%d/", d)
			n, tok := 0, blob.FirstPageToken
			for len(tok) > 0 {
				objs, next, err := l.ListPage(context.Background(), tok, 7, &blob.ListOptions{Prefix: prefix})
				if err != nil {
					errs <- err
					return
				}
				for _, o := range objs {
					if !strings.HasPrefix(o.Key, prefix) {
						errs <- fmt.Errorf("%q under %q", o.Key, prefix)
						return
					}
				}
				n += len(objs)
				tok = next
			}
			if n != 100 {
				errs <- fmt.Errorf("%q: %d keys", prefix, n)
				return
			}
			errs <- nil
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
