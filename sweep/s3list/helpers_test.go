package s3list

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// creds are the loopback server's (it checks none).
var creds = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
})

// cannedDoer answers every request with body and status: the SDK's whole
// request and response pipeline runs, without a network.
type cannedDoer struct {
	status int
	body   []byte
}

func (c cannedDoer) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: c.status, Status: http.StatusText(c.status),
		Header:        http.Header{"Content-Type": {"application/xml"}},
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)), Request: r,
	}, nil
}

// sdkDecode decodes body with the SDK's own ListObjectsV2 deserializer, as
// a response of status 200, and maps its output to a Page.
func sdkDecode(body []byte) (*Page, error) {
	cl := s3.New(s3.Options{
		BaseEndpoint: aws.String("http://s3.test"), UsePathStyle: true, Region: "us-east-1",
		Credentials: creds, HTTPClient: cannedDoer{200, body}, RetryMaxAttempts: 1,
	})
	out, err := cl.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("b")})
	if err != nil {
		return nil, err
	}
	p := &Page{KeyCount: -1, IsTruncated: aws.ToBool(out.IsTruncated), EncodingType: string(out.EncodingType)}
	if out.KeyCount != nil {
		p.KeyCount = int64(*out.KeyCount)
	}
	if out.NextContinuationToken != nil {
		p.HasNext, p.NextContinuationToken = true, *out.NextContinuationToken
	}
	for _, o := range out.Contents {
		if o.Key == nil || o.Size == nil || o.LastModified == nil {
			return nil, fmt.Errorf("sdk: object without key, size or time")
		}
		p.Contents = append(p.Contents, Object{Key: *o.Key, Size: *o.Size, LastModified: *o.LastModified, ETag: aws.ToString(o.ETag)})
	}
	for _, c := range out.CommonPrefixes {
		if c.Prefix == nil {
			return nil, fmt.Errorf("sdk: common prefix without prefix")
		}
		p.CommonPrefixes = append(p.CommonPrefixes, *c.Prefix)
	}
	return p, nil
}

// samePage says how a and b differ, or "".
func samePage(a, b *Page) string {
	switch {
	case len(a.Contents) != len(b.Contents):
		return fmt.Sprintf("%d objects, %d", len(a.Contents), len(b.Contents))
	case len(a.CommonPrefixes) != len(b.CommonPrefixes):
		return fmt.Sprintf("%d prefixes, %d", len(a.CommonPrefixes), len(b.CommonPrefixes))
	case a.IsTruncated != b.IsTruncated || a.HasNext != b.HasNext || a.NextContinuationToken != b.NextContinuationToken:
		return fmt.Sprintf("continuation %v %v %q, %v %v %q", a.IsTruncated, a.HasNext, a.NextContinuationToken, b.IsTruncated, b.HasNext, b.NextContinuationToken)
	case a.KeyCount != b.KeyCount || a.EncodingType != b.EncodingType:
		return fmt.Sprintf("KeyCount %d %q, %d %q", a.KeyCount, a.EncodingType, b.KeyCount, b.EncodingType)
	}
	for i := range a.Contents {
		x, y := a.Contents[i], b.Contents[i]
		if x.Key != y.Key || x.Size != y.Size || !x.LastModified.Equal(y.LastModified) ||
			x.LastModified.Location() != y.LastModified.Location() || x.ETag != y.ETag {
			return fmt.Sprintf("object %d: %+v, %+v", i, x, y)
		}
	}
	for i := range a.CommonPrefixes {
		if a.CommonPrefixes[i] != b.CommonPrefixes[i] {
			return fmt.Sprintf("prefix %d: %q, %q", i, a.CommonPrefixes[i], b.CommonPrefixes[i])
		}
	}
	return ""
}

// randKey draws a key of XML-sensitive, unicode and s3blob-escaped parts.
func randKey(r *rand.Rand) string {
	parts := []string{"a", "data/", "x", "<", ">", "&", "'", "\"", "é", "日本", "😀", "\t", "\r", "\r\n",
		"]]>", "__0x41__", "../", "//", " ", "%2F", "\uFFFD", "ab/cd"}
	n := 1 + r.IntN(6)
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// esc writes s as XML text, each special or non-ASCII character in a form
// drawn at random: named entity, decimal or hex reference, or raw.
func esc(r *rand.Rand, w *bytes.Buffer, s string) {
	for _, c := range s {
		form := r.IntN(4)
		switch {
		case c == '<' || c == '&':
			form = 1 + r.IntN(3)
		case c == '>' || c == '\r' || c < 0x20 && c != '\t' && c != '\n':
			form = 1 + r.IntN(3) // ">" raw could make "]]>"; "\r" raw reads as "\n"
		}
		switch form {
		case 0:
			w.WriteRune(c)
		case 1:
			switch c {
			case '<':
				w.WriteString("&lt;")
			case '>':
				w.WriteString("&gt;")
			case '&':
				w.WriteString("&amp;")
			case '\'':
				w.WriteString("&apos;")
			case '"':
				w.WriteString("&quot;")
			default:
				fmt.Fprintf(w, "&#%d;", c)
			}
		case 2:
			fmt.Fprintf(w, "&#%d;", c)
		default:
			fmt.Fprintf(w, "&#x%X;", c)
		}
	}
}

// page is a ListObjectsV2 result to render.
type genPage struct {
	Page
	Prefix, Delimiter, Token string
}

// render writes p as S3 would, with random decorations S3 may send
// (declaration, namespace, Owner, StorageClass, whitespace, element case
// as the SDK ignores it).
func render(r *rand.Rand, p *genPage) []byte {
	var w bytes.Buffer
	if r.IntN(2) == 0 {
		w.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	}
	w.WriteString(`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	el := func(name, v string) {
		fmt.Fprintf(&w, "<%s>", name)
		esc(r, &w, v)
		fmt.Fprintf(&w, "</%s>", name)
		if r.IntN(4) == 0 {
			w.WriteString("\n  ")
		}
	}
	el("Name", "bucket")
	el("Prefix", p.Prefix)
	if p.KeyCount >= 0 {
		el("KeyCount", strconv.FormatInt(p.KeyCount, 10))
	}
	el("MaxKeys", "1000")
	if p.Delimiter != "" {
		el("Delimiter", p.Delimiter)
	}
	el("IsTruncated", strconv.FormatBool(p.IsTruncated))
	if p.Token != "" {
		el("ContinuationToken", p.Token)
	}
	if p.HasNext {
		el("NextContinuationToken", p.NextContinuationToken)
	}
	if p.EncodingType != "" {
		el("EncodingType", p.EncodingType)
	}
	for _, o := range p.Contents {
		w.WriteString("<Contents>")
		el("Key", o.Key)
		el("LastModified", o.LastModified.UTC().Format("2006-01-02T15:04:05.000Z"))
		if o.ETag != "" {
			el("ETag", o.ETag)
		}
		if r.IntN(3) == 0 {
			w.WriteString("<ChecksumAlgorithm>CRC32</ChecksumAlgorithm><ChecksumType>FULL_OBJECT</ChecksumType>")
		}
		el("Size", strconv.FormatInt(o.Size, 10))
		if r.IntN(3) == 0 {
			w.WriteString("<Owner><ID>abc</ID><DisplayName>me</DisplayName></Owner>")
		}
		el("StorageClass", "STANDARD")
		w.WriteString("</Contents>")
	}
	for _, c := range p.CommonPrefixes {
		w.WriteString("<CommonPrefixes>")
		el("Prefix", c)
		w.WriteString("</CommonPrefixes>")
	}
	w.WriteString("</ListBucketResult>")
	return w.Bytes()
}

// randPage draws a page of n objects and some common prefixes.
func randPage(r *rand.Rand, n int) *genPage {
	p := &genPage{Page: Page{KeyCount: -1}}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		etag := fmt.Sprintf("\"%032x\"", r.Uint64())
		switch r.IntN(5) {
		case 0:
			etag = fmt.Sprintf("\"%032x-3\"", r.Uint64())
		case 1:
			etag = ""
		}
		p.Contents = append(p.Contents, Object{
			Key:          randKey(r),
			Size:         r.Int64N(1 << 40),
			LastModified: base.Add(time.Duration(r.Int64N(int64(400*24*time.Hour))) / time.Millisecond * time.Millisecond),
			ETag:         etag,
		})
	}
	for range r.IntN(4) {
		p.CommonPrefixes = append(p.CommonPrefixes, randKey(r)+"/")
	}
	if r.IntN(2) == 0 {
		p.KeyCount = int64(len(p.Contents) + len(p.CommonPrefixes))
	}
	if r.IntN(2) == 0 {
		p.IsTruncated, p.HasNext = true, true
		p.NextContinuationToken = fmt.Sprintf("1%x/+=&<tok", r.Uint64())
	}
	return p
}

// server is a loopback S3 endpoint answering ListObjectsV2 from a sorted
// list of objects (S3 keys), 1000 at a time at most.
type server struct {
	objs     []Object
	requests atomic.Int64
	fail     func(r *http.Request) (int, string) // status and body instead, or 0
}

func (s *server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.requests.Add(1)
	if s.fail != nil {
		if code, body := s.fail(req); code != 0 {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(code)
			io.WriteString(w, body)
			return
		}
	}
	q := req.URL.Query()
	if q.Get("list-type") != "2" {
		http.Error(w, "only ListObjectsV2", http.StatusNotImplemented)
		return
	}
	prefix, delim, token := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	max := 1000
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m < max {
		max = m
	}
	start := sort.Search(len(s.objs), func(i int) bool { return s.objs[i].Key > token })
	if token == "" {
		start = sort.Search(len(s.objs), func(i int) bool { return s.objs[i].Key >= prefix })
	}
	p := &genPage{Prefix: prefix, Delimiter: delim, Token: token}
	last := ""
	for i := start; i < len(s.objs) && strings.HasPrefix(s.objs[i].Key, prefix); i++ {
		o := s.objs[i]
		if len(p.Contents)+len(p.CommonPrefixes) == max {
			p.IsTruncated, p.HasNext, p.NextContinuationToken = true, true, last
			break
		}
		if delim != "" {
			if j := strings.Index(o.Key[len(prefix):], delim); j >= 0 {
				cp := o.Key[:len(prefix)+j+len(delim)]
				if n := len(p.CommonPrefixes); n == 0 || p.CommonPrefixes[n-1] != cp {
					p.CommonPrefixes = append(p.CommonPrefixes, cp)
				}
				last = o.Key
				continue
			}
		}
		p.Contents = append(p.Contents, o)
		last = o.Key
	}
	// The token is the last key seen: a common prefix's keys are skipped
	// by jumping past the prefix.
	if p.HasNext && delim != "" {
		if j := strings.Index(last[len(prefix):], delim); j >= 0 {
			p.NextContinuationToken = last[:len(prefix)+j+len(delim)] + "\U0010FFFF"
		}
	}
	p.KeyCount = int64(len(p.Contents) + len(p.CommonPrefixes))
	w.Header().Set("Content-Type", "application/xml")
	w.Write(render(rand.New(rand.NewPCG(uint64(len(token)), uint64(start))), p))
}

// open starts srv on loopback and opens an s3blob bucket on it.
func open(t testing.TB, srv *server) *blob.Bucket {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	cl := s3.New(s3.Options{
		BaseEndpoint: aws.String(hs.URL), UsePathStyle: true, Region: "us-east-1",
		Credentials: creds, RetryMaxAttempts: 1,
	})
	b, err := s3blob.OpenBucket(context.Background(), cl, "bkt", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// validKey says whether S3 could hold k (valid UTF-8).
func validKey(k string) bool { return utf8.ValidString(k) && k != "" }
