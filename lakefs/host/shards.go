package host

import (
	"context"
	"fmt"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/sweep"
)

// ShardsSummary is the combined summary of the runs of one sharded mark,
// shards 0 to Shards-1 (the package documentation, "Shards").
type ShardsSummary struct {
	// Shards is the shard count; RunIDs the shards' runs, by shard index.
	Shards int      `json:"shards"`
	RunIDs []string `json:"run_ids"`
	// The sums of the shards' summary counts (sweep.Summary): candidates,
	// objects kept for their age, kept as live, unrecognized (and their
	// bytes), kept in other repositories' folders, and slices listed.
	NumDeletedObjects      int64 `json:"num_deleted_objects"`
	NumYoungObjects        int64 `json:"num_young_objects"`
	NumKeptObjects         int64 `json:"num_kept_objects"`
	NumUnrecognizedObjects int64 `json:"num_unrecognized_objects"`
	UnrecognizedBytes      int64 `json:"unrecognized_bytes"`
	NumWalledObjects       int64 `json:"num_walled_objects"`
	SlicesListed           int64 `json:"slices_listed"`
	// FirstCutoff and LastCutoff are the earliest and the latest of the
	// shards' cutoffs: each shard is its own run, with its own.
	FirstCutoff time.Time `json:"first_cutoff"`
	LastCutoff  time.Time `json:"last_cutoff"`
}

// CombineShards reads the summary of each run in runIDs from bucket, the
// storage namespace opened at its root, and combines them. The runs must be
// the whole of one sharded mark: each a successful run of the same shard
// count n, shards 0 to n-1 each exactly once, in any order; anything else
// (a shard missing or twice, an unsharded run, a failed one) is an error
// wrapping ErrInvalidInput, so a combined summary always covers the whole
// namespace. A run without a summary is sweep.ErrNoRun.
func CombineShards(ctx context.Context, bucket *blob.Bucket, runIDs ...string) (*ShardsSummary, error) {
	sums := make([]*sweep.Summary, 0, len(runIDs))
	for _, id := range runIDs {
		s, err := sweep.ReadSummary(ctx, bucket, storagePrefix, id)
		if err != nil {
			return nil, fmt.Errorf("host: shard run %s: %w", id, err)
		}
		sums = append(sums, s)
	}
	return combineShards(sums)
}

// combineShards combines the summaries of the shards of one mark.
func combineShards(sums []*sweep.Summary) (*ShardsSummary, error) {
	if len(sums) == 0 {
		return nil, fmt.Errorf("%w: no shard runs", ErrInvalidInput)
	}
	n := sums[0].ShardCount
	if n < 2 {
		return nil, fmt.Errorf("%w: run %s is not a shard (shard count %d)", ErrInvalidInput, sums[0].RunID, n)
	}
	out := &ShardsSummary{Shards: n, RunIDs: make([]string, n)}
	for _, s := range sums {
		switch {
		case !s.Success:
			return nil, fmt.Errorf("%w: shard run %s did not succeed", ErrInvalidInput, s.RunID)
		case s.ShardCount != n:
			return nil, fmt.Errorf("%w: run %s is shard %d of %d, run %s of %d", ErrInvalidInput, s.RunID, s.ShardIndex, s.ShardCount, sums[0].RunID, n)
		case s.ShardIndex < 0 || s.ShardIndex >= n:
			return nil, fmt.Errorf("%w: run %s is shard %d of %d", ErrInvalidInput, s.RunID, s.ShardIndex, n)
		case out.RunIDs[s.ShardIndex] != "":
			return nil, fmt.Errorf("%w: runs %s and %s are both shard %d of %d", ErrInvalidInput, out.RunIDs[s.ShardIndex], s.RunID, s.ShardIndex, n)
		}
		out.RunIDs[s.ShardIndex] = s.RunID
		out.NumDeletedObjects += s.NumDeletedObjects
		out.NumYoungObjects += s.NumYoungObjects
		out.NumKeptObjects += s.NumKeptObjects
		out.NumUnrecognizedObjects += s.NumUnrecognizedObjects
		out.UnrecognizedBytes += s.UnrecognizedBytes
		out.NumWalledObjects += s.NumWalledObjects
		out.SlicesListed += s.SlicesListed
		if out.FirstCutoff.IsZero() || s.CutoffTime.Before(out.FirstCutoff) {
			out.FirstCutoff = s.CutoffTime
		}
		if s.CutoffTime.After(out.LastCutoff) {
			out.LastCutoff = s.CutoffTime
		}
	}
	for i, id := range out.RunIDs {
		if id == "" {
			return nil, fmt.Errorf("%w: shard %d of %d is missing", ErrInvalidInput, i, n)
		}
	}
	return out, nil
}
