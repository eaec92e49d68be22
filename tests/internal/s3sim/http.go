package s3sim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/blob/s3blob"
)

// HTTPRegion is the region of the clients Server makes.
const HTTPRegion = "us-east-1"

// MaxUploadBytes bounds an object written over HTTP (a PUT, or a multipart
// upload's parts together): the store holds it in memory.
const MaxUploadBytes = 1 << 30

// Handler serves the store as the S3 bucket named name, path-style
// (http://host/<bucket>/<key>), for the calls gocloud's s3blob, the AWS SDK
// v2 and package sweep's S3 paths make: ListObjectsV2 (prefix, delimiter,
// continuation-token, max-keys, start-after, fetch-owner ignored),
// HeadObject, GetObject (with a Range), PutObject (If-None-Match: *,
// metadata, aws-chunked bodies), the multipart upload calls of the SDK's
// uploader, CopyObject, DeleteObject and DeleteObjects, and HeadBucket and
// CreateBucket of its own name; anything else is 501 NotImplemented. It
// accepts any signature, or none, and checks no checksum.
//
// Each call is one request of the store (its latency, throttle and
// counters), through the store's driver, so that a run over HTTP makes the
// same requests as one through Store.Bucket: a throttled request answers
// 503 SlowDown, a missing key 404 NoSuchKey (HEAD: no body), a write
// refused by If-None-Match 412 PreconditionFailed, a range that starts
// past the end of a non-empty object 416 InvalidRange. As S3 does, and
// unlike the driver, DeleteObject and DeleteObjects report a missing key
// deleted.
// A continuation token is the driver's page token in base64.
func (s *Store) Handler(name string) http.Handler {
	return &handler{s: s, b: &bucket{s}, name: name, uploads: map[string]*upload{}}
}

type handler struct {
	s    *Store
	b    *bucket
	name string

	mu      sync.Mutex
	uploads map[string]*upload // multipart uploads in progress, by ID
}

type upload struct {
	key   string
	opts  driver.WriterOptions
	ctype string
	parts map[int][]byte
	size  int64
}

// Server is a Store served over HTTP on loopback by Handler.
type Server struct {
	url    string
	bucket string
	srv    *http.Server
	client *s3.Client
	done   chan struct{}
}

// Serve starts serving the store as the bucket named bucket on an
// ephemeral port of 127.0.0.1, until Close.
func (s *Store) Serve(bucket string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("s3sim: listen: %w", err)
	}
	v := &Server{url: "http://" + ln.Addr().String(), bucket: bucket, done: make(chan struct{}),
		srv: &http.Server{Handler: s.Handler(bucket), ReadHeaderTimeout: time.Minute}}
	go func() {
		defer close(v.done)
		_ = v.srv.Serve(ln)
	}()
	v.client = newClient(v.url)
	return v, nil
}

// newClient is an AWS SDK v2 client of the server at url: path-style,
// static credentials, HTTPRegion, and a connection pool of 1024.
func newClient(url string) *s3.Client {
	// A pool of connections as deep as the GC's widest concurrency, so
	// that requests reuse them instead of leaving sockets in TIME_WAIT.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 1024
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(url),
		UsePathStyle: true,
		Region:       HTTPRegion,
		Credentials:  credentials.NewStaticCredentialsProvider("s3sim", "s3sim-secret", ""),
		HTTPClient:   &http.Client{Transport: tr},
	})
}

// OpenURL opens the bucket named bucket of a Server at url (Server.URL),
// from another process, through gocloud's s3blob and a client as
// Server.Client's.
func OpenURL(ctx context.Context, url, bucket string) (*blob.Bucket, error) {
	return s3blob.OpenBucket(ctx, newClient(url), bucket, nil)
}

// URL is the server's base URL, http://127.0.0.1:<port>.
func (v *Server) URL() string { return v.url }

// Client returns an AWS SDK v2 client of the server: path-style, static
// credentials, HTTPRegion, and a connection pool of 1024.
func (v *Server) Client() *s3.Client { return v.client }

// OpenBucket opens the served bucket through gocloud's s3blob and Client.
func (v *Server) OpenBucket(ctx context.Context) (*blob.Bucket, error) {
	return s3blob.OpenBucket(ctx, v.client, v.bucket, nil)
}

// Close stops the server and closes its connections.
func (v *Server) Close() error {
	err := v.srv.Close()
	<-v.done
	return err
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	name, key, hasKey := strings.Cut(path, "/")
	q := r.URL.Query()
	if name != h.name {
		writeError(w, r, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", name)
		return
	}
	if !hasKey || key == "" {
		switch {
		case r.Method == http.MethodGet && q.Get("list-type") == "2":
			h.list(w, r, q)
		case r.Method == http.MethodPost && q.Has("delete"):
			h.deleteObjects(w, r)
		case r.Method == http.MethodHead, r.Method == http.MethodPut:
			w.WriteHeader(http.StatusOK) // HeadBucket, CreateBucket of this bucket
		default:
			writeError(w, r, http.StatusNotImplemented, "NotImplemented", "s3sim does not implement this bucket request", "")
		}
		return
	}
	switch r.Method {
	case http.MethodHead, http.MethodGet:
		h.get(w, r, key)
	case http.MethodPut:
		switch {
		case q.Has("uploadId"):
			h.uploadPart(w, r, key, q)
		case r.Header.Get("x-amz-copy-source") != "":
			h.copy(w, r, key)
		default:
			h.put(w, r, key)
		}
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			h.createUpload(w, r, key)
		case q.Has("uploadId"):
			h.completeUpload(w, r, key, q.Get("uploadId"))
		default:
			writeError(w, r, http.StatusNotImplemented, "NotImplemented", "s3sim does not implement this object request", key)
		}
	case http.MethodDelete:
		if q.Has("uploadId") {
			h.abortUpload(w, r, key, q.Get("uploadId"))
			return
		}
		if err := h.b.Delete(r.Context(), key); err != nil && !errors.Is(err, ErrNotFound) {
			h.fail(w, r, err, key)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", key)
	}
}

// fail answers err as S3 would.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error, key string) {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// The client is gone: nobody reads the answer.
		writeError(w, r, 499, "RequestCanceled", err.Error(), key)
	case errors.Is(err, ErrNotFound):
		writeError(w, r, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", key)
	case errors.Is(err, ErrSlowDown):
		writeError(w, r, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.", key)
	case errors.Is(err, ErrExists):
		writeError(w, r, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold", key)
	case errors.Is(err, ErrInvalid):
		writeError(w, r, http.StatusBadRequest, "InvalidArgument", err.Error(), key)
	default:
		writeError(w, r, http.StatusInternalServerError, "InternalError", err.Error(), key)
	}
}

// writeError writes S3's error document (none for a HEAD).
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg, key string) {
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<Error><Code>")
	appendXML(&b, code)
	b.WriteString("</Code><Message>")
	appendXML(&b, msg)
	b.WriteString("</Message>")
	if key != "" {
		b.WriteString("<Key>")
		appendXML(&b, key)
		b.WriteString("</Key>")
	}
	b.WriteString("<RequestId>s3sim</RequestId></Error>")
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// appendXML writes s escaped as XML character data.
func appendXML(b *bytes.Buffer, s string) {
	if !strings.ContainsAny(s, "&<>\"'\r\n\t") && isPlain(s) {
		b.WriteString(s)
		return
	}
	_ = xml.EscapeText(b, []byte(s))
}

// isPlain reports whether s holds no control character and no byte
// outside ASCII, the common case written as is.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

const timeFormat = "2006-01-02T15:04:05.000Z"

// pagePool holds the buffers listing pages are written into (about 250 KB
// a page of 1000 keys).
var pagePool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// list answers ListObjectsV2.
func (h *handler) list(w http.ResponseWriter, r *http.Request, q url.Values) {
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	maxKeys := MaxKeys
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, r, http.StatusBadRequest, "InvalidArgument", "Provided max-keys not an integer or within integer range", "")
			return
		}
		maxKeys = min(n, MaxKeys)
	}
	if q.Has("encoding-type") && q.Get("encoding-type") != "url" {
		writeError(w, r, http.StatusBadRequest, "InvalidArgument", "Invalid Encoding Method specified in Request", "")
		return
	}
	encode := q.Get("encoding-type") == "url"
	startAfter, token := q.Get("start-after"), q.Get("continuation-token")
	opts := &driver.ListOptions{Prefix: prefix, Delimiter: delim, PageSize: max(maxKeys, 1)}
	switch {
	case token != "":
		tok, err := base64.StdEncoding.DecodeString(token)
		if err != nil || len(tok) == 0 {
			writeError(w, r, http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect", "")
			return
		}
		opts.PageToken = tok
	case startAfter != "":
		opts.PageToken = append([]byte{tokenAfter}, startAfter...)
	}
	page := &driver.ListPage{}
	if maxKeys > 0 {
		var err error
		if page, err = h.b.ListPaged(r.Context(), opts); err != nil {
			h.fail(w, r, err, "")
			return
		}
	} else if err := h.s.request(r.Context(), kList, prefix); err != nil {
		h.fail(w, r, err, "")
		return
	}
	b := pagePool.Get().(*bytes.Buffer)
	defer pagePool.Put(b)
	b.Reset()
	esc := func(s string) {
		if encode {
			s = url.QueryEscape(s)
		}
		appendXML(b, s)
	}
	b.WriteString(xml.Header)
	b.WriteString(`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>`)
	appendXML(b, h.name)
	b.WriteString("</Name><Prefix>")
	esc(prefix)
	b.WriteString("</Prefix>")
	if delim != "" {
		b.WriteString("<Delimiter>")
		esc(delim)
		b.WriteString("</Delimiter>")
	}
	fmt.Fprintf(b, "<MaxKeys>%d</MaxKeys><KeyCount>%d</KeyCount><IsTruncated>%t</IsTruncated>", maxKeys, len(page.Objects), len(page.NextPageToken) > 0)
	if encode {
		b.WriteString("<EncodingType>url</EncodingType>")
	}
	if token != "" {
		b.WriteString("<ContinuationToken>")
		appendXML(b, token)
		b.WriteString("</ContinuationToken>")
	}
	if len(page.NextPageToken) > 0 {
		b.WriteString("<NextContinuationToken>")
		b.WriteString(base64.StdEncoding.EncodeToString(page.NextPageToken))
		b.WriteString("</NextContinuationToken>")
	}
	if startAfter != "" {
		b.WriteString("<StartAfter>")
		esc(startAfter)
		b.WriteString("</StartAfter>")
	}
	// A slice's objects share their time, MD5 and size: their text is
	// made once for a run of them.
	var (
		tail []byte
		prev *driver.ListObject
	)
	for _, o := range page.Objects {
		if o.IsDir {
			continue
		}
		b.WriteString("<Contents><Key>")
		esc(o.Key)
		if prev == nil || !o.ModTime.Equal(prev.ModTime) || !bytes.Equal(o.MD5, prev.MD5) || o.Size != prev.Size {
			tail = append(tail[:0], "</Key><LastModified>"...)
			tail = o.ModTime.UTC().AppendFormat(tail, timeFormat)
			tail = append(tail, "</LastModified><ETag>&quot;"...)
			tail = hex.AppendEncode(tail, o.MD5)
			tail = append(tail, "&quot;</ETag><Size>"...)
			tail = strconv.AppendInt(tail, o.Size, 10)
			tail = append(tail, "</Size><StorageClass>STANDARD</StorageClass></Contents>"...)
			prev = o
		}
		b.Write(tail)
	}
	for _, o := range page.Objects {
		if o.IsDir {
			b.WriteString("<CommonPrefixes><Prefix>")
			esc(o.Key)
			b.WriteString("</Prefix></CommonPrefixes>")
		}
	}
	b.WriteString("</ListBucketResult>")
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, _ = w.Write(b.Bytes())
}

// get answers HeadObject and GetObject.
func (h *handler) get(w http.ResponseWriter, r *http.Request, key string) {
	ctx := r.Context()
	if r.Method == http.MethodHead {
		a, err := h.b.Attributes(ctx, key)
		if err != nil {
			h.fail(w, r, err, key)
			return
		}
		setHeaders(w.Header(), a)
		w.Header().Set("Content-Length", strconv.FormatInt(a.Size, 10))
		w.WriteHeader(http.StatusOK)
		return
	}
	// One GET: the store's reader counts it; its attributes are read
	// without a request.
	h.s.mu.RLock()
	o, ok := h.s.lookup(key)
	h.s.mu.RUnlock()
	var a driver.Attributes
	if ok {
		a = o.attrs
	}
	offset, length, status := int64(0), int64(-1), http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && ok {
		first, last, err := parseRange(rg)
		if err != nil || (first >= a.Size && a.Size > 0) {
			// Count the request as S3 would, then refuse it.
			if err := h.s.request(ctx, kGet, key); err != nil {
				h.fail(w, r, err, key)
				return
			}
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(a.Size, 10))
			writeError(w, r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable", key)
			return
		}
		if a.Size > 0 {
			if first < 0 { // a suffix: the last -first bytes
				first = max(0, a.Size+first)
				last = a.Size - 1
			}
			if last < 0 || last >= a.Size {
				last = a.Size - 1
			}
			offset, length, status = first, last-first+1, http.StatusPartialContent
		}
	}
	rd, err := h.b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	defer rd.Close()
	n := a.Size - offset
	if length >= 0 {
		n = length
	}
	setHeaders(w.Header(), &a)
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	if status == http.StatusPartialContent {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", offset, offset+n-1, a.Size))
	}
	w.WriteHeader(status)
	_, _ = io.Copy(w, rd)
}

// parseRange parses "bytes=first-last", "bytes=first-" (last -1) and
// "bytes=-n" (first -n, last -1).
func parseRange(s string) (first, last int64, err error) {
	spec, ok := strings.CutPrefix(s, "bytes=")
	a, b, ok2 := strings.Cut(spec, "-")
	if !ok || !ok2 || strings.Contains(spec, ",") {
		return 0, 0, fmt.Errorf("range %q", s)
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, fmt.Errorf("range %q", s)
		}
		return -n, -1, nil
	}
	first, err = strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return 0, 0, fmt.Errorf("range %q", s)
	}
	if b == "" {
		return first, -1, nil
	}
	last, err = strconv.ParseInt(b, 10, 64)
	if err != nil || last < first {
		return 0, 0, fmt.Errorf("range %q", s)
	}
	return first, last, nil
}

// setHeaders sets an object's headers.
func setHeaders(hd http.Header, a *driver.Attributes) {
	ctype := a.ContentType
	if ctype == "" {
		ctype = "binary/octet-stream"
	}
	hd.Set("Content-Type", ctype)
	hd.Set("Last-Modified", a.ModTime.UTC().Format(http.TimeFormat))
	hd.Set("ETag", "\""+hex.EncodeToString(a.MD5)+"\"")
	hd.Set("Accept-Ranges", "bytes")
	for k, v := range map[string]string{"Cache-Control": a.CacheControl, "Content-Disposition": a.ContentDisposition,
		"Content-Encoding": a.ContentEncoding, "Content-Language": a.ContentLanguage} {
		if v != "" {
			hd.Set(k, v)
		}
	}
	for k, v := range a.Metadata {
		hd.Set("X-Amz-Meta-"+k, v)
	}
}

// writerOptions reads a PUT's (or an upload's) headers.
func writerOptions(r *http.Request) driver.WriterOptions {
	o := driver.WriterOptions{
		CacheControl: r.Header.Get("Cache-Control"), ContentDisposition: r.Header.Get("Content-Disposition"),
		ContentLanguage: r.Header.Get("Content-Language"), Metadata: map[string]string{},
		IfNotExist: r.Header.Get("If-None-Match") == "*",
	}
	var enc []string
	for _, e := range strings.Split(r.Header.Get("Content-Encoding"), ",") {
		if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
			enc = append(enc, e)
		}
	}
	o.ContentEncoding = strings.Join(enc, ",")
	for k, v := range r.Header {
		if m, ok := strings.CutPrefix(strings.ToLower(k), "x-amz-meta-"); ok && len(v) > 0 {
			o.Metadata[m] = v[0]
		}
	}
	return o
}

// body reads a request's body, decoding aws-chunked framing.
func body(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxUploadBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxUploadBytes {
		return nil, fmt.Errorf("%w: a body of more than %d bytes", ErrInvalid, MaxUploadBytes)
	}
	if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") ||
		strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return decodeChunked(data)
	}
	return data, nil
}

// decodeChunked decodes the aws-chunked encoding: chunks of
// "<hex size>[;ext]\r\n<data>\r\n" up to one of size 0, then trailers.
func decodeChunked(data []byte) ([]byte, error) {
	var out []byte
	rd := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: aws-chunked body: %v", ErrInvalid, err)
		}
		size, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 || n > int64(len(data)) {
			return nil, fmt.Errorf("%w: aws-chunked chunk size %q", ErrInvalid, size)
		}
		if n == 0 {
			return out, nil // trailers follow, unchecked
		}
		chunk := make([]byte, n)
		if _, err := io.ReadFull(rd, chunk); err != nil {
			return nil, fmt.Errorf("%w: aws-chunked chunk: %v", ErrInvalid, err)
		}
		out = append(out, chunk...)
		if crlf, err := rd.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, fmt.Errorf("%w: aws-chunked chunk not ended by CRLF", ErrInvalid)
		}
	}
}

// write writes data to key through the store's writer: one PUT.
func (h *handler) write(ctx context.Context, key, ctype string, opts driver.WriterOptions, data []byte) (*driver.Attributes, error) {
	wr, err := h.b.NewTypedWriter(ctx, key, ctype, &opts)
	if err != nil {
		return nil, err
	}
	if _, err := wr.Write(data); err != nil {
		return nil, err
	}
	if err := wr.Close(); err != nil {
		return nil, err
	}
	sum := md5.Sum(data)
	return &driver.Attributes{MD5: sum[:], ModTime: h.s.cfg.now()}, nil
}

func (h *handler) put(w http.ResponseWriter, r *http.Request, key string) {
	data, err := body(r)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	a, err := h.write(r.Context(), key, r.Header.Get("Content-Type"), writerOptions(r), data)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	w.Header().Set("ETag", "\""+hex.EncodeToString(a.MD5)+"\"")
	w.WriteHeader(http.StatusOK)
}

func (h *handler) copy(w http.ResponseWriter, r *http.Request, key string) {
	src := r.Header.Get("x-amz-copy-source")
	src, _, _ = strings.Cut(src, "?versionId=")
	if u, err := url.QueryUnescape(src); err == nil {
		src = u
	}
	name, srcKey, _ := strings.Cut(strings.TrimPrefix(src, "/"), "/")
	if name != h.name || srcKey == "" {
		writeError(w, r, http.StatusBadRequest, "InvalidArgument", "s3sim copies within its bucket only", key)
		return
	}
	if err := h.b.Copy(r.Context(), key, srcKey, nil); err != nil {
		h.fail(w, r, err, srcKey)
		return
	}
	h.s.mu.RLock()
	o, _ := h.s.lookup(key)
	h.s.mu.RUnlock()
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<CopyObjectResult>")
	if o != nil {
		fmt.Fprintf(&b, "<LastModified>%s</LastModified><ETag>&quot;%x&quot;</ETag>", o.attrs.ModTime.UTC().Format(timeFormat), o.attrs.MD5)
	}
	b.WriteString("</CopyObjectResult>")
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(b.Bytes())
}

func (h *handler) createUpload(w http.ResponseWriter, r *http.Request, key string) {
	if err := h.s.request(r.Context(), kPut, key); err != nil {
		h.fail(w, r, err, key)
		return
	}
	var idb [12]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	h.mu.Lock()
	h.uploads[id] = &upload{key: key, opts: writerOptions(r), ctype: r.Header.Get("Content-Type"), parts: map[int][]byte{}}
	h.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>`)
	appendXML(&b, h.name)
	b.WriteString("</Bucket><Key>")
	appendXML(&b, key)
	b.WriteString("</Key><UploadId>" + id + "</UploadId></InitiateMultipartUploadResult>")
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(b.Bytes())
}

// lookupUpload returns the upload id of key.
func (h *handler) lookupUpload(w http.ResponseWriter, r *http.Request, key, id string) *upload {
	h.mu.Lock()
	defer h.mu.Unlock()
	u := h.uploads[id]
	if u == nil || u.key != key {
		writeError(w, r, http.StatusNotFound, "NoSuchUpload", "The specified upload does not exist.", key)
		return nil
	}
	return u
}

func (h *handler) uploadPart(w http.ResponseWriter, r *http.Request, key string, q url.Values) {
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > 10000 {
		writeError(w, r, http.StatusBadRequest, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive", key)
		return
	}
	u := h.lookupUpload(w, r, key, q.Get("uploadId"))
	if u == nil {
		return
	}
	data, err := body(r)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	if err := h.s.request(r.Context(), kPut, key); err != nil {
		h.fail(w, r, err, key)
		return
	}
	h.mu.Lock()
	u.size += int64(len(data) - len(u.parts[n]))
	u.parts[n] = data
	big := u.size > MaxUploadBytes
	h.mu.Unlock()
	if big {
		h.fail(w, r, fmt.Errorf("%w: an upload of more than %d bytes", ErrInvalid, MaxUploadBytes), key)
		return
	}
	sum := md5.Sum(data)
	w.Header().Set("ETag", fmt.Sprintf("\"%x\"", sum))
	w.WriteHeader(http.StatusOK)
}

func (h *handler) completeUpload(w http.ResponseWriter, r *http.Request, key, id string) {
	u := h.lookupUpload(w, r, key, id)
	if u == nil {
		return
	}
	raw, err := body(r)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	var req struct {
		Parts []struct {
			PartNumber int
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(raw, &req); err != nil || len(req.Parts) == 0 {
		writeError(w, r, http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed", key)
		return
	}
	h.mu.Lock()
	var data []byte
	prev := 0
	for _, p := range req.Parts {
		part, ok := u.parts[p.PartNumber]
		if !ok || p.PartNumber <= prev {
			h.mu.Unlock()
			writeError(w, r, http.StatusBadRequest, "InvalidPart", "One or more of the specified parts could not be found.", key)
			return
		}
		prev = p.PartNumber
		data = append(data, part...)
	}
	delete(h.uploads, id)
	h.mu.Unlock()
	a, err := h.write(r.Context(), key, u.ctype, u.opts, data)
	if err != nil {
		h.fail(w, r, err, key)
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>`)
	appendXML(&b, h.name)
	b.WriteString("</Bucket><Key>")
	appendXML(&b, key)
	fmt.Fprintf(&b, "</Key><ETag>&quot;%x-%d&quot;</ETag></CompleteMultipartUploadResult>", a.MD5, len(req.Parts))
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(b.Bytes())
}

func (h *handler) abortUpload(w http.ResponseWriter, r *http.Request, key, id string) {
	if h.lookupUpload(w, r, key, id) == nil {
		return
	}
	if err := h.s.request(r.Context(), kPut, key); err != nil {
		h.fail(w, r, err, key)
		return
	}
	h.mu.Lock()
	delete(h.uploads, id)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// deleteObjects answers DeleteObjects through the store's DeleteBatch.
func (h *handler) deleteObjects(w http.ResponseWriter, r *http.Request) {
	raw, err := body(r)
	if err != nil {
		h.fail(w, r, err, "")
		return
	}
	keys, quiet, err := parseDelete(raw)
	if err != nil || len(keys) == 0 {
		writeError(w, r, http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema", "")
		return
	}
	failed, err := h.s.DeleteBatch(r.Context(), keys)
	if err != nil {
		h.fail(w, r, err, "")
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, k := range keys {
		if e := failed[k]; e != nil && !errors.Is(e, ErrNotFound) {
			b.WriteString("<Error><Key>")
			appendXML(&b, k)
			b.WriteString("</Key><Code>InternalError</Code><Message>")
			appendXML(&b, e.Error())
			b.WriteString("</Message></Error>")
		} else if !quiet {
			b.WriteString("<Deleted><Key>")
			appendXML(&b, k)
			b.WriteString("</Key></Deleted>")
		}
	}
	b.WriteString("</DeleteResult>")
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, _ = w.Write(b.Bytes())
}

// parseDelete reads a DeleteObjects document: its keys and Quiet. The
// documents the SDK writes (plain <Object><Key>…</Key></Object> elements,
// the five named entities and character references) are scanned; any
// other is left to encoding/xml.
func parseDelete(raw []byte) (keys []string, quiet bool, err error) {
	if keys, quiet, ok := scanDelete(raw); ok {
		return keys, quiet, nil
	}
	var req struct {
		Quiet   bool
		Objects []struct {
			Key string
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(raw, &req); err != nil {
		return nil, false, err
	}
	for _, o := range req.Objects {
		keys = append(keys, o.Key)
	}
	return keys, req.Quiet, nil
}

// scanDelete scans a DeleteObjects document of the SDK's shape; false if
// it is not one.
func scanDelete(raw []byte) (keys []string, quiet bool, ok bool) {
	s := string(raw)
	if strings.Contains(s, "<![CDATA[") || strings.Contains(s, "<!--") || strings.Contains(s, "<!DOCTYPE") {
		return nil, false, false
	}
	// The root: <Delete> or <Delete xmlns="…">, after an optional
	// declaration.
	if strings.HasPrefix(s, "<?xml") {
		end := strings.Index(s, "?>")
		if end < 0 {
			return nil, false, false
		}
		s = s[end+2:]
	}
	s = strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(s, "<Delete>") && !strings.HasPrefix(s, `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`) {
		return nil, false, false
	}
	s = s[strings.IndexByte(s, '>')+1:]
	for {
		switch {
		case strings.HasPrefix(s, "<Object><Key>"):
			s = s[len("<Object><Key>"):]
			end := strings.IndexByte(s, '<')
			if end < 0 || !strings.HasPrefix(s[end:], "</Key></Object>") {
				return nil, false, false
			}
			k, ok := unescapeXML(s[:end])
			if !ok {
				return nil, false, false
			}
			keys = append(keys, k)
			s = s[end+len("</Key></Object>"):]
		case strings.HasPrefix(s, "<Quiet>true</Quiet>"):
			quiet, s = true, s[len("<Quiet>true</Quiet>"):]
		case strings.HasPrefix(s, "<Quiet>false</Quiet>"):
			s = s[len("<Quiet>false</Quiet>"):]
		case strings.TrimRight(s, " \t\r\n") == "</Delete>":
			return keys, quiet, true
		default:
			return nil, false, false
		}
	}
}

// unescapeXML decodes the references of XML character data: the five
// named entities and character references; false for anything else, a
// character XML forbids, or a '\r' (which XML parsers normalise).
func unescapeXML(s string) (string, bool) {
	for _, r := range s {
		if r == utf8.RuneError || r == '\r' || r == '<' || !isXMLChar(r) {
			return "", false
		}
	}
	if strings.IndexByte(s, '&') < 0 {
		return s, true
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		end := strings.IndexByte(s, ';')
		if end < 0 {
			return "", false
		}
		ref := s[1:end]
		s = s[end+1:]
		switch ref {
		case "amp":
			b.WriteByte('&')
		case "lt":
			b.WriteByte('<')
		case "gt":
			b.WriteByte('>')
		case "quot":
			b.WriteByte('"')
		case "apos":
			b.WriteByte('\'')
		default:
			num, ok := strings.CutPrefix(ref, "#")
			if !ok || num == "" {
				return "", false
			}
			base := 10
			if x, ok := strings.CutPrefix(num, "x"); ok {
				num, base = x, 16
			}
			n, err := strconv.ParseUint(num, base, 32)
			if err != nil || num == "" || num[0] == '+' || num[0] == '-' || !isXMLChar(rune(n)) {
				return "", false
			}
			b.WriteRune(rune(n))
		}
	}
	return b.String(), true
}

// isXMLChar reports whether XML 1.0 allows r.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
