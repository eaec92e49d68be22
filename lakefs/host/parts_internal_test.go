package host

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/metarange"
	"github.com/lakegc/lakegc/retention"
)

// The tables of metarange's examples: two metaranges of a real lakeFS's
// repository at s3://bucket/repo, sharing ranges.
const (
	partsNamespace  = "s3://bucket/repo"
	partsMetaRange1 = "f421745fedfb855e9f79f5f9db481b6b515827ba7213c837e64e29ce5226fe9f"
	partsMetaRange2 = "1f53950d5f7c75705f30f88eade7d1db72a9617e2c4d7a4da56ca57c1254e548"
)

// partsBucket is a namespace in memory holding metarange's example tables.
func partsBucket(t *testing.T) *blob.Bucket {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	tables, err := filepath.Glob("../metarange/testdata/namespace/_lakefs/*")
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables: %v (%d)", err, len(tables))
	}
	for _, name := range tables {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteAll(t.Context(), "_lakefs/"+filepath.Base(name), data, nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func partsTestHost(b *blob.Bucket, noCache bool) *lakeFSHost {
	return &lakeFSHost{bucket: b, resolved: partsNamespace, logger: slog.New(slog.DiscardHandler),
		reuploads: newReuploads(b, 1<<20, 4), noRangeCache: noCache, cache: &RangeCacheStats{Enabled: !noCache},
		runID: "run1"}
}

// rangeEntries reads every entry of the given ranges from their tables.
func rangeEntries(t *testing.T, b *blob.Bucket, ids []string) []metarange.Entry {
	t.Helper()
	var out []metarange.Entry
	for _, id := range ids {
		data, err := b.ReadAll(t.Context(), "_lakefs/"+id)
		if err != nil {
			t.Fatal(err)
		}
		for e, err := range metarange.Entries(bytes.NewReader(data), int64(len(data))) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// TestCommittedParts: the host's parts are the kept commits' ranges, each
// strictly ascending, and together hold exactly the keys CommittedAddresses
// yields without the cache; and before the mark opens any part, the
// re-upload check has seen every kept entry's size and checksum — in the
// first run, which reads every range from its table, and in the next, whose
// ranges are all cached and of which an optimized mark would open none.
func TestCommittedParts(t *testing.T) {
	ctx := t.Context()
	b := partsBucket(t)
	active := []retention.ActiveCommit{{CommitID: "c1", MetaRangeID: partsMetaRange1}, {CommitID: "c2", MetaRangeID: partsMetaRange2}}

	flat := partsTestHost(b, true)
	var want []string
	for a, err := range flat.CommittedAddresses(ctx, active) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, a)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if len(want) == 0 {
		t.Fatal("no committed addresses")
	}

	for run := 1; run <= 2; run++ {
		h := partsTestHost(b, false)
		parts, err := partsHost{h}.CommittedParts(ctx, active)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := metarange.RangeIDs(ctx, b, []string{partsMetaRange1, partsMetaRange2})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(parts.IDs, ids) {
			t.Fatalf("run %d: parts %q, ranges %q", run, parts.IDs, ids)
		}
		// No part opened yet: the filter holds every kept entry.
		entries := rangeEntries(t, b, ids)
		for _, e := range entries {
			f := h.reuploads.filter
			sum, ok := comparableChecksum(e.ETag)
			if !f.has(keySize, e.Size, nil) || ok && !f.has(keySum, e.Size, []byte(sum)) || !ok && !f.has(keyAnySum, e.Size, nil) {
				t.Fatalf("run %d: entry %s (%d bytes, %q) not in the re-upload filter", run, e.Path, e.Size, e.ETag)
			}
		}
		if !h.reuploads.ready.Load() || h.reuploads.entries.Load() != int64(len(entries)) {
			t.Fatalf("run %d: ready %v, %d entries, want %d", run, h.reuploads.ready.Load(), h.reuploads.entries.Load(), len(entries))
		}
		c := h.cache
		if run == 1 && (c.Misses != int64(len(ids)) || c.Hits != 0) || run == 2 && (c.Hits != int64(len(ids)) || c.Misses != 0) || !c.Recorded {
			t.Errorf("run %d: range cache %+v for %d ranges", run, c, len(ids))
		}
		if rec, err := readRunRecord(ctx, b, layout.RangeCacheRunKey(storagePrefix, "run1")); err != nil || !slices.Equal(rec, ids) {
			t.Errorf("run %d: run record %q, %v", run, rec, err)
		}

		var got []string
		for _, id := range parts.IDs {
			var part []string
			for k, err := range parts.Open(ctx, id) {
				if err != nil {
					t.Fatal(err)
				}
				if len(part) > 0 && part[len(part)-1] >= k {
					t.Fatalf("part %s: %q before %q", id, part[len(part)-1], k)
				}
				part = append(part, k)
			}
			got = append(got, part...)
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: the parts hold %d keys, CommittedAddresses %d", run, len(got), len(want))
		}
		h.rangeStats(h.partsStats())
		if c.PartReads != int64(len(ids)) || c.PartMisses != 0 {
			t.Errorf("run %d: part reads %d, misses %d; want %d, 0", run, c.PartReads, c.PartMisses, len(ids))
		}
		// The mark may read ReadAhead parts at once: every part read from
		// its own goroutine, all at once, yields what it yields alone.
		if parts.ReadAhead <= 1 {
			t.Fatalf("run %d: the parts' ReadAhead is %d", run, parts.ReadAhead)
		}
		var wg sync.WaitGroup
		concurrent := make([][]string, len(parts.IDs))
		errs := make([]error, len(parts.IDs))
		for i, id := range parts.IDs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k, err := range parts.Open(ctx, id) {
					if err != nil {
						errs[i] = err
						return
					}
					concurrent[i] = append(concurrent[i], k)
				}
			}()
		}
		wg.Wait()
		var all []string
		for i, keys := range concurrent {
			if errs[i] != nil {
				t.Fatalf("run %d: part %s read concurrently: %v", run, parts.IDs[i], errs[i])
			}
			all = append(all, keys...)
		}
		slices.Sort(all)
		if all = slices.Compact(all); !slices.Equal(all, want) {
			t.Fatalf("run %d: the parts read at once hold %d keys, CommittedAddresses %d", run, len(all), len(want))
		}
	}
}

// TestCommittedPartsFails: a range that cannot be read fails the parts
// (never a part taken as empty, never a re-upload check on a partial
// filter).
func TestCommittedPartsFails(t *testing.T) {
	ctx := context.Background()
	b := partsBucket(t)
	ids, err := metarange.RangeIDs(ctx, b, []string{partsMetaRange1})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "_lakefs/"+ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	h := partsTestHost(b, false)
	if _, err := (partsHost{h}).CommittedParts(ctx, []retention.ActiveCommit{{CommitID: "c1", MetaRangeID: partsMetaRange1}}); err == nil {
		t.Fatal("a missing range: no error")
	}
	if h.reuploads.ready.Load() {
		t.Error("the re-upload check is ready after a failed read")
	}
	if err := h.reuploads.check(ctx, []string{"x"}, []bool{false}); err == nil {
		t.Error("the re-upload check judged on a partial filter")
	}
}

// TestCommittedPartsMismatch: a full address naming the namespace in
// another spelling stops the parts with lakegc.ErrNamespaceMismatch before
// the mark, whether its range was cached under the right spelling or not
// (a cache of other settings is never trusted).
func TestCommittedPartsMismatch(t *testing.T) {
	b := partsBucket(t)
	active := []retention.ActiveCommit{{CommitID: "c1", MetaRangeID: partsMetaRange1}, {CommitID: "c2", MetaRangeID: partsMetaRange2}}
	for run := range 2 {
		h := partsTestHost(b, false)
		h.resolved = "s3://bucket//repo" // the tables' addresses say s3://bucket/repo
		_, err := partsHost{h}.CommittedParts(t.Context(), active)
		if !errors.Is(err, lakegc.ErrNamespaceMismatch) {
			t.Errorf("run %d: %v, want lakegc.ErrNamespaceMismatch", run, err)
		}
		if h.reuploads.ready.Load() {
			t.Errorf("run %d: the re-upload check is ready", run)
		}
		// Cache every range under the right spelling.
		if _, err := (partsHost{partsTestHost(b, false)}).CommittedParts(t.Context(), active); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCommittedPartsTooLarge: a range whose keys are over the range
// cache's bound cannot be a part: the parts fail before the mark, with
// metarange.ErrLimit and a word on Options.NoRangeCache, and the re-upload
// check is not ready; without the cache the same range is read as usual.
func TestCommittedPartsTooLarge(t *testing.T) {
	b := partsBucket(t)
	active := []retention.ActiveCommit{{CommitID: "c1", MetaRangeID: partsMetaRange1}}
	h := partsTestHost(b, false)
	h.cacheMaxBytes = 64
	_, err := partsHost{h}.CommittedParts(t.Context(), active)
	if !errors.Is(err, metarange.ErrLimit) || !strings.Contains(err.Error(), "NoRangeCache") {
		t.Fatalf("%v, want metarange.ErrLimit naming NoRangeCache", err)
	}
	if h.reuploads.ready.Load() {
		t.Error("the re-upload check is ready")
	}
	for _, err := range partsTestHost(b, true).CommittedAddresses(t.Context(), active) {
		if err != nil {
			t.Fatalf("without the cache: %v", err)
		}
	}
}

// TestCommittedPartsVersion: the parts' Version follows every setting a
// range's keys depend on — here the namespace as resolved (another
// BlockstorePath or spelling) — and stays for the same settings, so a
// run after a change counts every range again (sweep.Parts.Version)
// instead of trusting what an unchanged range ID contributed.
func TestCommittedPartsVersion(t *testing.T) {
	b := partsBucket(t)
	active := []retention.ActiveCommit{{CommitID: "c1", MetaRangeID: partsMetaRange1}}
	version := func(resolved string) string {
		t.Helper()
		h := partsTestHost(b, false)
		h.resolved = resolved
		parts, err := partsHost{h}.CommittedParts(t.Context(), active)
		if err != nil {
			t.Fatal(err)
		}
		if parts.Version == "" {
			t.Fatal("parts without a Version")
		}
		return parts.Version
	}
	v := version(partsNamespace)
	if again := version(partsNamespace); again != v {
		t.Errorf("the same settings, another Version: %q, %q", v, again)
	}
	if other := version(partsNamespace + "/"); other == v {
		t.Errorf("namespace %q/ has the Version of %q", partsNamespace, partsNamespace)
	}
}
