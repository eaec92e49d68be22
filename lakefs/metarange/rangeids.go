package metarange

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"
)

// RangeIDs returns the distinct IDs of the ranges the given metaranges
// list, sorted: the parts of a mark's committed input, each opened with
// Cache.Open. Metaranges are small and are read every run, WithConcurrency
// at a time (each at most WithMaxFileSize bytes); an empty metarange ID
// lists nothing. More than WithMaxRanges distinct ranges is ErrLimit; a
// missing or corrupt metarange is an error, never skipped. Of the options,
// WithStoragePrefix, WithConcurrency, WithMaxFileSize and WithMaxRanges
// apply.
func RangeIDs(ctx context.Context, bucket *blob.Bucket, metaRangeIDs []string, opts ...Option) ([]string, error) {
	// The namespace does not matter here: any valid one.
	r, err := newRun(bucket, "s3://bucket/ns", metaRangeIDs, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.cancel = cancel
	var (
		mu    sync.Mutex
		ids   []id
		next  atomic.Int64
		wg    sync.WaitGroup
		first error
		once  sync.Once
	)
	for range min(r.cfg.concurrency, len(r.metaRanges)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(r.metaRanges); i = int(next.Add(1) - 1) {
				fresh, err := r.readMetaRange(ctx, r.metaRanges[i])
				if err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				mu.Lock()
				ids = append(ids, fresh...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if ctx.Err() != nil {
		return nil, stopped(ctx)
	}
	out := make([]string, len(ids))
	for i, v := range ids {
		out[i] = v.String()
	}
	slices.Sort(out)
	return out, nil
}
