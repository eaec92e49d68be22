package s3sim

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"gocloud.dev/blob/driver"
)

// BenchmarkHTTPListPage measures the server's side of a listing page of
// 1000 lakeFS-like keys, per key: the driver's page alone (what a run
// through the driver pays too), and the page served as XML (what a run
// over HTTP adds to the process's CPU besides the client's).
func BenchmarkHTTPListPage(b *testing.B) {
	const prefix = "repo/data/gb7vt0ka0jj0q9fq7jqg/"
	store, err := New([]Slice{{Prefix: prefix, Count: 1 << 20, ModTime: time.Unix(1.7e9, 0), Size: 1 << 10}},
		WithLatency(NoLatency), WithRates(1e12, 1e12))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("driver", func(b *testing.B) {
		opts := &driver.ListOptions{Prefix: prefix, PageToken: []byte("a" + prefix + "c")}
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := (&bucket{store}).ListPaged(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/MaxKeys, "cpu-ns/key")
	})
	b.Run("http", func(b *testing.B) {
		h := store.Handler("b")
		r := httptest.NewRequest(http.MethodGet, "/b?list-type=2&prefix="+prefix+"&start-after="+prefix+"c", nil)
		var n int
		cpu0 := cpuTime()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
			n = w.Body.Len()
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/MaxKeys, "cpu-ns/key")
		b.ReportMetric(float64(n), "bytes/page")
	})
}

// BenchmarkHTTPDeleteObjects measures the server's side of a
// DeleteObjects request of 1000 live keys, per key.
func BenchmarkHTTPDeleteObjects(b *testing.B) {
	const prefix = "repo/data/gb7vt0ka0jj0q9fq7jqg/"
	store, err := New([]Slice{{Prefix: prefix, Count: 1 << 20, ModTime: time.Unix(1.7e9, 0), Size: 1 << 10}},
		WithLatency(NoLatency), WithRates(1e12, 1e12))
	if err != nil {
		b.Fatal(err)
	}
	h := store.Handler("b")
	var bodies [][]byte
	for n := range store.slices[0].Count / MaxKeys {
		var body bytes.Buffer
		body.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
		for i := range MaxKeys {
			fmt.Fprintf(&body, "<Object><Key>%s</Key></Object>", store.slices[0].key(n*MaxKeys+i))
		}
		body.WriteString("<Quiet>true</Quiet></Delete>")
		bodies = append(bodies, body.Bytes())
	}
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/b?delete", bytes.NewReader(bodies[n%len(bodies)]))
		n++
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/MaxKeys, "cpu-ns/key")
}
