package gcsdelete

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"
)

// BenchmarkListPage measures what listing costs through gcsblob and the
// GCS client's JSON decoding (issue 29: does GCS need a decoder of its own,
// as S3 has sweep/s3list?): canned 1000-object pages of the JSON API from a
// loopback server; cpu-ns/key is the whole process's CPU per key.
func BenchmarkListPage(b *testing.B) {
	b.Run("all-fields", func(b *testing.B) { benchList(b, false) })
	// What a SetAttrSelection of the fields a listing needs would leave.
	b.Run("selected-fields", func(b *testing.B) { benchList(b, true) })
}

func benchList(b *testing.B, selected bool) {
	var w bytes.Buffer
	w.WriteString(`{"kind":"storage#objects","nextPageToken":"CgtyZXBvL2RhdGEvZw==","items":[`)
	t := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		if i > 0 {
			w.WriteByte(',')
		}
		name := fmt.Sprintf("repo/data/g%020x/cu%032x", i/100, uint64(i)*0x9E3779B97F4A7C15)
		ts := t.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
		if selected {
			fmt.Fprintf(&w, `{"name":"%s","size":"%d","md5Hash":"XUFAKrxLKna5cZ2REBfFkg==","updated":"%s"}`, name, 1000+i*37, ts)
			continue
		}
		fmt.Fprintf(&w, `{"kind":"storage#object","id":"bkt/%s/1764590400000000","selfLink":"https://www.googleapis.com/storage/v1/b/bkt/o/%s",`+
			`"mediaLink":"https://storage.googleapis.com/download/storage/v1/b/bkt/o/%s?generation=1764590400000000&alt=media",`+
			`"name":"%s","bucket":"bkt","generation":"1764590400000000","metageneration":"1","contentType":"application/octet-stream",`+
			`"storageClass":"STANDARD","size":"%d","md5Hash":"XUFAKrxLKna5cZ2REBfFkg==","crc32c":"yZRlqg==","etag":"CICA0M3Y3ZEDEAE=",`+
			`"timeCreated":"%s","updated":"%s","timeStorageClassUpdated":"%s","timeFinalized":"%s"}`,
			name, name, name, name, 1000+i*37, ts, ts, ts, ts)
	}
	w.WriteString(`]}`)
	body := w.Bytes()
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(body)
	}))
	defer hs.Close()
	cl, err := storage.NewClient(context.Background(), option.WithEndpoint(hs.URL+"/storage/v1/"),
		option.WithoutAuthentication(), option.WithHTTPClient(hs.Client()))
	if err != nil {
		b.Fatal(err)
	}
	bucket, err := gcsblob.OpenBucket(context.Background(), nil, "bkt", &gcsblob.Options{Client: cl})
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	keys := 0
	for b.Loop() {
		objs, _, err := bucket.ListPage(context.Background(), []byte("CgtyZXBvL2RhdGEvZw=="), 1000, &blob.ListOptions{Prefix: "repo/data/"})
		if err != nil || len(objs) != 1000 {
			b.Fatalf("%d objects, %v", len(objs), err)
		}
		keys += len(objs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/key")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(keys), "cpu-ns/key")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
