package uncommitted_test

import (
	"bytes"
	"context"
	"errors"

	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
)

// optionalRow is Row with an optional address, as a writer that does not
// declare its columns required stores it.
type optionalRow struct {
	PhysicalAddress *string `parquet:"physical_address,optional"`
	CreationDate    int64   `parquet:"creation_date"`
}

// asRows turns addresses into rows, with dates that compress well.
func asRows(addresses []string) []uncommitted.Row {
	rows := make([]uncommitted.Row, len(addresses))
	for i, a := range addresses {
		rows[i] = uncommitted.Row{PhysicalAddress: a, CreationDate: int64(1e9 + i%5)}
	}
	return rows
}

// addressReader drives the shared tests of guardtest on Addresses, with
// ReadRun's layouts. Addresses reads no INT64 column: see
// TestAddressesSkipCreationDate.
var addressReader = guardtest.Reader[string]{
	Column:  "physical_address",
	Invalid: uncommitted.ErrInvalidFile,
	Store:   storeAddressFile,
	Layouts: func() map[string]guardtest.Writer[string] {
		m := make(map[string]guardtest.Writer[string])
		for name, write := range runReader.Layouts {
			m[name] = func(w io.Writer, addresses []string, c compress.Codec) error {
				return write(w, asRows(addresses), c)
			}
		}
		return m
	}(),
	Dictionary: runReader.Dictionary,
	Row:        func(_ int, address string, _ *rand.Rand) string { return address },
}

// storeAddressFile writes data as a run's only file; read reads its
// addresses to the end: those before the first error, and that error.
func storeAddressFile(t *testing.T, data []byte) (read func() ([]string, error)) {
	t.Helper()
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	t.Cleanup(func() { bucket.Close() })
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	return func() ([]string, error) { return readAddresses(ctx, bucket, "r") }
}

// readAddresses reads the addresses of run runID (unverified) to the end.
func readAddresses(ctx context.Context, bucket *blob.Bucket, runID string) ([]string, error) {
	var got []string
	var first error
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID, uncommitted.AllowUnverified()) {
		switch {
		case first != nil:
		case err != nil:
			first = err
		default:
			got = append(got, a)
		}
	}
	return got, first
}

// readRunAddresses reads the rows of run runID (unverified) to the end,
// and returns their addresses.
func readRunAddresses(ctx context.Context, bucket *blob.Bucket, runID string) ([]string, error) {
	var got []string
	var first error
	for row, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", runID, uncommitted.AllowUnverified()) {
		switch {
		case first != nil:
		case err != nil:
			first = err
		default:
			got = append(got, row.PhysicalAddress)
		}
	}
	return got, first
}

// TestAddressesHostileFiles: Addresses refuses every hostile file with
// ErrInvalidFile within guardtest.HostileAllocBound, as ReadRun does.
func TestAddressesHostileFiles(t *testing.T) { addressReader.TestHostile(t) }

// TestAddressesMemoryAtLimits: the costliest files within parquetguard's
// limits read whole with a peak heap under guardtest.LimitsPeakBound.
func TestAddressesMemoryAtLimits(t *testing.T) { addressReader.TestAtLimits(t) }

// TestAddressesCodecs: files of every codec and layout read as the
// addresses written (but the LZ4_RAW pages parquet-go misreads, refused).
func TestAddressesCodecs(t *testing.T) { addressReader.TestCodecs(t, 2) }

// TestAddressesRefuseHadoopLZ4: LZ4 in Hadoop's framing is refused,
// naming the codec.
func TestAddressesRefuseHadoopLZ4(t *testing.T) { addressReader.TestHadoopLZ4(t) }

// FuzzAddressesPages builds a run's file from fuzzed page headers and
// payloads (guardtest.Fuzzed, and pages of Zstd's own frames): Addresses yields addresses or an error
// wrapping ErrInvalidFile, never panics, within guardtest.FuzzAllocBound;
// and when it yields no error, it yields as many addresses as the file
// has rows (its row group's), as ReadRun does: never fewer, whatever the
// page holds.
func FuzzAddressesPages(f *testing.F) {
	for _, s := range append(guardtest.FuzzSeeds(), ownZstdSeeds()...) {
		f.Add(s.Codec, s.Kind, s.Encoding, s.Optional, s.NumValues, s.Dict, s.Payload, s.Compress, s.SizeDelta)
	}
	f.Fuzz(func(t *testing.T, codec, kind, enc uint8, optional bool, n int32, dict, payload []byte, compress bool, delta int32) {
		data := guardtest.Fuzzed{Codec: codec, Kind: kind, Encoding: enc, Optional: optional, NumValues: n,
			Dict: dict, Payload: payload, Compress: compress, SizeDelta: delta}.File(addressReader.Column)
		addressReader.Fuzz(t, data)
		read := storeAddressFile(t, data)
		got, err := read()
		if err == nil && int64(len(got)) != int64(n) {
			t.Fatalf("Addresses yields %d addresses of a file of %d rows, and no error", len(got), n)
		}
	})
}

// FuzzAddresses feeds arbitrary bytes as a run's file, from files of every
// codec and layout and hostile ones. Addresses yields addresses or an
// error wrapping ErrInvalidFile, never panics, within
// guardtest.FuzzAllocBound; when ReadRun reads the file whole, Addresses
// yields exactly its rows' addresses; Addresses refuses no file that
// ReadRun reads; and it yields the same when it reads a file in part
// through parquet-go, after a page or two of ReadPlain's (SetPlainPages).
func FuzzAddresses(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	var buf bytes.Buffer
	a := "data/a"
	_ = parquet.Write(&buf, []optionalRow{{PhysicalAddress: &a, CreationDate: 7}, {CreationDate: 8}})
	f.Add(buf.Bytes())
	// PLAIN addresses in pages of a few values, row groups of a few pages:
	// a fallback after a page or two resumes mid-row-group.
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("data/%d", i)
	}
	var pages bytes.Buffer
	_ = parquet.Write(&pages, asRows(many), parquet.MaxRowsPerRowGroup(15), parquet.PageBufferSize(64),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain))
	f.Add(pages.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		addressReader.Fuzz(t, data)
		ctx := context.Background()
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
			t.Fatal(err)
		}
		want, werr := readRunAddresses(ctx, bucket, "r")
		got, err := readAddresses(ctx, bucket, "r")
		if werr == nil && (err != nil || !slices.Equal(got, want)) {
			t.Fatalf("ReadRun read %d rows; Addresses %d addresses, %v", len(want), len(got), err)
		}
		if err != nil && werr == nil {
			t.Fatalf("Addresses refused a file ReadRun reads: %v", err)
		}
		// The rest of the file read through parquet-go after a page or two
		// handed over by ReadPlain: the same addresses when both read it
		// whole (parquet-go refuses a few pages of no values that
		// ReadPlain hands over), and ReadRun's when it reads it.
		for _, stop := range []int{1, 2} {
			restore := uncommitted.SetPlainPages(stop)
			part, perr := readAddresses(ctx, bucket, "r")
			restore()
			if perr == nil && err == nil && !slices.Equal(part, got) || werr == nil && (perr != nil || !slices.Equal(part, want)) {
				t.Fatalf("after %d pages through ReadPlain: %d addresses, %v; all through it: %d, %v; ReadRun: %d rows, %v", stop, len(part), perr, len(got), err, len(want), werr)
			}
		}
	})
}

// TestAddressesMatchReadRun writes runs of several files in random
// layouts (every codec, v1 and v2 pages, PLAIN, delta and dictionary
// strings, an optional column with nulls, row groups and pages of random
// sizes, empty files) and checks that Addresses yields exactly the
// addresses of ReadRun's rows, in the same order, and the same error when
// there is one; a run Prepare wrote is read both ways too.
func TestAddressesMatchReadRun(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(seeds(30, 10)) {
		r := rand.New(rand.NewPCG(seed, 28))
		bucket := memblob.OpenBucket(nil)
		files := 1 + r.IntN(4)
		for f := range files {
			n := r.IntN(3000)
			if r.IntN(6) == 0 {
				n = 0
			}
			addresses := make([]string, n)
			for i := range addresses {
				addresses[i] = fmt.Sprintf("data/%x/%0*x", r.IntN(40), 1+r.IntN(30), r.Uint64())
				if r.IntN(20) == 0 {
					addresses[i] = ""
				}
			}
			codec := guardtest.Codecs[r.IntN(len(guardtest.Codecs))]
			if codec == &parquet.Lz4Raw {
				codec = &parquet.Zstd // parquet-go misreads some of it: refused by both, tested apart
			}
			opts := []parquet.WriterOption{parquet.Compression(codec), parquet.PageBufferSize(512 + r.IntN(64<<10)),
				parquet.MaxRowsPerRowGroup(int64(1 + r.IntN(2000))), parquet.DataPageVersion(1 + r.IntN(2))}
			if r.IntN(2) == 0 {
				opts = append(opts, parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain))
			}
			var buf bytes.Buffer
			var err error
			switch r.IntN(3) {
			case 0:
				err = parquet.Write(&buf, asRows(addresses), opts...)
			case 1:
				dict := make([]dictRow, n)
				for i, row := range asRows(addresses) {
					dict[i] = dictRow(row)
				}
				err = parquet.Write(&buf, dict, opts...)
			default:
				opt := make([]optionalRow, n)
				for i := range addresses {
					if addresses[i] != "" {
						opt[i].PhysicalAddress = &addresses[i]
					}
				}
				err = parquet.Write(&buf, opt, opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := bucket.WriteAll(ctx, fmt.Sprintf("_lakefs/retention/gc/uncommitted/r/uncommitted/f%02d", f), buf.Bytes(), nil); err != nil {
				t.Fatal(err)
			}
		}
		want, werr := readRunAddresses(ctx, bucket, "r")
		got, err := readAddresses(ctx, bucket, "r")
		if werr != nil || err != nil {
			t.Fatalf("seed %d: ReadRun: %v; Addresses: %v", seed, werr, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: Addresses yields %d addresses, ReadRun %d rows, not the same", seed, len(got), len(want))
		}
		bucket.Close()
	}

	// A run of Prepare's, several files, verified against its manifest.
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	runID, _ := completeRun(t, bucket, bigSource(7, 3000), 32<<10)
	var want, got []string
	for row, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", runID) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, row.PhysicalAddress)
	}
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("Prepare's run: Addresses yields %d addresses, ReadRun %d rows, not the same", len(got), len(want))
	}
}

// TestAddressesSkipCreationDate reads the hostile files whose damage is in
// the creation_date column only, which Addresses neither checks nor
// decodes: Addresses yields their addresses, having allocated at most
// guardtest.HostileAllocBound, where ReadRun refuses them.
func TestAddressesSkipCreationDate(t *testing.T) {
	ctx := context.Background()
	stringOnly := make(map[string]bool)
	for _, c := range guardtest.Hostile("physical_address", "") {
		stringOnly[c.Name] = true
	}
	cases := 0
	for _, c := range guardtest.Hostile("physical_address", "creation_date") {
		if stringOnly[c.Name] {
			continue
		}
		cases++
		t.Run(c.Name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", c.Data, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := readRunAddresses(ctx, bucket, "r"); !errors.Is(err, uncommitted.ErrInvalidFile) {
				t.Fatalf("ReadRun: %v, want ErrInvalidFile", err)
			}
			var got []string
			alloc, err := guardtest.Allocated(func() (err error) {
				got, err = readAddresses(ctx, bucket, "r")
				return err
			})
			if err != nil || !slices.Equal(got, []string{"data/a"}) {
				t.Fatalf("Addresses: %q, %v", got, err)
			}
			if alloc > guardtest.HostileAllocBound {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
	if cases == 0 {
		t.Fatal("no hostile file damages creation_date only")
	}
}

// TestReadStopLeavesNoGoroutine stops reading a run of a 4 MB file, read
// in windows of 64 KiB behind 50 ms a request, while windows are being
// fetched ahead: by breaking the loop, or by cancelling the context (the
// iteration then ends with the cancellation). ReadRun and Addresses each
// leave no goroutine behind once the loop ended: the fetches ahead are
// cancelled and waited for, not left to finish.
func TestReadStopLeavesNoGoroutine(t *testing.T) {
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	r := rand.New(rand.NewPCG(3, 28))
	// 100 K addresses: about 2 MiB of file, far past the 20 K read below
	// and the 8 windows of 64 KiB fetched ahead of them.
	addresses := make([]string, 100000)
	for i := range addresses {
		addresses[i] = fmt.Sprintf("data/%016x/%016x", r.Uint64(), r.Uint64())
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, asRows(addresses), parquet.Compression(&parquet.Gzip), parquet.PageBufferSize(64<<10)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < 1<<20 {
		t.Fatalf("a file of %d bytes", buf.Len())
	}
	if err := mem.WriteAll(context.Background(), "_lakefs/retention/gc/uncommitted/r/uncommitted/f", buf.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	fb, err := faultblob.New(mem, faultblob.WithLatency(faultblob.Read, func(string) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer uncommitted.SetReadWindow(64 << 10)()
	for _, rows := range []bool{false, true} {
		for _, cancelled := range []bool{false, true} {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			var seq iter.Seq2[string, error] = uncommitted.Addresses(ctx, fb.Bucket(), "_lakefs", "r", uncommitted.AllowUnverified())
			if rows {
				seq = func(yield func(string, error) bool) {
					for row, err := range uncommitted.ReadRun(ctx, fb.Bucket(), "_lakefs", "r", uncommitted.AllowUnverified()) {
						if !yield(row.PhysicalAddress, err) {
							return
						}
					}
				}
			}
			n := 0
			var last error
			for a, err := range seq {
				if last = err; err != nil {
					break
				}
				if a != addresses[n] {
					t.Fatalf("address %d: %q, want %q", n, a, addresses[n])
				}
				if n++; n == 20000 {
					if !cancelled {
						break
					}
					cancel()
				}
			}
			if cancelled && !errors.Is(last, context.Canceled) {
				t.Errorf("rows %v: cancelled after %d addresses: %v", rows, n, last)
			}
			if !cancelled && (last != nil || n != 20000) {
				t.Errorf("rows %v: stopped after %d addresses: %v", rows, n, last)
			}
			// With the context still live, and for less than a request's
			// latency: a fetch left running would still be waiting.
			deadline := time.Now().Add(30 * time.Millisecond)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if g := runtime.NumGoroutine(); g > before {
				t.Errorf("rows %v, cancelled %v: %d goroutines left behind", rows, cancelled, g-before)
			}
			cancel()
		}
	}
}

// seeds is n, or raced under the race detector (raceEnabled).
func seeds(n, raced int) int {
	if raceEnabled {
		return raced
	}
	return n
}
