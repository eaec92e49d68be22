//go:build unix

package crash

import (
	"context"
	"strings"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// checkQuarantine checks a quarantine step's world. After any child: every
// candidate of the mark is at its place or in the quarantine (for the
// purge, which deletes the quarantine, none is back at its place), and a
// quarantine that still holds objects still has its record, so that a
// rerun of the purge finishes it. With finished: the step's end state —
// every candidate in the quarantine and none at its place; every one back
// and none in the quarantine; or, purged, nothing left of the quarantine.
func (c *chain) checkQuarantine(ctx context.Context, finished bool) {
	qdir := layout.QuarantinePath(lakegc.DefaultStoragePrefix, c.w.MarkRunID)
	if c.w.MarkRunID == "" || !strings.Contains(strings.Join(quarantineSteps, " "), c.step) {
		return
	}
	for k, err := range sweep.Candidates(ctx, c.bucket, lakegc.DefaultStoragePrefix, c.w.MarkRunID) {
		if err != nil {
			c.violate("candidates: %v", err)
			return
		}
		home := c.exists(ctx, k)
		moved := c.exists(ctx, layout.QuarantineKey(lakegc.DefaultStoragePrefix, c.w.MarkRunID, k))
		switch {
		case c.step == stepPurge && home:
			c.violate("the purge put candidate %s back at its place", k)
		case c.step != stepPurge && !home && !moved:
			c.violate("candidate %s lost: at neither its place nor in the quarantine", k)
		case !finished:
		case c.step == stepQuarantine && (home || !moved):
			c.violate("the sweep into the quarantine finished, but %s is at its place %v, in the quarantine %v", k, home, moved)
		case c.step == stepRestore && (!home || moved):
			c.violate("the restore finished, but %s is at its place %v, in the quarantine %v", k, home, moved)
		}
	}
	left := 0
	it := c.bucket.List(&blob.ListOptions{Prefix: qdir})
	for {
		o, err := it.Next(ctx)
		if err != nil {
			break
		}
		left++
		if strings.HasPrefix(o.Key, qdir+layout.QuarantineObjects) && !c.exists(ctx, qdir+layout.QuarantineFile) {
			c.violate("quarantine object %s without the quarantine's record: a purge would not finish it", o.Key)
		}
	}
	if finished && c.step == stepPurge && left > 0 {
		c.violate("the purge finished, but %d files of the quarantine are left", left)
	}
}
