package inventory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

func gcsRows() []s3Row {
	mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
	return []s3Row{
		{Key: "ns/data/a/b", Size: 3, Mod: mod},
		{Key: "ns/x, \"y\"+z", Size: 4, Mod: mod},
		{Key: "other/k", Size: 5, Mod: mod},
		{Key: "nsx/k", Size: 5, Mod: mod},
	}
}

const gcsNS = "gs://src/ns"

func TestOpenGCSReads(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	mkey := writeGCS(t, b, gcsReport{Source: "src", Time: testNow.Add(-time.Hour), Files: 2, Rows: gcsRows(), Count: -1, Shards: -1})
	r, err := OpenGCS(ctx, b, mkey, gcsNS, WithClock(func() time.Time { return testNow }))
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
	want := []Object{{Key: "data/a/b", Size: 3, ModTime: mod}, {Key: "x, \"y\"+z", Size: 4, ModTime: mod}}
	if !slices.Equal(got, want) {
		t.Fatalf("objects %+v, want %+v", got, want)
	}
	if !r.Time().Equal(testNow.Add(-time.Hour)) || r.Files() != 2 || r.Source() != mkey {
		t.Fatalf("time %v, files %d, source %q", r.Time(), r.Files(), r.Source())
	}
}

func TestOpenGCSRefuses(t *testing.T) {
	ctx := context.Background()
	clock := WithClock(func() time.Time { return testNow })
	firstShard := func(t *testing.T, b *blob.Bucket) string {
		for k, err := range listAll(ctx, b, "") {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(k, ".csv") {
				return k
			}
		}
		t.Fatal("no shard")
		return ""
	}
	cases := []struct {
		name   string
		rep    gcsReport
		ns     string
		setup  func(t *testing.T, b *blob.Bucket, mkey string)
		want   error
		atOpen bool
	}{
		{name: "count", rep: gcsReport{Count: 5}, want: ErrChecksum},
		{name: "shard count", rep: gcsReport{Shards: 3}, want: ErrInvalidInput, atOpen: true},
		{name: "missing shard", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			if err := b.Delete(ctx, firstShard(t, b)); err != nil {
				t.Fatal(err)
			}
		}, want: ErrMissingFile},
		{name: "row of another bucket", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			k := firstShard(t, b)
			if err := b.WriteAll(ctx, k, []byte(strings.Replace(string(mustRead(t, b, k)), ",src,", ",srcx,", 1)), nil); err != nil {
				t.Fatal(err)
			}
		}, want: ErrInvalidInput},
		{name: "long line", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			k := firstShard(t, b)
			long := "12345,src,ns/" + strings.Repeat("a", maxLine) + ",1,2026-01-01T00:00:00Z,2026-01-01T00:00:00Z,STANDARD\n"
			if err := b.WriteAll(ctx, k, append(mustRead(t, b, k), long...), nil); err != nil {
				t.Fatal(err)
			}
		}, want: ErrInvalidInput},
		{name: "percent in a name is skipped", rep: gcsReport{Rows: []s3Row{{Key: "ns/a%20b", Size: 1, Mod: testNow.Add(-50 * time.Hour)}}}, want: ErrEmpty},
		{name: "other bucket", ns: "gs://other/ns", want: ErrNotCovered, atOpen: true},
		{name: "too old", rep: gcsReport{Time: testNow.Add(-9 * 24 * time.Hour)}, want: ErrTooOld, atOpen: true},
		{name: "future", rep: gcsReport{Time: testNow.Add(time.Hour)}, want: ErrTooOld, atOpen: true},
		{name: "empty", ns: "gs://src/nothing", want: ErrEmpty},
		{name: "parquet", rep: gcsReport{Parquet: true}, want: ErrUnsupported, atOpen: true},
		{name: "delimiter", rep: gcsReport{CSV: map[string]any{"delimiter": ";", "headerRequired": true}}, want: ErrInvalidInput, atOpen: true},
		{name: "no header", rep: gcsReport{CSV: map[string]any{"delimiter": ","}}, want: ErrInvalidInput, atOpen: true},
		{name: "S3 namespace", ns: "s3://src/ns", want: ErrInvalidInput, atOpen: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			rep := c.rep
			rep.Source = "src"
			if rep.Rows == nil {
				rep.Rows = gcsRows()
			}
			if rep.Time.IsZero() {
				rep.Time = testNow.Add(-time.Hour)
			}
			if rep.Count == 0 {
				rep.Count = -1
			}
			if rep.Shards == 0 {
				rep.Shards = -1
			}
			mkey := writeGCS(t, b, rep)
			if c.setup != nil {
				c.setup(t, b, mkey)
			}
			ns := c.ns
			if ns == "" {
				ns = gcsNS
			}
			r, err := OpenGCS(ctx, b, mkey, ns, clock)
			if err == nil {
				if c.atOpen {
					t.Fatalf("opened; want %v at open", c.want)
				}
				_, err = collect(ctx, r)
			} else if !c.atOpen {
				t.Fatalf("open: %v; want %v while reading", err, c.want)
			}
			if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), "inventory: ") {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
	// An empty report is read with WithAllowEmpty.
	b := memblob.OpenBucket(nil)
	defer b.Close()
	mkey := writeGCS(t, b, gcsReport{Source: "src", Time: testNow.Add(-time.Hour), Rows: gcsRows(), Count: -1, Shards: -1})
	r, err := OpenGCS(ctx, b, mkey, "gs://src/nothing", clock, WithAllowEmpty())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := collect(ctx, r); err != nil || len(got) != 0 {
		t.Fatalf("allowed empty: %v, %v", got, err)
	}
}

// The GCS manifest: any bytes give a checked manifest or an error, never
// a panic.
func FuzzGCSManifest(f *testing.F) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	mkey := writeGCS(f, b, gcsReport{Source: "src", Time: testNow.Add(-time.Hour), Files: 2, Rows: gcsRows(), Count: -1, Shards: -1})
	seed, err := b.ReadAll(context.Background(), mkey)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"records_processed":0,"shard_count":0,"snapshot_time":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"shard_count":1,"report_shards_file_names":["../x"]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseGCSManifest(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		if *m.ShardCount != int64(len(m.ShardNames)) || *m.RecordsProcessed < 0 {
			t.Fatalf("checked manifest %+v", m)
		}
		for _, s := range m.ShardNames {
			if s == "" || strings.Contains(s, "/") || s == ".." {
				t.Fatalf("shard name %q", s)
			}
		}
	})
}

// A GCS shard's records end with "\n" alone: a bare name that ends with a
// '\r' of its own, in the last column, is that name, never the name
// without it (another object, whose row time it is not).
func TestOpenGCSNameEndingInCR(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
	mkey := writeGCS(t, b, gcsReport{Source: "src", Time: testNow.Add(-time.Hour), Files: 1, Rows: gcsRows()[:1], Count: -1, Shards: -1})
	shard := strings.TrimSuffix(mkey, "_manifest.json") + "_0.csv"
	body := "bucket,size,updated,name\nsrc,3," + mod.Format(time.RFC3339) + ",ns/data/a\r\n"
	if err := b.WriteAll(ctx, shard, []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	r, err := OpenGCS(ctx, b, mkey, gcsNS, WithClock(func() time.Time { return testNow }))
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(ctx, r)
	if err == nil && !slices.Equal(got, []Object{{Key: "data/a\r", Size: 3, ModTime: mod}}) {
		t.Fatalf("objects %q, want the name with its '\\r'", got)
	}
}
