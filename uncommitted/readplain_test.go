package uncommitted_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
)

// keepAddresses returns n addresses of every kind a keep set must keep
// byte for byte: lakeFS's data layout, long ones (up to 3 KiB), empty ones,
// repeats (of a neighbour or of any earlier one), and bytes no writer of
// ours makes (NUL, 0xff, invalid UTF-8, a length's worth of 0xff).
func keepAddresses(r *rand.Rand, n int) []string {
	out := make([]string, 0, n)
	for range n {
		var a string
		switch k := r.IntN(20); {
		case k < 12:
			a = fmt.Sprintf("data/g%019d/c%020x", r.IntN(50), r.Uint64())
		case k == 12 && len(out) > 0:
			a = out[len(out)-1]
		case k == 13 && len(out) > 0:
			a = out[r.IntN(len(out))]
		case k == 14:
			a = ""
		case k == 15:
			a = "data/" + string(bytes.Repeat([]byte{byte('a' + r.IntN(26))}, 1+r.IntN(3000)))
		case k == 16:
			a = string([]byte{0, 0xff, 0xfe, byte(r.IntN(256)), 0, '/'})
		case k == 17:
			a = "\xff\xff\xff\xff" + fmt.Sprint(r.IntN(1000))
		default:
			b := make([]byte, r.IntN(80))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			a = string(b)
		}
		out = append(out, a)
	}
	return out
}

// writePlainRun writes addresses as a run's files of PLAIN values of a
// required column, as Prepare and lakeFS write them, in random layouts:
// every codec but LZ4_RAW (which parquet-go misreads; refused by both
// paths, tested apart), v1 and v2 pages, pages and row groups of random
// sizes, empty files. It returns how many files it wrote.
func writePlainRun(t *testing.T, r *rand.Rand, bucket *blob.Bucket, runID string, addresses []string) int {
	t.Helper()
	files := 1 + r.IntN(4)
	for f := range files {
		part := addresses[len(addresses)*f/files : len(addresses)*(f+1)/files]
		codec := guardtest.Codecs[r.IntN(len(guardtest.Codecs))]
		if codec == &parquet.Lz4Raw {
			codec = &parquet.Zstd
		}
		var buf bytes.Buffer
		err := parquet.Write(&buf, asRows(part), parquet.Compression(codec), parquet.PageBufferSize(256+r.IntN(32<<10)),
			parquet.MaxRowsPerRowGroup(int64(1+r.IntN(1500))), parquet.DataPageVersion(1+r.IntN(2)),
			parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain))
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("_lakefs/retention/gc/uncommitted/%s/uncommitted/f%02d", runID, f)
		if err := bucket.WriteAll(context.Background(), key, buf.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestAddressesPlainModel writes random addresses (keepAddresses) as runs
// of PLAIN files and checks that Addresses yields exactly the addresses
// written, in order (the model is the list itself): when
// parquetguard.ReadPlain hands over every page, which then reads no file
// through parquet-go, and when it stops after a few pages of each file
// (SetPlainPages) and parquet-go reads the rest of it. A run Prepare wrote
// is read without parquet-go.
func TestAddressesPlainModel(t *testing.T) {
	ctx := context.Background()
	// fallbacks counts the files read in part through parquet-go: those of
	// more pages than ReadPlain was let hand over.
	var fallbacks int64
	n := seeds(40, 12)
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 33))
		want := keepAddresses(r, r.IntN(4000))
		bucket := memblob.OpenBucket(nil)
		files := writePlainRun(t, r, bucket, "r", want)
		for _, stop := range []int{0, 1, 1 + r.IntN(8)} {
			restore := uncommitted.SetPlainPages(stop)
			before := uncommitted.PlainFallbacks()
			got, err := readAddresses(ctx, bucket, "r")
			fell := uncommitted.PlainFallbacks() - before
			restore()
			if err != nil {
				t.Fatalf("seed %d, stop after %d pages: %v", seed, stop, err)
			}
			if len(got) != len(want) {
				t.Fatalf("seed %d, stop after %d pages: %d addresses, want %d", seed, stop, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("seed %d, stop after %d pages: address %d is %s, want %s", seed, stop, i, brief(got[i]), brief(want[i]))
				}
			}
			if stop == 0 && fell != 0 {
				t.Fatalf("seed %d: %d of %d PLAIN files read through parquet-go", seed, fell, files)
			}
			if stop > 0 {
				fallbacks += fell
			}
		}
		bucket.Close()
	}
	if fallbacks < int64(n) {
		t.Fatalf("%d files of %d runs read in part through parquet-go: the fallback went almost untested", fallbacks, n)
	}

	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	runID, want := completeRun(t, bucket, bigSource(7, 3000), 32<<10)
	before := uncommitted.PlainFallbacks()
	var got []string
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if fell := uncommitted.PlainFallbacks() - before; fell != 0 {
		t.Fatalf("Prepare's run: %d files read through parquet-go", fell)
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("Prepare's run: Addresses yields %d addresses, the run holds %d, not the same", len(got), len(want))
	}
}

// TestStagedKeepModel is the keep phase's path for the staged set, against
// a model: random addresses (keepAddresses) written as a run, read with
// Addresses (from ReadPlain's pages, or partly through parquet-go), each
// added to an extsort.Sorter as sweep's readKeep adds it (its bytes, not
// copied), in blocks small enough to spill into several runs and merge
// them, must come out of Finish as the addresses written, sorted with
// sort.Strings and without repeats: no address lost, altered or added.
func TestStagedKeepModel(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(seeds(30, 8)) {
		r := rand.New(rand.NewPCG(seed, 34))
		addresses := keepAddresses(r, r.IntN(6000))
		bucket := memblob.OpenBucket(nil)
		writePlainRun(t, r, bucket, "r", addresses)
		want := slices.Clone(addresses)
		sort.Strings(want)
		want = slices.Compact(want)
		stop := []int{0, 0, 1, 3}[r.IntN(4)]
		restore := uncommitted.SetPlainPages(stop)
		dir, err := extsort.NewSpillDir(t.TempDir(), 512)
		if err != nil {
			t.Fatal(err)
		}
		s := extsort.NewSorter(dir, 8192<<r.IntN(6), 2+r.IntN(4))
		for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", "r", uncommitted.AllowUnverified()) {
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := s.Add(unsafe.Slice(unsafe.StringData(a), len(a))); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		restore()
		it, err := s.Finish()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var got []string
		for {
			k, ok, err := it.Next()
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if !ok {
				break
			}
			got = append(got, string(k))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		s.Release()
		if err := dir.Remove(); err != nil {
			t.Fatal(err)
		}
		bucket.Close()
		if len(got) != len(want) {
			t.Fatalf("seed %d (stop after %d pages): %d keys out of the sorter, want %d", seed, stop, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d (stop after %d pages): key %d is %s, want %s", seed, stop, i, brief(got[i]), brief(want[i]))
			}
		}
	}
}

// brief quotes a, cut to its first 60 bytes and its length when longer.
func brief(a string) string {
	if len(a) <= 60 {
		return fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf("%q… (%d bytes)", a[:60], len(a))
}
