package s3sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkHTTPListPage measures the server's side of a listing page of
// 1000 lakeFS-like keys (the store's cursor, the XML), per key: what a run
// over HTTP adds to the process's CPU besides the client's.
func BenchmarkHTTPListPage(b *testing.B) {
	store, err := New([]Slice{{Prefix: "repo/data/gb7vt0ka0jj0q9fq7jqg/", Count: 1 << 20, ModTime: time.Unix(1.7e9, 0), Size: 1 << 10}},
		WithLatency(NoLatency), WithRates(1e12, 1e12))
	if err != nil {
		b.Fatal(err)
	}
	h := store.Handler("b")
	r := httptest.NewRequest(http.MethodGet, "/b?list-type=2&prefix=repo/data/gb7vt0ka0jj0q9fq7jqg/&start-after=repo/data/gb7vt0ka0jj0q9fq7jqg/c", nil)
	var n int
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
		n = w.Body.Len()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/MaxKeys, "ns/key")
	b.ReportMetric(float64(n), "bytes/page")
}
