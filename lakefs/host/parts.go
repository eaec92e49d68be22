package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/metarange"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
)

// partsHost is the lakeFS host with the range cache on: its committed keep
// set is parts, one per range (lakegc.CommittedParts), so that an
// optimized mark reads only the ranges that appeared or left since the
// previous run (the package documentation, "The range cache").
type partsHost struct{ *lakeFSHost }

// CommittedParts lists the kept commits' ranges (their metaranges, read
// every run) as the parts, each opened through the range cache, and first
// reads every one of them for the re-upload check's sizes and checksums:
// the mark opens only the parts that changed, and the check must have seen
// every kept entry. That read also caches each range not cached yet, so
// the mark's own reads are cache hits; after it the run's record of the
// ranges it used is written, as CommittedAddresses writes it. The parts'
// Version is the range cache's (metarange's Cache.Version).
func (h partsHost) CommittedParts(ctx context.Context, active []retention.ActiveCommit) (*sweep.Parts, error) {
	metaRanges := make([]string, len(active))
	for i, a := range active {
		metaRanges[i] = a.MetaRangeID
	}
	ids, err := metarange.RangeIDs(ctx, h.bucket, metaRanges, metarange.WithStoragePrefix(storagePrefix))
	if err != nil {
		return nil, fmt.Errorf("host: committed ranges: %w", err)
	}
	// Two caches of the same objects: sums feeds the re-upload check,
	// keys serves the mark's parts (their sizes and checksums are
	// already in the filter).
	opts := []metarange.Option{metarange.WithStoragePrefix(storagePrefix)}
	if h.cacheMaxBytes > 0 {
		opts = append(opts, metarange.WithCacheMaxBytes(h.cacheMaxBytes))
	}
	sums, err := metarange.NewCache(h.bucket, h.resolved, append(opts, metarange.WithEntryStats(h.reuploads.entry))...)
	if err != nil {
		return nil, fmt.Errorf("host: range cache: %w", err)
	}
	keys, err := metarange.NewCache(h.bucket, h.resolved, opts...)
	if err != nil {
		return nil, fmt.Errorf("host: range cache: %w", err)
	}
	h.parts = keys
	entries, err := h.readEntryStats(ctx, sums, ids)
	h.sumStats = sums.Stats()
	h.rangeStats(h.partsStats())
	if err != nil {
		switch {
		case errors.Is(err, metarange.ErrNamespaceMismatch):
			err = fmt.Errorf("%w: %w", lakegc.ErrNamespaceMismatch, err)
		case errors.Is(err, metarange.ErrLimit):
			// A range too large to be a part: say how to run at all.
			err = fmt.Errorf("%w (with Options.NoRangeCache, the command's --no-range-cache, such a range is read from its table every run)", err)
		}
		return nil, fmt.Errorf("host: committed ranges: %w", err)
	}
	if h.runID != "" && !strings.ContainsAny(h.runID, "/\n") {
		if err := writeRunRecord(ctx, h.bucket, h.runID, ids); err != nil {
			h.logger.Warn("lakegc: range cache: the run's record was not written", "run_id", h.runID, "error", err)
		} else {
			h.cache.Recorded = true
		}
	}
	// Every kept entry was seen: the re-upload check may judge.
	h.reuploads.entries.Store(entries)
	h.reuploads.ready.Store(true)
	// A range ID names the same keys only under the same rules and
	// settings (the namespace as resolved, the storage prefix, the
	// derivation's version): the parts' Version is the cache's, so that a
	// run after any of them changed counts every range again. The cache
	// reads at most DefaultConcurrency ranges at once: the mark may read as
	// many parts.
	return &sweep.Parts{IDs: ids, Version: keys.Version(), ReadAhead: metarange.DefaultConcurrency, Open: func(ctx context.Context, id string) iter.Seq2[string, error] {
		return keys.Open(ctx, id)
	}}, nil
}

// readEntryStats reads the sizes and checksums of every range of ids
// (metarange.Cache.ReadEntryStats), several at once, and returns their
// number of entries.
func (h partsHost) readEntryStats(ctx context.Context, sums *metarange.Cache, ids []string) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, entries atomic.Int64
		wg            sync.WaitGroup
		once          sync.Once
		first         error
	)
	for range min(metarange.DefaultConcurrency, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				n, err := sums.ReadEntryStats(ctx, ids[i])
				if err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				entries.Add(n)
				if h.progress != nil {
					h.progress(Progress{Kind: ProgressRanges, Ranges: sums.Stats()})
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return entries.Load(), first
}

// partsStats are the range cache's stats of a run with parts: the read
// of every kept range for the re-upload check (each once: its hits and
// misses), and the bytes the mark's reads of parts added.
func (h *lakeFSHost) partsStats() metarange.Stats {
	s := h.sumStats
	if h.parts != nil {
		p := h.parts.Stats()
		s.Bytes += p.Bytes
		s.Cache.Bytes += p.Cache.Bytes
		h.cache.PartReads = p.Ranges
		h.cache.PartMisses = p.Cache.Misses
	}
	return s
}
