package host

import (
	"context"
	"iter"

	"github.com/lakegc/lakegc/lakefs/metarange"
	"github.com/lakegc/lakegc/retention"
)

// CommittedAddresses reads the kept commits' metaranges and ranges from the
// namespace: every object they reference, with and without a linked
// object's signature.
func (h *lakeFSHost) CommittedAddresses(ctx context.Context, active []retention.ActiveCommit) iter.Seq2[string, error] {
	ids := make([]string, len(active))
	for i, a := range active {
		ids[i] = a.MetaRangeID
	}
	opts := []metarange.Option{metarange.WithStoragePrefix(storagePrefix)}
	if h.progress != nil {
		opts = append(opts, metarange.WithStats(func(s metarange.Stats) { h.progress(Progress{Kind: ProgressRanges, Ranges: s}) }))
	}
	if h.reuploads != nil {
		opts = append(opts, metarange.WithEntryStats(h.reuploads.entry))
	}
	addrs := metarange.Addresses(ctx, h.bucket, h.resolved, ids, opts...)
	return withUnsigned(func(yield func(string, error) bool) {
		for a, err := range addrs {
			if !yield(a, err) || err != nil {
				return
			}
		}
		// Every committed entry was seen: the re-upload check may judge.
		if h.reuploads != nil {
			h.reuploads.ready.Store(true)
		}
	})
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
