package s3list

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// cannedPage is a 1000-key ListObjectsV2 page as S3 sends it for a
// lakeFS namespace (about 244 KB), truncated, with a token.
func cannedPage() []byte {
	var w bytes.Buffer
	w.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.WriteString(`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bench-bucket</Name><Prefix>repo/data/</Prefix>` +
		`<ContinuationToken>1Bv0bGk9tOKEN</ContinuationToken><NextContinuationToken>1QX9z3mNEXTtoken/AbCdEf+gh==</NextContinuationToken>` +
		`<KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>`)
	t := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		fmt.Fprintf(&w, "<Contents><Key>repo/data/g%020x/cu%032x</Key><LastModified>%s</LastModified>"+
			"<ETag>&quot;%032x&quot;</ETag>"+
			"<Size>%d</Size><StorageClass>STANDARD</StorageClass></Contents>",
			i/100, uint64(i)*0x9E3779B97F4A7C15, t.Add(time.Duration(i)*time.Second).Format("2006-01-02T15:04:05.000Z"),
			uint64(i)*0xC2B2AE3D27D4EB4F, 1000+i*37)
	}
	w.WriteString("</ListBucketResult>")
	return w.Bytes()
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkListPage lists canned 1000-key pages from a loopback server:
// through s3blob and the SDK's decoder, and through Lister. cpu-ns/key is
// the whole process's CPU (the loopback server's included) per key.
func BenchmarkListPage(b *testing.B) {
	body := cannedPage()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Write(body)
	}))
	defer hs.Close()
	cl := s3.New(s3.Options{
		BaseEndpoint: aws.String(hs.URL), UsePathStyle: true, Region: "us-east-1",
		Credentials: aws.NewCredentialsCache(creds),
	})
	bucket, err := s3blob.OpenBucket(context.Background(), cl, "bkt", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	l, err := FromBucket(bucket)
	if err != nil {
		b.Fatal(err)
	}
	opts := &blob.ListOptions{Prefix: "repo/data/"}
	// The floor: the same body over the same loopback, read and dropped.
	b.Run("http-floor", func(b *testing.B) {
		runtime.GC()
		cpu0 := cpuTime()
		for b.Loop() {
			resp, err := hs.Client().Get(hs.URL)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/key")
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*1000), "cpu-ns/key")
	})
	for _, c := range []struct {
		name string
		lp   interface {
			ListPage(context.Context, []byte, int, *blob.ListOptions) ([]*blob.ListObject, []byte, error)
		}
	}{{"sdk", bucket}, {"s3list", l}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			runtime.GC() // the garbage of the runs before is not this run's CPU
			cpu0 := cpuTime()
			keys := 0
			for b.Loop() {
				objs, next, err := c.lp.ListPage(context.Background(), []byte("1Bv0bGk9tOKEN"), 1000, opts)
				if err != nil || len(objs) != 1000 || len(next) == 0 {
					b.Fatalf("%d objects, %v", len(objs), err)
				}
				keys += len(objs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/key")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(keys), "cpu-ns/key")
		})
	}
}

// BenchmarkDecode is the decoder alone on a canned page.
func BenchmarkDecode(b *testing.B) {
	body := cannedPage()
	var d Decoder
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	runtime.GC()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := d.Decode(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/key")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*1000), "cpu-ns/key")
}
