package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lakefs/metarange"
)

// RangeCacheStats are what the range cache did in a run (the package
// documentation, "The range cache").
type RangeCacheStats struct {
	// Enabled is false when Options.NoRangeCache turned the cache off.
	Enabled bool `json:"enabled"`
	// Hits are the ranges served from their caches: not read from
	// lakeFS's tables.
	Hits int64 `json:"hits"`
	// Misses are the ranges read from lakeFS's tables, their caches
	// written (but for WriteErrors and ranges too large to cache, whose
	// keys take more than metarange.DefaultCacheMaxBytes).
	Misses int64 `json:"misses"`
	// Rejected, among Misses, are caches found and ignored: damaged, of
	// other settings or another format version.
	Rejected int64 `json:"rejected"`
	// WriteErrors, among Misses, are caches that could not be written.
	WriteErrors int64 `json:"write_errors"`
	// TableBytes and CacheBytes are the bytes read from tables and caches.
	TableBytes int64 `json:"table_bytes"`
	CacheBytes int64 `json:"cache_bytes"`
	// PartReads are the mark's reads of ranges' keys, as parts (the
	// package documentation, "The range cache"): each range an optimized
	// mark reads, or in a clean run every kept range, once (twice if its
	// addresses do not fit Collect's buffer: lakegc.CommittedParts).
	// PartMisses, among them, were read from lakeFS's tables: ranges not
	// cached (a cache pruned, damaged or not written).
	PartReads  int64 `json:"part_reads"`
	PartMisses int64 `json:"part_misses"`
	// Recorded is whether the run's record of the ranges it used was
	// written (its ranges' caches are kept while the run is).
	Recorded bool `json:"recorded"`
	// Pruned is what the prune of the cache removed, with KeepRuns.
	Pruned *RangeCachePrune `json:"pruned,omitempty"`
}

// RangeCachePrune is what a prune of the range cache removed.
type RangeCachePrune struct {
	// Caches and Bytes are the cache objects removed and their size.
	Caches int64 `json:"caches"`
	Bytes  int64 `json:"bytes"`
	// Records are the run records removed, of runs pruned.
	Records int64 `json:"records"`
	// Kept are the cache objects kept.
	Kept int64 `json:"kept"`
	// KeptAll, if set, says why nothing was removed: a kept run's record
	// could not be read.
	KeptAll string `json:"kept_all,omitempty"`
}

// rangeCacheOptions are the cache's options of metarange for a run.
func rangeCacheOptions() []metarange.Option {
	return []metarange.Option{metarange.WithStoragePrefix(storagePrefix), metarange.WithRangeCache()}
}

// A run record lists the range IDs a run used, one a line, between a
// header and a trailer that counts them: a record cut short does not
// parse, and a prune that cannot parse one keeps every cache.
const (
	recordHeader  = "lakegc range cache run record 1"
	recordTrailer = "end "
)

// writeRunRecord writes the record of the ranges run runID used.
func writeRunRecord(ctx context.Context, bucket *blob.Bucket, runID string, ids []string) error {
	var b bytes.Buffer
	b.WriteString(recordHeader + "\n")
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	b.WriteString(recordTrailer + strconv.Itoa(len(ids)) + "\n")
	return bucket.WriteAll(ctx, layout.RangeCacheRunKey(storagePrefix, runID), b.Bytes(), &blob.WriterOptions{ContentType: "text/plain"})
}

// maxRecordIDs bounds a run record: a run reads at most
// metarange.DefaultMaxRanges ranges (the host sets no other bound). A
// variable for the tests.
var maxRecordIDs = metarange.DefaultMaxRanges

// readRunRecord reads a run record: the range IDs it lists, at most
// maxRecordIDs (a longer record is refused: the prune keeps every cache).
func readRunRecord(ctx context.Context, bucket *blob.Bucket, key string) ([]string, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The header, the IDs and the trailer, each with its newline.
	limit := int64(len(recordHeader)+1) + (64+1)*int64(maxRecordIDs) + int64(len(recordTrailer)+len(strconv.Itoa(maxRecordIDs))+1)
	sc := bufio.NewScanner(io.LimitReader(r, limit))
	var ids []string
	if !sc.Scan() || sc.Text() != recordHeader {
		return nil, fmt.Errorf("host: run record %s: no header", key)
	}
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, recordTrailer); ok {
			if strconv.Itoa(len(ids)) != n || sc.Scan() {
				return nil, fmt.Errorf("host: run record %s: trailer %q after %d IDs", key, line, len(ids))
			}
			return ids, nil
		}
		if !isRangeID(line) {
			return nil, fmt.Errorf("host: run record %s: %q is not a range ID", key, line)
		}
		if len(ids) == maxRecordIDs {
			return nil, fmt.Errorf("host: run record %s: more than %d range IDs", key, maxRecordIDs)
		}
		ids = append(ids, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("host: run record %s: %w", key, err)
	}
	return nil, fmt.Errorf("host: run record %s: cut short", key)
}

// isRangeID reports whether s is a range ID: 64 lower-case hex digits.
func isRangeID(s string) bool {
	return len(s) == 64 && isHex(s)
}

// listed is an object of a listing.
type listed struct {
	key     string
	size    int64
	modTime time.Time
}

// listFolder lists the objects directly in a folder, or, with dirs, its
// subfolders.
func listFolder(ctx context.Context, bucket *blob.Bucket, folder string, dirs bool) ([]listed, error) {
	var out []listed
	it := bucket.List(&blob.ListOptions{Prefix: folder, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("host: list %s: %w", folder, err)
		}
		if o.IsDir == dirs {
			out = append(out, listed{key: o.Key, size: o.Size, modTime: o.ModTime})
		}
	}
}

// pruneRangeCache removes the cache objects that no kept run's record
// names, and the records of runs no longer kept. The runs kept are the
// report folders left (after lakegc's Prune); a record of a run without
// one is the record of a pruned or failed run, kept itself while younger
// than lakegc.PruneGrace (a run in progress). A cache object written
// within the grace is kept (a run in progress writes its caches before its
// record). A kept run without a record (lakeFS's Spark client's, lakegc's
// before the cache or with it off) needs no cache. A record that cannot be
// read makes it keep everything: when in doubt, keep. Removing a cache is
// never unsafe, only costly: the next run reads its range from its table.
func pruneRangeCache(ctx context.Context, bucket *blob.Bucket, now time.Time) (*RangeCachePrune, error) {
	rep := &RangeCachePrune{}
	grace := now.Add(-lakegc.PruneGrace)
	runs, err := listFolder(ctx, bucket, layout.Runs(storagePrefix, layout.Report), true)
	if err != nil {
		return rep, err
	}
	kept := map[string]bool{}
	for _, r := range runs {
		kept[strings.TrimSuffix(strings.TrimPrefix(r.key, layout.Runs(storagePrefix, layout.Report)), "/")] = true
	}
	records, err := listFolder(ctx, bucket, layout.RangeCacheRuns(storagePrefix), false)
	if err != nil {
		return rep, err
	}
	need := map[string]bool{}
	var stale []string
	for _, rec := range records {
		runID := strings.TrimPrefix(rec.key, layout.RangeCacheRuns(storagePrefix))
		if !kept[runID] && rec.modTime.Before(grace) {
			stale = append(stale, rec.key)
			continue
		}
		ids, err := readRunRecord(ctx, bucket, rec.key)
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			rep.KeptAll = err.Error()
			return rep, nil
		}
		for _, id := range ids {
			need[id] = true
		}
	}
	caches, err := listFolder(ctx, bucket, layout.RangeCache(storagePrefix), false)
	if err != nil {
		return rep, err
	}
	for _, c := range caches {
		id := strings.TrimPrefix(c.key, layout.RangeCache(storagePrefix))
		if !isRangeID(id) || need[id] || !c.modTime.Before(grace) {
			rep.Kept++
			continue
		}
		if err := bucket.Delete(ctx, c.key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return rep, fmt.Errorf("host: prune range cache: delete %s: %w", c.key, err)
		}
		rep.Caches++
		rep.Bytes += c.size
	}
	// The records last: a prune stopped midway leaves records that keep
	// more, never fewer.
	slices.Sort(stale)
	for _, k := range stale {
		if err := bucket.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return rep, fmt.Errorf("host: prune range cache: delete %s: %w", k, err)
		}
		rep.Records++
	}
	return rep, nil
}

// pruneRangeCache prunes the range cache after a run that pruned its old
// runs (Options.KeepRuns), into the run's stats. The grace is judged on
// the store's clock, as lakegc's Prune judges it.
func (h *lakeFSHost) pruneRangeCache(ctx context.Context) error {
	rep, err := pruneRangeCache(ctx, h.bucket, time.Now())
	h.cache.Pruned = rep
	if err != nil {
		return fmt.Errorf("host: prune range cache: %w", err)
	}
	h.logger.Info("lakegc: pruned the range cache", "caches", rep.Caches, "bytes", rep.Bytes, "records", rep.Records, "kept", rep.Kept, "kept_all", rep.KeptAll)
	return nil
}
