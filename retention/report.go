package retention

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
)

// WriteCommitsCSV writes the commits report of run runID, the file lakeFS's
// GC client reads, to <storagePrefix>/retention/gc/commits/run_id=<runID>/commits.csv
// in bucket, and returns its key. The report is a CSV file with the header
// commit_id,expired,metarange_id and the row <id>,false,<metarange> for each
// active commit, in the order of active.
//
// The report is streamed to the bucket. If ctx is canceled or a write fails,
// the upload is aborted and no object appears under the key. runID must be
// a run ID, as lakeFS's and NewRunID's are: 1 to 128 letters, digits, '-',
// '_', '.' and '=', not "." or "..".
func WriteCommitsCSV(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, active []ActiveCommit) (key string, err error) {
	if !layout.ValidRunID(runID) {
		return "", fmt.Errorf("retention: invalid run ID %q", runID)
	}
	key = layout.CommitsKey(storagePrefixOr(storagePrefix), runID)
	w, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "text/csv"})
	if err != nil {
		return "", fmt.Errorf("retention: write %s: %w", key, err)
	}
	if err := writeCommitsCSV(ctx, csv.NewWriter(w), active); err != nil {
		return "", errors.Join(fmt.Errorf("retention: write %s: %w", key, err), w.Abort())
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("retention: write %s: %w", key, err)
	}
	return key, nil
}

func writeCommitsCSV(ctx context.Context, w *csv.Writer, active []ActiveCommit) error {
	if err := w.Write([]string{"commit_id", "expired", "metarange_id"}); err != nil {
		return err
	}
	row := make([]string, 3)
	for i, c := range active {
		if i%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row[0], row[1], row[2] = c.CommitID, "false", c.MetaRangeID
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return ctx.Err()
}

// NewRunID returns a new, unique ID for a GC run started at now, made as
// lakeFS makes its run IDs. IDs descend: a run started a second or more later
// has a smaller ID. (The xid keeps 32 bits of the time, so the order holds
// until 2094, when that value wraps, as it does for lakeFS.)
func NewRunID(now time.Time) string {
	return layout.NewRunID(now)
}
