package inventory

import (
	"context"
	"testing"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
)

// benchRows are rows of a namespace's slices, as lakeFS names its objects.
func benchRows(n int) []s3Row {
	rows := make([]s3Row, n)
	mod := testNow.Add(-72 * time.Hour).Truncate(time.Second)
	slice := layout.DescendingID(mod).String()
	for i := range rows {
		if i%10000 == 0 {
			slice = layout.DescendingID(mod.Add(time.Duration(i) * time.Second)).String()
		}
		rows[i] = s3Row{Key: "ns/data/" + slice + "/" + xid.NewWithTime(mod).String(), Size: 1 << 20, Mod: mod}
	}
	return rows
}

// The CPU per row of reading a report: ns/row is the figure.
func benchRead(b *testing.B, format string) {
	const n = 200_000
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	mkey := writeS3(b, bucket, "", s3Report{Source: "src", Time: testNow.Add(-time.Hour), Format: format, Files: 2, Rows: benchRows(n)})
	r, err := OpenS3(ctx, bucket, mkey, "s3://src/ns", WithClock(func() time.Time { return testNow }), WithTempDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		rows := 0
		for _, err := range r.Objects(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		if rows != n {
			b.Fatalf("%d rows", rows)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

func BenchmarkReadCSV(b *testing.B)     { benchRead(b, "CSV") }
func BenchmarkReadParquet(b *testing.B) { benchRead(b, "Parquet") }
