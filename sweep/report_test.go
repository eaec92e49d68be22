package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// sparkRow is the shape of the rows Spark writes: a nullable string column
// and, for the test, an extra column readers must ignore.
type sparkRow struct {
	Extra   int64   `parquet:"extra"`
	Address *string `parquet:"address,optional,snappy"`
}

// TestCandidatesSparkReport reads a deleted/ folder shaped as Spark writes
// it: several part files (v2 pages, default encodings, an optional column),
// a _SUCCESS marker and .crc checksums.
func TestCandidatesSparkReport(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	dir := reportDir(DefaultStoragePrefix, "0f3c8b1e-spark") + "deleted/"
	var want []string
	for part := range 3 {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[sparkRow](&buf, parquet.MaxRowsPerRowGroup(7))
		for i := range 20 * part {
			a := fmt.Sprintf("data/slice%d/obj-%03d-é", part, i)
			row := sparkRow{Extra: int64(i), Address: &a}
			if i%9 == 4 {
				row.Address = nil // a null address is skipped
			} else {
				want = append(want, a)
			}
			_, err := w.Write([]sparkRow{row})
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		name := fmt.Sprintf("part-%05d-9f1b-c000.snappy.parquet", part)
		require.NoError(t, b.WriteAll(ctx, dir+name, buf.Bytes(), nil))
		require.NoError(t, b.WriteAll(ctx, dir+"."+name+".crc", []byte("crc"), nil))
	}
	require.NoError(t, b.WriteAll(ctx, dir+"_SUCCESS", nil, nil))
	require.NoError(t, b.WriteAll(ctx, dir+"_temporary/0/part-x.parquet", []byte("junk"), nil))
	slices.Sort(want)
	require.Equal(t, want, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "0f3c8b1e-spark")))
}

func TestCandidatesRejectsBadParts(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	dir := reportDir(DefaultStoragePrefix, "r") + "deleted/"
	require.NoError(t, b.WriteAll(ctx, dir+"part-0", []byte("not parquet at all"), nil))
	var errs int
	for _, err := range Candidates(ctx, b, DefaultStoragePrefix, "r") {
		require.ErrorIs(t, err, ErrInvalidInput)
		errs++
	}
	require.Equal(t, 1, errs)

	var buf bytes.Buffer
	type wrong struct {
		Path string `parquet:"path"`
	}
	w := parquet.NewGenericWriter[wrong](&buf)
	_, err := w.Write([]wrong{{"data/x"}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, b.WriteAll(ctx, dir+"part-0", buf.Bytes(), nil))
	for _, err := range Candidates(ctx, b, DefaultStoragePrefix, "r") {
		require.ErrorIs(t, err, ErrInvalidInput)
	}
}

// TestReportFormat checks what a Spark reader relies on: one UTF8 column
// "address", PLAIN encoded, in v1 data pages; and summary.json's shape.
func TestReportFormat(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 30)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	dir := reportDir(DefaultStoragePrefix, "run1")
	data, err := b.ReadAll(ctx, dir+"deleted/"+partName)
	require.NoError(t, err)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.Equal(t, int64(len(keys)), f.NumRows())
	require.Len(t, f.Schema().Fields(), 1)
	field := f.Schema().Fields()[0]
	require.Equal(t, "address", field.Name())
	require.Equal(t, "STRING", field.Type().LogicalType().String())
	for _, rg := range f.Metadata().RowGroups {
		for _, col := range rg.Columns {
			require.NotContains(t, fmt.Sprint(col.MetaData.Encoding), "DELTA")
			require.Contains(t, fmt.Sprint(col.MetaData.Encoding), "PLAIN")
			// The page header is Thrift compact: field 1 (i32 type), then
			// the zigzag varint of the type, 0 for DATA_PAGE (v1).
			off := col.MetaData.DataPageOffset
			require.Equal(t, []byte{0x15, 0x00}, data[off:off+2], "page type")
		}
	}

	raw, err := b.ReadAll(ctx, dir+"summary.json")
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(raw, []byte("\n")))
	require.True(t, bytes.HasSuffix(raw, []byte("\n")))
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Equal(t, map[string]any{
		"run_id": "run1", "success": true, "first_slice": descendingSliceOf(keys),
		"start_time": "2026-11-30T12:00:00Z", "cutoff_time": "2026-11-29T11:40:00Z",
		"num_deleted_objects": float64(len(keys)),
		// Mark's own fields, which lakeFS's readers ignore.
		"run_kind": "clean", "slices_listed": float64(len(slicesOf(keys))),
		"candidates_bytes": float64(len(data)), // the part's size, as stored
	}, m)
}

// descendingSliceOf returns the newest slice among the keys' slices.
func descendingSliceOf(keys []string) string {
	var best string
	var bestT time.Time
	for _, k := range keys {
		name := k[len("data/") : len("data/")+20]
		if tm, _ := layout.SliceTime(name); best == "" || tm.After(bestT) {
			best, bestT = name, tm
		}
	}
	return best
}

func TestSummaryJSON(t *testing.T) {
	in := Summary{RunID: "r", Success: true, FirstSlice: "s", StartTime: time.Date(2026, 1, 2, 3, 4, 5, 999, time.FixedZone("x", 3600)),
		CutoffTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), NumDeletedObjects: 7}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	require.Equal(t, `{"run_id":"r","success":true,"first_slice":"s","start_time":"2026-01-02T02:04:05Z","cutoff_time":"2025-01-02T03:04:05Z","num_deleted_objects":7}`, string(b))
	var out Summary
	require.NoError(t, json.Unmarshal(b, &out))
	require.True(t, in.StartTime.Truncate(time.Second).Equal(out.StartTime))
	// Spark may write fractions and offsets.
	require.NoError(t, json.Unmarshal([]byte(`{"run_id":"r","success":false,"start_time":"2026-01-02T03:04:05.123+02:00"}`), &out))
	require.Equal(t, time.Date(2026, 1, 2, 1, 4, 5, 123e6, time.UTC), out.StartTime)
	require.NoError(t, json.Unmarshal([]byte(`{"cutoff_time":"2026-01-02T03:04:05.5"}`), &out))
	require.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC), out.CutoffTime)
	require.ErrorIs(t, json.Unmarshal([]byte(`{"start_time":"yesterday"}`), &out), ErrInvalidInput)
	require.ErrorIs(t, json.Unmarshal([]byte(`{"num_deleted_objects":-1}`), &out), ErrInvalidInput)
	// A shard's run: shard_index is left out for shard 0.
	require.NoError(t, json.Unmarshal([]byte(`{"shard_count":3}`), &out))
	require.Equal(t, [2]int{0, 3}, [2]int{out.ShardIndex, out.ShardCount})
	require.NoError(t, json.Unmarshal([]byte(`{"shard_index":2,"shard_count":3}`), &out))
	require.Equal(t, [2]int{2, 3}, [2]int{out.ShardIndex, out.ShardCount})
	b, err = json.Marshal(Summary{ShardCount: 4})
	require.NoError(t, err)
	require.Contains(t, string(b), `"shard_count":4`)
	require.NotContains(t, string(b), `shard_index`)
	for _, bad := range []string{`{"shard_index":3,"shard_count":3}`, `{"shard_index":1}`, `{"shard_count":-1}`, `{"shard_index":-1,"shard_count":2}`} {
		require.ErrorIs(t, json.Unmarshal([]byte(bad), &out), ErrInvalidInput, bad)
	}
}

func FuzzSummaryJSON(f *testing.F) {
	f.Add([]byte(`{"run_id":"r","success":true,"first_slice":"s","start_time":"2026-01-02T02:04:05Z","cutoff_time":"2025-01-02T03:04:05Z","num_deleted_objects":7}`))
	f.Add([]byte(`{"start_time":"2026-01-02T03:04:05.123+02:00"}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"run_id":"r","success":true,"shard_index":2,"shard_count":5}`))
	f.Add([]byte(`{"run_id":"r","success":true,"num_unrecognized_objects":2,"unrecognized_bytes":10,"unrecognized_sample":["README.txt","b"],"num_walled_objects":3,"walls":["data/inner/"]}`))
	f.Add([]byte(`{"num_unrecognized_objects":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Summary
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var again Summary
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("re-read %s: %v", b, err)
		}
		if again.RunID != s.RunID || again.Success != s.Success || again.NumDeletedObjects != s.NumDeletedObjects ||
			again.ShardIndex != s.ShardIndex || again.ShardCount != s.ShardCount ||
			again.NumUnrecognizedObjects != s.NumUnrecognizedObjects || again.UnrecognizedBytes != s.UnrecognizedBytes ||
			again.NumWalledObjects != s.NumWalledObjects || !slices.Equal(again.Walls, s.Walls) ||
			!slices.Equal(again.UnrecognizedSample, s.UnrecognizedSample) ||
			!again.CutoffTime.Equal(s.CutoffTime.Truncate(time.Second)) {
			t.Fatalf("round trip changed %+v into %+v", s, again)
		}
	})
}

// FuzzCandidates feeds arbitrary bytes as a part file, from parts of every
// codec and hostile ones: Candidates yields addresses or an error, never
// panics, and allocates at most fuzzAllocBound.
func FuzzCandidates(f *testing.F) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[addressRow](&buf, parquet.DataPageVersion(1))
	w.Write([]addressRow{{"data/a/b"}, {"x"}})
	w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte{})
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(fuzzRead)
}

// TestCandidatesBoundsAllocation reads a part whose page header claims a
// 2 GiB page (found by FuzzCandidates): it is refused before the decoder
// allocates what it claims.
func TestCandidatesBoundsAllocation(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/huge-page.parquet")
	require.NoError(t, err)
	b := memblob.OpenBucket(nil)
	require.NoError(t, b.WriteAll(ctx, reportDir(DefaultStoragePrefix, "r")+"deleted/part-0", data, nil))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var errs int
	for _, err := range Candidates(ctx, b, DefaultStoragePrefix, "r") {
		require.ErrorIs(t, err, ErrInvalidInput)
		errs++
	}
	runtime.ReadMemStats(&after)
	require.Equal(t, 1, errs)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
}

// slicesOf returns the distinct slices of keys "data/<slice>/...".
func slicesOf(keys []string) map[string]bool {
	s := map[string]bool{}
	for _, k := range keys {
		s[k[len("data/"):len("data/")+20]] = true
	}
	return s
}
