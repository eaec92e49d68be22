package host

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/lakegc/lakegc/lakefs/metarange"
	"github.com/lakegc/lakegc/retention"
)

// CommittedAddresses reads the kept commits' metaranges and ranges from the
// namespace: every object they reference, with and without a linked
// object's signature. Collect reads it with Options.NoRangeCache; with the
// cache on, Collect reads the host's parts instead (partsHost), and this
// method is still the host's for other callers: each range is then read
// through the range cache, and once every range was read the run's record
// of the ranges it used is written (a failure to write it is logged: it
// only lets a prune remove those caches).
func (h *lakeFSHost) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	ids := make([]string, len(active))
	for i, a := range active {
		ids[i] = a.MetaRangeID
	}
	opts := []metarange.Option{metarange.WithStoragePrefix(storagePrefix)}
	var (
		mu     sync.Mutex
		ranges []string
		last   metarange.Stats
	)
	if !h.noRangeCache {
		opts = append(rangeCacheOptions(), metarange.WithRangeIDs(func(id string) {
			mu.Lock()
			ranges = append(ranges, id)
			mu.Unlock()
		}))
	}
	opts = append(opts, metarange.WithStats(func(s metarange.Stats) {
		last = s
		if h.progress != nil {
			h.progress(Progress{Kind: ProgressRanges, Ranges: s})
		}
	}))
	if h.reuploads != nil {
		opts = append(opts, metarange.WithEntryStats(h.reuploads.entry))
	}
	addrs := metarange.Addresses(ctx, h.bucket, h.resolved, ids, opts...)
	return withUnsigned(func(yield func(string, error) bool) {
		defer func() { h.rangeStats(last) }()
		for a, err := range addrs {
			if !yield(a, err) || err != nil {
				return
			}
		}
		if !h.noRangeCache && h.runID != "" && !strings.ContainsAny(h.runID, "/\n") {
			slices.Sort(ranges)
			if err := writeRunRecord(ctx, h.bucket, h.runID, ranges); err != nil {
				h.logger.Warn("lakegc: range cache: the run's record was not written", "run_id", h.runID, "error", err)
			} else if h.cache != nil {
				h.cache.Recorded = true
			}
		}
		// Every committed entry was seen: the re-upload check may judge.
		if h.reuploads != nil {
			// Every entry of the ranges read, from tables or caches (a
			// cache gives each distinct size and checksum once).
			h.reuploads.entries.Store(last.Entries)
			h.reuploads.ready.Store(true)
		}
	})
}

// rangeStats records the range cache's part of the reading's stats.
func (h *lakeFSHost) rangeStats(s metarange.Stats) {
	if h.cache == nil {
		return
	}
	h.cache.Hits, h.cache.Misses, h.cache.Rejected = s.Cache.Hits, s.Cache.Misses, s.Cache.Rejected
	h.cache.WriteErrors, h.cache.TableBytes, h.cache.CacheBytes = s.Cache.WriteErrors, s.Bytes, s.Cache.Bytes
}

// Tags yields the repository's tags through lakeFS's API (retention.Tags).
func (h *lakeFSHost) Tags(ctx context.Context) iter.Seq2[retention.Tag, error] {
	return func(yield func(retention.Tag, error) bool) {
		for r, err := range h.client.ListTags(ctx, h.repo) {
			if !yield(retention.Tag{ID: r.ID, CommitID: r.CommitID}, lakeFSError(err)) || err != nil {
				return
			}
		}
	}
}
