package main

import (
	"context"
	"fmt"
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
	return withUnsigned(metarange.Addresses(ctx, h.bucket, h.resolved, ids,
		metarange.WithStoragePrefix(storagePrefix), metarange.WithStats(h.bar.ranges)))
}

// ranges shows the reading of the committed metadata.
func (p *progress) ranges(s metarange.Stats) {
	p.set(fmt.Sprintf("ranges: %d metaranges, %d ranges read (%d shared), %d entries, %d outside the namespace", s.MetaRanges, s.Ranges, s.SharedRanges, s.Entries, s.Outside), s.Done)
}
