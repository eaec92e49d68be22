package host_test

import (
	"bytes"
	"errors"
	"io"
	"maps"
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
	"github.com/lakegc/lakegc/sweep"
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

// candidateSet lists a run's candidates' addresses.
func candidateSet(t *testing.T, client *api.Client, bucket *blob.Bucket, o host.Options, runID string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for c, err := range host.Candidates(t.Context(), client, bucket, o, runID) {
		if err != nil {
			t.Fatal(err)
		}
		out[c.Address] = true
	}
	return out
}

// TestIntegrationOptimizedParts: on a real lakeFS, the host gives its
// committed keep set as parts, one a range. After a first GC and one more
// commit, an optimized GC reads only the ranges that commit made and those
// that left the kept set (summary: keep_source "parts-changed", parts_read
// their number), marks exactly what a clean GC of the same state marks,
// marks no live object, and still keeps a hidden staged re-upload of a
// committed object whose range did not change (the re-upload check saw
// every kept range, not only the ones the mark read).
func TestIntegrationOptimizedParts(t *testing.T) {
	s := lakefstest.Start(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-optimized-parts")
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
	repo := "/repositories/" + url.PathEscape(h.Repo)

	first := gc(o)
	used1 := runRecord(t, bucket, first.Report.RunID)
	if sum := first.Report.Mark.Summary; sum.KeepSource != sweep.KeepParts || sum.PartsRead != int64(len(used1)) {
		t.Fatalf("first run: keep_source %q, parts_read %d; want %q, %d", sum.KeepSource, sum.PartsRead, sweep.KeepParts, len(used1))
	}

	// A hidden re-upload on feature, whose HEAD's ranges the next commit
	// (on main) leaves as they are: feat/f's committed bytes again.
	var f2 []byte
	for _, obj := range h.Objects {
		if obj.Path == "feat/f" && strings.Contains(string(obj.Content), "F2") {
			f2 = obj.Content
		}
	}
	if f2 == nil {
		t.Fatal("the history has no feat/f F2")
	}
	got := s.Raw(t, http.MethodPost, repo+"/branches/feature/objects", url.Values{"path": {"feat/f"}}, "application/octet-stream", bytes.NewReader(f2))
	if got.Status != http.StatusCreated {
		t.Fatalf("re-upload: %d %s", got.Status, got.Body)
	}
	var st struct {
		PhysicalAddress string `json:"physical_address"`
	}
	s.Do(t, http.MethodGet, repo+"/refs/feature/objects/stat", url.Values{"path": {"feat/f"}}, nil, http.StatusOK, &st)
	reupload, ok := strings.CutPrefix(st.PhysicalAddress, h.AddressNamespace+"/")
	if !ok {
		t.Fatalf("re-upload at %q, outside %s", st.PhysicalAddress, h.AddressNamespace)
	}
	for _, obj := range h.Objects {
		if obj.Key == reupload {
			t.Fatalf("lakeFS staged the re-upload at the committed address %s", reupload)
		}
	}

	// One more commit on main: new ranges.
	got = s.Raw(t, http.MethodPost, repo+"/branches/main/objects", url.Values{"path": {"parts/new.txt"}}, "application/octet-stream", bytes.NewReader([]byte("new\n")))
	if got.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", got.Status, got.Body)
	}
	s.Do(t, http.MethodPost, repo+"/branches/main/commits", nil, map[string]any{"message": "parts", "date": now.Unix()}, http.StatusCreated, nil)

	o.Optimized = true
	second := gc(o)
	o.Optimized = false
	used2 := runRecord(t, bucket, second.Report.RunID)
	var changed []string
	for _, id := range used2 {
		if !slices.Contains(used1, id) {
			changed = append(changed, id)
		}
	}
	fresh := len(changed)
	for _, id := range used1 {
		if !slices.Contains(used2, id) {
			changed = append(changed, id)
		}
	}
	if fresh == 0 {
		t.Fatal("the commit made no new range")
	}
	sum := second.Report.Mark.Summary
	if sum.KeepSource != sweep.KeepPartsChanged || sum.PartsRead != int64(len(changed)) {
		t.Errorf("optimized run: keep_source %q, parts_read %d; want %q, %d (%d new ranges, %d left, of %d)",
			sum.KeepSource, sum.PartsRead, sweep.KeepPartsChanged, len(changed), fresh, len(changed)-fresh, len(used2))
	}
	if c := second.Stats.RangeCache; c.Misses != int64(fresh) || c.Hits != int64(len(used2)-fresh) || c.PartMisses != 0 {
		t.Errorf("optimized run's range cache %+v: want %d misses (the new ranges), %d hits", c, fresh, len(used2)-fresh)
	}
	t.Logf("optimized run: %d parts read of %d kept ranges (%d new, %d left); %d candidates; re-uploads kept %d",
		sum.PartsRead, len(used2), fresh, len(changed)-fresh, sum.NumDeletedObjects, second.Stats.Reuploads.Kept)

	third := gc(o) // clean, the same state
	if k := third.Report.Mark.Summary.KeepSource; k != sweep.KeepParts {
		t.Errorf("clean run: keep_source %q", k)
	}
	optimized := candidateSet(t, client, bucket, o, second.Report.RunID)
	clean := candidateSet(t, client, bucket, o, third.Report.RunID)
	if !maps.Equal(optimized, clean) {
		t.Errorf("optimized candidates %v, clean %v", slices.Sorted(maps.Keys(optimized)), slices.Sorted(maps.Keys(clean)))
	}
	if len(clean) == 0 {
		t.Error("no candidates: the history's garbage was not marked")
	}
	for _, obj := range h.Kept() {
		if optimized[obj.Key] {
			t.Errorf("the optimized run marked live %s (%s)", obj.Key, obj.Name)
		}
	}
	if optimized[reupload] || clean[reupload] {
		t.Errorf("the hidden re-upload %s was marked", reupload)
	}
	if second.Stats.Reuploads.Kept == 0 {
		t.Error("the re-upload check kept nothing: the re-upload was no candidate, the test proves nothing")
	}
}
