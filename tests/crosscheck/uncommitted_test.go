package crosscheck_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	arrowcompress "github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/uncommitted"
)

const namespace = "s3://lake/repo1"

// staging is a model staging area: branch → entries in key order.
type staging map[string][]uncommitted.Entry

func (s staging) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, b := range slices.Sorted(maps.Keys(s)) {
			if b >= from && !yield(b, nil) {
				return
			}
		}
	}
}

func (s staging) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for _, e := range s[branch] {
			if e.Key >= from && !yield(e, nil) {
				return
			}
		}
	}
}

// row is one exported (address, creation_date) pair.
type row struct {
	address string
	created int64
}

// randomStaging builds branches of entries of every kind: relative
// addresses, full addresses inside and outside the namespace, tombstones,
// unicode keys, and addresses shared by several entries.
func randomStaging(rng *rand.Rand, branches, entries int) (staging, []row) {
	s := staging{}
	var want []row
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for b := range branches {
		name := fmt.Sprintf("branch-%02d", b)
		if b%4 == 3 {
			name = fmt.Sprintf("ветка-%d", b)
		}
		n := rng.IntN(entries)
		keys := map[string]bool{}
		for len(keys) < n {
			keys[fmt.Sprintf("tables/t%d/part-%05d-%s.parquet", rng.IntN(5), rng.IntN(100000), []string{"", "é", "日本"}[rng.IntN(3)])] = true
		}
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			created := base.Add(time.Duration(rng.IntN(1e6)) * time.Second)
			rel := fmt.Sprintf("data/g%03d/obj-%08d", rng.IntN(50), rng.IntN(1e8))
			if len(want) > 0 && rng.IntN(10) == 0 {
				// A shallow copy: the address of an earlier entry, one row each.
				rel = want[rng.IntN(len(want))].address
			}
			e := uncommitted.Entry{Key: key, PhysicalAddress: rel, CreationDate: created}
			exported := true
			switch rng.IntN(10) {
			case 0:
				e.Tombstone = true
				e.PhysicalAddress = ""
				exported = false
			case 1:
				e.AddressType = uncommitted.Full
				e.PhysicalAddress = namespace + "/" + rel
			case 2:
				e.AddressType = uncommitted.Full
				e.PhysicalAddress = "s3://elsewhere/repo1/" + rel
				exported = false
			}
			s[name] = append(s[name], e)
			if exported {
				want = append(want, row{rel, created.Unix()})
			}
		}
	}
	return s, want
}

// export runs a whole uncommitted run and returns the keys of its files.
func export(t *testing.T, bucket *blob.Bucket, src staging, trailer []string, now time.Time, opts ...uncommitted.Option) []string {
	t.Helper()
	ctx := context.Background()
	opts = append(opts,
		uncommitted.WithClock(func() time.Time { return now }),
		uncommitted.WithTrailer(func(context.Context) iter.Seq2[string, error] {
			return func(yield func(string, error) bool) {
				for _, a := range trailer {
					if !yield(a, nil) {
						return
					}
				}
			}
		}),
	)
	p := must(uncommitted.NewPreparer(bucket, opts...))
	repo := uncommitted.Repository{ID: "repo1", StorageNamespace: namespace}
	var mark *uncommitted.Checkpoint
	var runID string
	for calls := 0; ; calls++ {
		if calls > 10000 {
			t.Fatal("export did not finish in 10000 calls")
		}
		res, err := p.Prepare(ctx, repo, src, mark)
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		runID = res.RunID
		if mark = res.Checkpoint; mark == nil {
			break
		}
	}
	var keys []string
	it := bucket.List(&blob.ListOptions{Prefix: "_lakefs/retention/gc/uncommitted/" + runID + "/uncommitted/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(obj.Key, "/"+uncommitted.ManifestName) { // readers skip it
			keys = append(keys, obj.Key)
		}
	}
}

func TestArrowReadsUncommittedExport(t *testing.T) {
	codecs := []struct {
		name  string
		codec compress.Codec // nil: the default
		want  arrowcompress.Compression
	}{
		{"default", nil, arrowcompress.Codecs.Gzip},                 // GZIP at DefaultGzipLevel, lakeFS's
		{"own-zstd", uncommitted.Zstd(), arrowcompress.Codecs.Zstd}, // what lakegc.Collect writes
		{"gzip-6", &gzip.Codec{Level: gzip.DefaultCompression}, arrowcompress.Codecs.Gzip},
		{"zstd", &zstd.Codec{}, arrowcompress.Codecs.Zstd},
		{"snappy", &snappy.Codec{}, arrowcompress.Codecs.Snappy},
	}
	for i, tc := range codecs {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(uint64(i), 6))
			src, want := randomStaging(rng, 9, 400)
			now := time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)
			trailer := []string{"data/copied/one", namespace + "/data/copied/two", "gs://other/data/copied/three"}
			want = append(want, row{"data/copied/one", now.Unix()}, row{"data/copied/two", now.Unix()})

			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			opts := []uncommitted.Option{uncommitted.WithMaxFileSize(8 << 10)}
			if tc.codec != nil {
				opts = append(opts, uncommitted.WithCompression(tc.codec))
			}
			keys := export(t, bucket, src, trailer, now, opts...)
			if len(keys) < 3 {
				t.Fatalf("export wrote %d files, want several (8 KiB budget, %d rows)", len(keys), len(want))
			}

			var got []row
			for _, key := range keys {
				data, err := bucket.ReadAll(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				f := readWithArrow(t, data)
				if n := f.schema.NumColumns(); n != 2 {
					t.Fatalf("%s: %d columns, want 2", key, n)
				}
				reportProblems(t, key, f.stringColumnProblems(0, "physical_address"))
				if c := f.schema.Column(1); c.Name() != "creation_date" || c.PhysicalType() != parquet.Types.Int64 {
					t.Errorf("%s: column 1 is %s %s, want creation_date INT64", key, c.Name(), c.PhysicalType())
				}
				reportProblems(t, key, f.pageProblems(tc.want))
				addrs := f.columns["physical_address"].([]string)
				dates := f.columns["creation_date"].([]int64)
				if int64(len(addrs)) != f.numRows || len(dates) != len(addrs) {
					t.Fatalf("%s: %d addresses and %d dates for %d rows", key, len(addrs), len(dates), f.numRows)
				}
				for j := range addrs {
					got = append(got, row{addrs[j], dates[j]})
				}
			}
			sortRows(got)
			sortRows(want)
			if !slices.Equal(got, want) {
				t.Errorf("Arrow read %d rows, want %d; first difference: %s", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func sortRows(rows []row) {
	slices.SortFunc(rows, func(a, b row) int {
		if c := strings.Compare(a.address, b.address); c != 0 {
			return c
		}
		return cmp.Compare(a.created, b.created)
	})
}

func firstDiff(got, want []row) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("extra row %v", got[len(want)])
	}
	if len(want) > len(got) {
		return fmt.Sprintf("missing row %v", want[len(got)])
	}
	return "none"
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
