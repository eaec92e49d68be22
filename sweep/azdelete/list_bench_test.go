package azdelete

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
)

// BenchmarkListPage measures what listing costs through azureblob and the
// Azure SDK's XML decoding (issue 29: does Azure need a decoder of its own,
// as S3 has sweep/s3list?): canned 1000-blob List Blobs pages from a
// loopback server; cpu-ns/key is the whole process's CPU per key.
func BenchmarkListPage(b *testing.B) {
	var w bytes.Buffer
	w.WriteString(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://acct.blob.core.windows.net/" ContainerName="c">` +
		`<Prefix>repo/data/</Prefix><Marker>2!100!MDAwMDE</Marker><MaxResults>1000</MaxResults><Blobs>`)
	t := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		ts := t.Add(time.Duration(i) * time.Second).Format(http.TimeFormat)
		fmt.Fprintf(&w, `<Blob><Name>repo/data/g%020x/cu%032x</Name><Properties><Creation-Time>%s</Creation-Time><Last-Modified>%s</Last-Modified>`+
			`<Etag>0x8DE1234567890AB</Etag><Content-Length>%d</Content-Length><Content-Type>application/octet-stream</Content-Type>`+
			`<Content-Encoding /><Content-Language /><Content-CRC64 /><Content-MD5>XUFAKrxLKna5cZ2REBfFkg==</Content-MD5><Cache-Control /><Content-Disposition />`+
			`<BlobType>BlockBlob</BlobType><AccessTier>Hot</AccessTier><AccessTierInferred>true</AccessTierInferred><LeaseStatus>unlocked</LeaseStatus>`+
			`<LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted></Properties><OrMetadata /></Blob>`,
			i/100, uint64(i)*0x9E3779B97F4A7C15, ts, ts, 1000+i*37)
	}
	w.WriteString(`</Blobs><NextMarker>2!100!MDAwMDI</NextMarker></EnumerationResults>`)
	body := w.Bytes()
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/xml")
		rw.Header().Set("x-ms-version", "2025-01-05")
		rw.Write(body)
	}))
	defer hs.Close()
	cl, err := container.NewClientWithNoCredential(hs.URL+"/c", nil)
	if err != nil {
		b.Fatal(err)
	}
	bucket, err := azureblob.OpenBucket(context.Background(), cl, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	keys := 0
	for b.Loop() {
		objs, _, err := bucket.ListPage(context.Background(), []byte("2!100!MDAwMDE"), 1000, &blob.ListOptions{Prefix: "repo/data/"})
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
