package uncommitted_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/uncommitted"
)

// TestAddressesUnderFaults reads a run of several files, of many row
// groups and pages, in windows of 4 KiB read ahead, through a bucket that
// answers late and fails some reads (throttled, denied, stalled, cut
// short): every read either yields every address of the run, in order,
// and no error, or a prefix of them and then an error; never fewer or
// other addresses without an error. ReadRun is held to the same.
func TestAddressesUnderFaults(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	r := rand.New(rand.NewPCG(28, 1))
	var want []string
	for f := range 3 {
		addresses := make([]string, 2000+r.IntN(3000))
		for i := range addresses {
			addresses[i] = fmt.Sprintf("data/%x/%016x", r.IntN(50), r.Uint64())
		}
		want = append(want, addresses...)
		var buf bytes.Buffer
		opts := []parquet.WriterOption{parquet.PageBufferSize(1 << 10), parquet.MaxRowsPerRowGroup(700),
			parquet.DataPageVersion(1 + f%2)}
		if f == 2 {
			opts = append(opts, parquet.Compression(&parquet.Gzip))
		}
		var err error
		if f == 1 {
			dict := make([]dictRow, len(addresses))
			for i, row := range asRows(addresses) {
				dict[i] = dictRow(row)
			}
			err = parquet.Write(&buf, dict, opts...)
		} else {
			err = parquet.Write(&buf, asRows(addresses), opts...)
		}
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("_lakefs/retention/gc/uncommitted/r/uncommitted/f%d", f)
		if err := mem.WriteAll(ctx, key, buf.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
	}
	defer uncommitted.SetReadWindow(4 << 10)()
	read := map[string]func(context.Context, *faultblob.Bucket) ([]string, error){
		"Addresses": func(ctx context.Context, fb *faultblob.Bucket) ([]string, error) {
			return readAddresses(ctx, fb.Bucket(), "r")
		},
		"ReadRun": func(ctx context.Context, fb *faultblob.Bucket) ([]string, error) {
			return readRunAddresses(ctx, fb.Bucket(), "r")
		},
	}
	for name, read := range read {
		whole, failed := 0, 0
		for seed := range uint64(seeds(40, 12)) {
			rate := []float64{0.002, 0.01, 0.05}[seed%3]
			fb, err := faultblob.New(mem, faultblob.WithSeed(seed), faultblob.WithRate(faultblob.Read, rate),
				faultblob.WithMaxStall(time.Millisecond),
				faultblob.WithLatency(faultblob.Read, func(string) time.Duration { return time.Duration(rand.IntN(300)) * time.Microsecond }))
			if err != nil {
				t.Fatal(err)
			}
			got, err := read(ctx, fb)
			if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("%s, seed %d: %d addresses, not a prefix of the run's %d (%v)", name, seed, len(got), len(want), err)
			}
			switch {
			case err != nil:
				failed++
			case len(got) != len(want):
				t.Fatalf("%s, seed %d: %d addresses of %d, and no error", name, seed, len(got), len(want))
			default:
				whole++
			}
		}
		t.Logf("%s: %d reads whole, %d failed", name, whole, failed)
		if whole == 0 || failed == 0 {
			t.Errorf("%s: %d reads whole, %d failed: not both", name, whole, failed)
		}
	}
}
