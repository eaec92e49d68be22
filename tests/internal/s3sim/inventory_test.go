package s3sim_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// row is an object as a report lists it, or as a listing shows it.
type row struct {
	Key  string
	Size int64
	Mod  time.Time // to the millisecond
	ETag string
}

// jsonManifest is manifest.json as AWS documents it, decoded here
// independently of the store's writer.
type jsonManifest struct {
	SourceBucket      string `json:"sourceBucket"`
	DestinationBucket string `json:"destinationBucket"`
	Version           string `json:"version"`
	CreationTimestamp string `json:"creationTimestamp"`
	FileFormat        string `json:"fileFormat"`
	FileSchema        string `json:"fileSchema"`
	Files             []struct {
		Key  string `json:"key"`
		Size int64  `json:"size"`
		MD5  string `json:"MD5checksum"`
	} `json:"files"`
}

// TestInventoryModel churns random stores (slices of odd names, written
// objects, deletions, objects written and slices added after the report's
// time), publishes a report at a random moment, churns on, and decodes the
// report with independent readers (compress/gzip, encoding/csv and
// net/url; Apache Arrow's Parquet reader): its rows must be the objects a
// listing showed at the report's call whose modification time is at or
// before its time, its files' sizes and MD5s those of the manifest, and
// the manifest's checksum its MD5.
func TestInventoryModel(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(12) {
		format := s3sim.InventoryFormat(seed % 2)
		t.Run(fmt.Sprintf("seed%d-format%d", seed, format), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 29))
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			old := now.Add(-30 * 24 * time.Hour)
			desc := []s3sim.Slice{
				{Prefix: "repo/data/a/", Count: 1 + rng.IntN(300), ModTime: old, Size: 10},
				{Prefix: "repo/data/b/", Count: 1 + rng.IntN(300), Name: func(i int) string { return fmt.Sprintf("k %04d+é%%", i) }, ModTime: old.Add(time.Hour + 123*time.Millisecond), Size: 0},
				{Prefix: "repo/data/c/", Count: 1 + rng.IntN(300), ModTime: now.Add(time.Hour), Size: 7}, // after the report
				{Prefix: "zz/", Count: 1 + rng.IntN(50), ModTime: old, Size: 3},
			}
			store, err := s3sim.New(desc, s3sim.WithLatency(s3sim.NoLatency), s3sim.WithRates(math.Inf(1), math.Inf(1)),
				s3sim.WithClock(func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			b := store.Bucket()
			defer b.Close()
			all := listRows(t, b, "")
			churn := func(n int) {
				for range n {
					if rng.IntN(2) == 0 {
						k := all[rng.IntN(len(all))].Key
						if err := b.Delete(ctx, k); err != nil && !strings.Contains(err.Error(), "not found") {
							t.Fatal(err)
						}
						continue
					}
					k := fmt.Sprintf("repo/w/%03d", rng.IntN(200))
					if rng.IntN(4) == 0 {
						k = all[rng.IntN(len(all))].Key // overwrite a synthesised one
					}
					if err := b.WriteAll(ctx, k, []byte(k), nil); err != nil {
						t.Fatal(err)
					}
					now = now.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
				}
			}
			churn(rng.IntN(200))
			at := now.Add(-time.Duration(rng.IntN(100)) * time.Second)
			prefix := []string{"", "repo/", "repo/data/b/k 00"}[rng.IntN(3)]
			before := listRows(t, b, prefix)
			var want []row
			for _, r := range before {
				if !r.Mod.After(at) {
					want = append(want, r)
				}
			}
			cfg := s3sim.InventoryConfig{
				SourceBucket: "src", DestinationBucket: "dst", DestinationPrefix: "inv", ConfigID: "gc",
				Prefix: prefix, Time: at, Format: format, ObjectsPerFile: 1 + rng.IntN(200),
			}
			inv, err := store.AddInventory(cfg)
			if err != nil {
				t.Fatal(err)
			}
			churn(rng.IntN(200)) // the report does not change after its call

			m, rows := readReport(t, b, inv.ManifestKey)
			if m.SourceBucket != "src" || m.DestinationBucket != "arn:aws:s3:::dst" || m.Version != "2016-11-30" ||
				m.CreationTimestamp != strconv.FormatInt(at.UnixMilli(), 10) {
				t.Errorf("manifest = %+v", m)
			}
			if want, got := "inv/src/gc/"+at.Format("2006-01-02T15-04Z")+"/manifest.json", inv.ManifestKey; got != want {
				t.Errorf("manifest key %q, want %q", got, want)
			}
			if len(rows) != len(want) || int64(len(rows)) != inv.Rows {
				t.Errorf("%d rows (Inventory.Rows %d), want %d", len(rows), inv.Rows, len(want))
			}
			slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.Key, b.Key) })
			for i := range min(len(rows), len(want)) {
				if rows[i] != want[i] {
					t.Fatalf("row %d = %+v, want %+v", i, rows[i], want[i])
				}
			}
			// Listing the destination shows the manifest, its checksum and
			// every data file.
			var listed []string
			for _, r := range listRows(t, b, "inv/src/gc/") {
				listed = append(listed, r.Key)
			}
			wantKeys := []string{inv.ManifestKey, inv.ChecksumKey, inv.SymlinkKey}
			var symlink string
			for _, f := range m.Files {
				wantKeys = append(wantKeys, f.Key)
				symlink += "s3://dst/" + f.Key + "\n"
			}
			if want := "inv/src/gc/hive/dt=" + at.Format("2006-01-02-15-04") + "/symlink.txt"; inv.SymlinkKey != want {
				t.Errorf("symlink.txt at %q, want %q", inv.SymlinkKey, want)
			}
			if got, err := b.ReadAll(ctx, inv.SymlinkKey); err != nil || string(got) != symlink {
				t.Errorf("symlink.txt = %q (%v), want %q", got, err, symlink)
			}
			slices.Sort(wantKeys)
			if !slices.Equal(listed, wantKeys) {
				t.Errorf("listed %q, want %q", listed, wantKeys)
			}
		})
	}
}

// listRows lists the bucket under prefix, times to the millisecond.
func listRows(t *testing.T, b *blob.Bucket, prefix string) []row {
	t.Helper()
	var rows []row
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{o.Key, o.Size, o.ModTime.UTC().Truncate(time.Millisecond), hex.EncodeToString(o.MD5)})
	}
}

// readReport reads a report through the bucket, checks its checksums and
// sizes, and decodes its rows.
func readReport(t *testing.T, b *blob.Bucket, manifestKey string) (*jsonManifest, []row) {
	t.Helper()
	ctx := context.Background()
	body, err := b.ReadAll(ctx, manifestKey)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := b.ReadAll(ctx, strings.TrimSuffix(manifestKey, ".json")+".checksum")
	if err != nil {
		t.Fatal(err)
	}
	if got := md5.Sum(body); strings.TrimSpace(string(sum)) != hex.EncodeToString(got[:]) {
		t.Errorf("manifest.checksum %q, manifest's MD5 %x", sum, got)
	}
	var m jsonManifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.FileSchema, "Bucket, Key, Size, LastModifiedDate, ETag") && m.FileFormat == "CSV" {
		t.Errorf("CSV schema %q", m.FileSchema)
	}
	var rows []row
	for _, f := range m.Files {
		data, err := b.ReadAll(ctx, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got := md5.Sum(data); int64(len(data)) != f.Size || hex.EncodeToString(got[:]) != f.MD5 {
			t.Fatalf("%s: %d bytes of MD5 %x, manifest says %d of %s", f.Key, len(data), got, f.Size, f.MD5)
		}
		if !strings.Contains(f.Key, "/data/") {
			t.Errorf("data file %s not under data/", f.Key)
		}
		switch m.FileFormat {
		case "CSV":
			if !strings.HasSuffix(f.Key, ".csv.gz") {
				t.Errorf("CSV file %s", f.Key)
			}
			rows = append(rows, decodeCSV(t, m.SourceBucket, data)...)
		case "Parquet":
			if !strings.HasSuffix(f.Key, ".parquet") {
				t.Errorf("Parquet file %s", f.Key)
			}
			rows = append(rows, decodeParquet(t, m.SourceBucket, data)...)
		default:
			t.Fatalf("format %q", m.FileFormat)
		}
		// A few ranged reads agree with the whole.
		for _, r := range [][2]int64{{0, 1}, {f.Size / 3, f.Size / 2}, {f.Size - 8, 8}, {f.Size / 2, -1}} {
			if r[0] < 0 || r[0] > f.Size {
				continue
			}
			rd, err := b.NewRangeReader(ctx, f.Key, r[0], r[1], nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rd)
			rd.Close()
			end := f.Size
			if r[1] >= 0 {
				end = min(f.Size, r[0]+r[1])
			}
			if err != nil || !bytes.Equal(got, data[r[0]:end]) {
				t.Errorf("%s: range %v read %d bytes (%v), want %d", f.Key, r, len(got), err, end-r[0])
			}
		}
	}
	return &m, rows
}

func decodeCSV(t *testing.T, bucket string, data []byte) []row {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := zr.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(text, []byte(`"`)); n != 10*len(recs) {
		t.Errorf("not every field quoted: %d quotes for %d rows", n, len(recs))
	}
	var rows []row
	for _, r := range recs {
		if len(r) != 5 || r[0] != bucket {
			t.Fatalf("record %q", r)
		}
		key, err := url.QueryUnescape(r[1])
		if err != nil {
			t.Fatalf("key %q: %v", r[1], err)
		}
		size, err := strconv.ParseInt(r[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := time.Parse(time.RFC3339Nano, r[3])
		if err != nil || !strings.HasSuffix(r[3], "Z") || len(r[3]) != len("2006-01-02T15:04:05.000Z") {
			t.Fatalf("time %q: %v", r[3], err)
		}
		rows = append(rows, row{key, size, mod, r[4]})
	}
	return rows
}

func decodeParquet(t *testing.T, bucket string, data []byte) []row {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	sc := rdr.MetaData().Schema
	var names []string
	for i := range sc.NumColumns() {
		names = append(names, sc.Column(i).Name())
	}
	if want := []string{"bucket", "key", "size", "last_modified_date", "e_tag"}; !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 10}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	table, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer table.Release()
	tr := array.NewTableReader(table, 1<<10)
	defer tr.Release()
	var rows []row
	for tr.Next() {
		rec := tr.RecordBatch()
		buckets := rec.Column(0).(*array.String)
		keys := rec.Column(1).(*array.String)
		sizes := rec.Column(2).(*array.Int64)
		mods, ok := rec.Column(3).(*array.Timestamp)
		if !ok {
			t.Fatalf("last_modified_date is %s", rec.Column(3).DataType())
		}
		if ts := rec.Column(3).DataType().(*arrow.TimestampType); ts.Unit != arrow.Millisecond || ts.TimeZone != "UTC" {
			t.Errorf("last_modified_date type %s", ts)
		}
		etags := rec.Column(4).(*array.String)
		for i := range int(rec.NumRows()) {
			if buckets.Value(i) != bucket || sizes.IsNull(i) || mods.IsNull(i) || etags.IsNull(i) {
				t.Fatalf("row %d: bucket %q, nulls %v %v %v", i, buckets.Value(i), sizes.IsNull(i), mods.IsNull(i), etags.IsNull(i))
			}
			rows = append(rows, row{keys.Value(i), sizes.Value(i), time.UnixMilli(int64(mods.Value(i))).UTC(), etags.Value(i)})
		}
	}
	return rows
}
