package host_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
)

// cacheObjects lists the range cache's objects: range ID → modification
// time and size, as a fingerprint of when each was written.
func cacheObjects(t *testing.T, bucket *blob.Bucket) map[string]string {
	t.Helper()
	out := map[string]string{}
	it := bucket.List(&blob.ListOptions{Prefix: layout.RangeCache("_lakefs"), Delimiter: "/"})
	for {
		o, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !o.IsDir {
			out[strings.TrimPrefix(o.Key, layout.RangeCache("_lakefs"))] = o.ModTime.String() + "/" + string(rune(o.Size))
		}
	}
}

// runRecord reads the IDs of the ranges a run used from its record.
func runRecord(t *testing.T, bucket *blob.Bucket, runID string) []string {
	t.Helper()
	b, err := bucket.ReadAll(t.Context(), layout.RangeCacheRunKey("_lakefs", runID))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[1 : len(lines)-1]
}

// TestIntegrationRangeCache: on a real lakeFS, a repository's first GC
// reads every kept range from lakeFS's tables and caches it; after one more
// commit, the second GC reads from lakeFS's storage exactly the ranges
// that commit made (their caches are the ones written again), serves
// every other one from its cache, and marks the same garbage as a run
// without the cache.
func TestIntegrationRangeCache(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-range-cache")
	client, err := api.New(s.Endpoint, s.AccessKeyID, s.SecretAccessKey)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := host.OpenNamespace(t.Context(), h.Namespace, s.BlockstorePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	now := h.Built.Add(3 * 24 * time.Hour)
	o := host.Options{Repository: h.Repo, BlockstorePath: s.BlockstorePath, Clock: func() time.Time { return now }}
	gc := func(o host.Options) *host.Result {
		t.Helper()
		res, err := host.Collect(t.Context(), client, bucket, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	first := gc(o)
	c1 := first.Stats.RangeCache
	if c1 == nil || !c1.Enabled || c1.Hits != 0 || c1.Misses == 0 || c1.Rejected+c1.WriteErrors != 0 || !c1.Recorded {
		t.Fatalf("first run's range cache %+v", c1)
	}
	used1 := runRecord(t, bucket, first.Report.RunID)
	if int64(len(used1)) != c1.Misses {
		t.Errorf("first run: %d ranges recorded, %d read", len(used1), c1.Misses)
	}
	before := cacheObjects(t, bucket)
	if len(before) != len(used1) {
		t.Errorf("%d caches for %d ranges", len(before), len(used1))
	}

	// One more commit on main: a new object, so new ranges.
	time.Sleep(10 * time.Millisecond) // apart from the first caches' times
	got := s.Raw(t, http.MethodPost, "/repositories/"+url.PathEscape(h.Repo)+"/branches/main/objects",
		url.Values{"path": {"range-cache/new.txt"}}, "application/octet-stream", bytes.NewReader([]byte("new\n")))
	if got.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", got.Status, got.Body)
	}
	s.Do(t, http.MethodPost, "/repositories/"+url.PathEscape(h.Repo)+"/branches/main/commits", nil,
		map[string]any{"message": "range cache", "date": now.Unix()}, http.StatusCreated, nil)

	second := gc(o)
	c2 := second.Stats.RangeCache
	used2 := runRecord(t, bucket, second.Report.RunID)
	var fresh []string
	for _, id := range used2 {
		if !slices.Contains(used1, id) {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) == 0 {
		t.Fatal("the commit made no new range")
	}
	if c2.Misses != int64(len(fresh)) || c2.Hits != int64(len(used2)-len(fresh)) || c2.Rejected+c2.WriteErrors != 0 {
		t.Errorf("second run's range cache %+v: want %d misses (the new ranges), %d hits", c2, len(fresh), len(used2)-len(fresh))
	}
	// The caches written by the second run are exactly the new ranges':
	// the ranges it read from lakeFS's tables.
	var written []string
	for id, fp := range cacheObjects(t, bucket) {
		if before[id] != fp {
			written = append(written, id)
		}
	}
	slices.Sort(written)
	slices.Sort(fresh)
	if !slices.Equal(written, fresh) {
		t.Errorf("caches written by the second run %q, new ranges %q", written, fresh)
	}

	t.Logf("first run: %d ranges read from tables; second: %d new ranges read, %d from caches", c1.Misses, c2.Misses, c2.Hits)

	// The same mark without the cache.
	o.NoRangeCache = true
	third := gc(o)
	if c := third.Stats.RangeCache; c.Enabled || c.Hits+c.Misses != 0 {
		t.Errorf("NoRangeCache: %+v", c)
	}
	if a, b := second.Report.Mark.Summary.NumDeletedObjects, third.Report.Mark.Summary.NumDeletedObjects; a != b || a != int64(len(h.Garbage())) {
		t.Errorf("garbage with the cache %d, without %d, want %d", a, b, len(h.Garbage()))
	}
	if second.Stats.Reuploads.CommittedEntries != third.Stats.Reuploads.CommittedEntries {
		t.Errorf("committed entries with the cache %d, without %d", second.Stats.Reuploads.CommittedEntries, third.Stats.Reuploads.CommittedEntries)
	}
}
