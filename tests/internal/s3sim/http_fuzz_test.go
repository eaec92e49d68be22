package s3sim

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzHTTPRequest sends the server any byte range, aws-chunked body,
// DeleteObjects document and listing query: it answers each with a status
// and never panics; a range it accepts is well-formed, and a body framed
// by chunkBody decodes to what was framed.
func FuzzHTTPRequest(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=5-", "bytes=-3", "bytes=9-2", "bytes=a-b", "items=0-1", "bytes=0-1,3-4"} {
		f.Add(s, []byte("5\r\nhello\r\n0\r\n\r\n"), "<Delete><Object><Key>a/0</Key></Object><Quiet>true</Quiet></Delete>", "prefix=a/&max-keys=2")
	}
	f.Add("", []byte("zz\r\n"), "<Delete>", "continuation-token=%%%")
	f.Add("", []byte{}, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a&amp;b&#x1F600;&lt;&#65;</Key></Object><Quiet>false</Quiet></Delete>`, "")
	f.Add("", []byte("3;chunk-signature=x\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"), "", "start-after=a/1&delimiter=/")
	store, err := New([]Slice{{Prefix: "a/", Count: 20, Name: func(i int) string { return fmt.Sprintf("%d", 10+i) }, ModTime: time.Unix(1e9, 0), Size: 10}},
		WithLatency(NoLatency), WithRates(1e12, 1e12))
	if err != nil {
		f.Fatal(err)
	}
	h := store.Handler("b")
	f.Fuzz(func(t *testing.T, rg string, chunked []byte, del, query string) {
		if first, last, err := parseRange(rg); err == nil && (last >= 0 && last < first || first < 0 && last != -1) {
			t.Fatalf("parseRange(%q) = %d, %d", rg, first, last)
		}
		if got, err := decodeChunked(chunkBody(chunked)); err != nil || !bytes.Equal(got, chunked) {
			t.Fatalf("decodeChunked(chunkBody(%q)) = %q, %v", chunked, got, err)
		}
		_, _ = decodeChunked(chunked)
		// The scan of a DeleteObjects document reads what encoding/xml
		// reads, where it reads one.
		if keys, quiet, ok := scanDelete([]byte(del)); ok {
			var req struct {
				Quiet   bool
				Objects []struct{ Key string } `xml:"Object"`
			}
			if err := xml.Unmarshal([]byte(del), &req); err != nil {
				t.Fatalf("scanDelete read %q, encoding/xml refused it: %v", del, err)
			}
			var want []string
			for _, o := range req.Objects {
				want = append(want, o.Key)
			}
			if !slices.Equal(keys, want) || quiet != req.Quiet {
				t.Fatalf("scanDelete(%q) = %q %v, encoding/xml %q %v", del, keys, quiet, want, req.Quiet)
			}
		}
		list := httptest.NewRequest(http.MethodGet, "/b", nil)
		list.URL.RawQuery = "list-type=2&" + query
		for _, r := range []*http.Request{
			httptest.NewRequest(http.MethodGet, "/b/a/12", nil),
			httptest.NewRequest(http.MethodPost, "/b?delete", strings.NewReader(del)),
			list,
			httptest.NewRequest(http.MethodPut, "/b/w", bytes.NewReader(chunked)),
		} {
			r.Header.Set("Range", rg)
			if r.Method == http.MethodPut {
				r.Header.Set("Content-Encoding", "aws-chunked")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code < 200 || w.Code > 599 {
				t.Fatalf("%s %s: status %d", r.Method, r.URL, w.Code)
			}
		}
	})
}

// chunkBody frames data in the aws-chunked encoding, in chunks of 7 bytes.
func chunkBody(data []byte) []byte {
	var b bytes.Buffer
	for len(data) > 0 {
		n := min(7, len(data))
		fmt.Fprintf(&b, "%x;chunk-signature=0\r\n", n)
		b.Write(data[:n])
		b.WriteString("\r\n")
		data = data[n:]
	}
	b.WriteString("0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n")
	return b.Bytes()
}
