package quarantine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/rs/xid"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// withQuarantine is the option that makes Sweep move into the quarantine.
var withQuarantine = sweep.WithMover(Mover{})

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// descendingName is a slice name as pathprovider makes it.
func descendingName(t time.Time) string {
	return xid.NewWithTime(time.Unix(layout.ReversalPoint-t.Unix(), 0)).String()
}

// objID is the i-th of a series of object names of lakeFS's shape (xids).
func objID(i int) string {
	var id xid.ID
	binary.BigEndian.PutUint32(id[:4], 0x6a000000)
	binary.BigEndian.PutUint64(id[4:], uint64(i))
	return id.String()
}

// earlyName is the i-th of a series of early linked upload names:
// "data/<earlyName>" is of lakeFS's shape.
func earlyName(i int) string {
	return fmt.Sprintf("repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/L%020d", i)
}

// flatName is the i-th of a series of top-level names of the old flat
// layout (hex of a version 4 UUID).
func flatName(i int) string { return fmt.Sprintf("0000000000004000a%015x", i) }

// writeRun writes a successful run's report by hand, as lakeFS's Spark
// client could: a summary and the candidates in one Parquet part, so that
// a report may name what Mark never marks.
func writeRun(t *testing.T, b *blob.Bucket, runID string, cutoff time.Time, candidates []string) {
	t.Helper()
	ctx := context.Background()
	dir := layout.RunPath(sweep.DefaultStoragePrefix, layout.Report, runID)
	type row struct {
		Address string `parquet:"address,plain"`
	}
	rows := make([]row, len(candidates))
	for i, c := range candidates {
		rows[i] = row{c}
	}
	var buf bytes.Buffer
	require.NoError(t, parquet.Write(&buf, rows, parquet.DataPageVersion(1)))
	require.NoError(t, b.WriteAll(ctx, dir+layout.DeletedFolder+"part-00000.parquet", buf.Bytes(), nil))
	sum, err := json.Marshal(sweep.Summary{RunID: runID, Success: true, StartTime: t0, CutoffTime: cutoff, NumDeletedObjects: int64(len(candidates))})
	require.NoError(t, err)
	require.NoError(t, b.WriteAll(ctx, dir+layout.SummaryFile, sum, nil))
}
