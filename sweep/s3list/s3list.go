package s3list

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob"
)

// ErrNotS3 is returned by FromBucket for a bucket that is not s3blob's, or
// one that lists with the legacy ListObjects.
var ErrNotS3 = errors.New("s3list: not an S3 bucket with ListObjectsV2")

// Lister is a sweep.PageLister for a bucket opened with s3blob. It is safe
// for concurrent use.
type Lister struct {
	bucket *blob.Bucket
	pool   sync.Pool // *Decoder
}

var _ sweep.PageLister = (*Lister)(nil)

// errProbe stops the request FromBucket builds to look at it.
var errProbe = errors.New("s3list: probe")

// FromBucket returns a lister for a bucket opened with s3blob (possibly
// wrapped by blob.PrefixedBucket). It sends no request.
func FromBucket(b *blob.Bucket) (*Lister, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrNotS3)
	}
	var client *s3.Client
	if !b.As(&client) || client == nil {
		return nil, ErrNotS3
	}
	v2 := false
	_, _, err := b.ListPage(context.Background(), blob.FirstPageToken, 1, &blob.ListOptions{
		BeforeList: func(as func(any) bool) error {
			var in *s3.ListObjectsV2Input
			var ops *[]func(*s3.Options)
			v2 = as(&in) && as(&ops)
			return errProbe
		},
	})
	if !v2 || !errors.Is(err, errProbe) {
		return nil, ErrNotS3
	}
	return &Lister{bucket: b}, nil
}

// emptyResult is the body the SDK's own decoder gets once the page is
// decoded: nothing for it to do.
const emptyResult = "<ListBucketResult></ListBucketResult>"

// capture is a deserialize-step middleware just inside the SDK's
// deserializer: it decodes a successful response's body into page and
// hands the SDK's deserializer an empty result. Error responses pass
// through untouched, for the SDK to decode.
type capture struct {
	dec  *Decoder
	page **Page
}

func (*capture) ID() string { return "s3list.Capture" }

func (c *capture) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Body == nil {
		return out, md, err
	}
	p, derr := c.dec.Decode(resp.Body)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(emptyResult))
	if derr != nil {
		return out, md, derr
	}
	*c.page = p
	return out, md, nil
}

// ListPage lists one page as bucket.ListPage does, through the bucket's
// own request (its client, signer, retries, prefix and error codes), but
// decodes the body itself. A page it cannot map exactly as s3blob would
// (an escaped key, URL encoding) is listed again through s3blob. The
// objects have no As.
func (l *Lister) ListPage(ctx context.Context, pageToken []byte, pageSize int, opts *blob.ListOptions) ([]*blob.ListObject, []byte, error) {
	var (
		o    blob.ListOptions
		page *Page
		in   *s3.ListObjectsV2Input
	)
	if opts != nil {
		o = *opts
	}
	if o.BeforeList != nil {
		return l.bucket.ListPage(ctx, pageToken, pageSize, opts)
	}
	dec, _ := l.pool.Get().(*Decoder)
	if dec == nil {
		dec = &Decoder{reuse: true} // the page is gone when ListPage returns
	}
	defer func() {
		if page != nil && cap(page.Contents) <= 1000 {
			clear(page.Contents) // drop the strings
			dec.objs = page.Contents[:0]
		}
		l.pool.Put(dec)
	}()
	c := &capture{dec: dec, page: &page}
	o.BeforeList = func(as func(any) bool) error {
		var ops *[]func(*s3.Options)
		if !as(&in) || !as(&ops) {
			return nil // not ListObjectsV2: the SDK decodes
		}
		*ops = append(*ops, func(so *s3.Options) {
			so.APIOptions = append(so.APIOptions, func(st *middleware.Stack) error {
				return st.Deserialize.Insert(c, "OperationDeserializer", middleware.After)
			})
		})
		return nil
	}
	objs, next, err := l.bucket.ListPage(ctx, pageToken, pageSize, &o)
	if err != nil {
		return nil, nil, err
	}
	if page == nil || in == nil {
		return objs, next, nil // the middleware did not run
	}
	if len(objs) != 0 || len(next) != 0 {
		return nil, nil, fmt.Errorf("%w: s3blob decoded %d objects of the replaced body", ErrMalformed, len(objs))
	}
	objs, next, ok, err := convert(page, aws.ToString(in.Prefix), o.Prefix)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return l.bucket.ListPage(ctx, pageToken, pageSize, opts)
	}
	return objs, next, nil
}

// convert maps a page as s3blob and blob.PrefixedBucket would: s3Prefix is
// the prefix sent to S3, prefix the one asked for, and their difference the
// bucket's own prefix, which is cut from every key. Not ok when s3blob
// would have unescaped something.
func convert(p *Page, s3Prefix, prefix string) (objs []*blob.ListObject, next []byte, ok bool, err error) {
	if p.EncodingType != "" || strings.Contains(s3Prefix, "__0x") || !strings.HasSuffix(s3Prefix, prefix) {
		return nil, nil, false, nil
	}
	root := s3Prefix[:len(s3Prefix)-len(prefix)]
	if p.KeyCount >= 0 && p.KeyCount != int64(len(p.Contents)+len(p.CommonPrefixes)) {
		return nil, nil, false, fmt.Errorf("%w: KeyCount %d, %d keys listed", ErrMalformed, p.KeyCount, len(p.Contents)+len(p.CommonPrefixes))
	}
	if p.IsTruncated != (p.HasNext && p.NextContinuationToken != "") {
		return nil, nil, false, fmt.Errorf("%w: IsTruncated %v with NextContinuationToken %q", ErrMalformed, p.IsTruncated, p.NextContinuationToken)
	}
	cut := func(k string) (string, error) {
		if strings.Contains(k, "__0x") {
			return "", errEscaped
		}
		rest, found := strings.CutPrefix(k, root)
		if !found {
			return "", fmt.Errorf("%w: key %q outside the bucket's prefix %q", ErrMalformed, k, root)
		}
		return rest, nil
	}
	objs = make([]*blob.ListObject, 0, len(p.Contents)+len(p.CommonPrefixes))
	slab := make([]blob.ListObject, len(p.Contents)+len(p.CommonPrefixes))
	md5s := make([]byte, 0, 16*len(p.Contents)) // the MD5s, one allocation
	for i, c := range p.Contents {
		k, err := cut(c.Key)
		if err != nil {
			if errors.Is(err, errEscaped) {
				return nil, nil, false, nil
			}
			return nil, nil, false, err
		}
		var md5 []byte
		md5s, md5 = etagMD5(md5s, c.ETag)
		slab[i] = blob.ListObject{Key: k, ModTime: c.LastModified, Size: c.Size, MD5: md5}
		objs = append(objs, &slab[i])
	}
	for i, cp := range p.CommonPrefixes {
		k, err := cut(cp)
		if err != nil {
			if errors.Is(err, errEscaped) {
				return nil, nil, false, nil
			}
			return nil, nil, false, err
		}
		o := &slab[len(p.Contents)+i]
		*o = blob.ListObject{Key: k, IsDir: true}
		objs = append(objs, o)
	}
	if len(p.Contents) > 0 && len(p.CommonPrefixes) > 0 {
		slices.SortStableFunc(objs, func(a, b *blob.ListObject) int { return strings.Compare(a.Key, b.Key) })
	}
	if p.HasNext && p.NextContinuationToken != "" {
		next = []byte(p.NextContinuationToken)
	}
	return objs, next, true, nil
}

var errEscaped = errors.New("s3list: escaped key")

// etagMD5 returns the MD5 s3blob reads from an ETag: the hex between
// quotes, or nil (a multipart upload's ETag is no hex). It is appended to
// buf, returned too, when it fits in buf's capacity.
func etagMD5(buf []byte, etag string) ([]byte, []byte) {
	if len(etag) < 2 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		return buf, nil
	}
	h := etag[1 : len(etag)-1]
	if len(h)%2 != 0 {
		return buf, nil
	}
	n := len(h) / 2
	var out []byte
	if len(buf)+n <= cap(buf) {
		out = buf[len(buf) : len(buf)+n : len(buf)+n]
	} else {
		out = make([]byte, n)
	}
	for i := range out {
		a, ok1 := unhex(h[2*i])
		b, ok2 := unhex(h[2*i+1])
		if !ok1 || !ok2 {
			return buf, nil
		}
		out[i] = a<<4 | b
	}
	if len(buf)+n <= cap(buf) {
		buf = buf[:len(buf)+n]
	}
	return buf, out
}

func unhex(c byte) (byte, bool) {
	v := hexVal[c]
	return v, v != 0xff
}

// hexVal is each byte's value as a hex digit, 0xff for none.
var hexVal = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()
