package blobio_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/faultblob"
)

// TestReadAheadConcurrentReaders reads objects through a ReaderAt with
// read-ahead from four goroutines at once, in the patterns of accesses,
// through a bucket that answers late and fails some reads, and closes it
// while they read (every other object): each read returns the object's
// bytes, the count and io.EOF as bytes.Reader does, or an error and
// nothing, or ErrClosed once closed; no goroutine is left behind. Run
// with -race, it checks the read-ahead's bookkeeping for data races.
func TestReadAheadConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	before := runtime.NumGoroutine()
	for seed := range uint64(10) {
		fb, err := faultblob.New(mem, faultblob.WithSeed(seed), faultblob.WithRate(faultblob.Read, 0.1),
			faultblob.WithMaxStall(time.Millisecond),
			faultblob.WithLatency(faultblob.Read, func(string) time.Duration { return time.Duration(rand.IntN(500)) * time.Microsecond }))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 9))
		data := make([]byte, 1+r.IntN(30000))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		mem.WriteAll(ctx, "obj", data, nil)
		window := 1 + r.IntN(2000)
		ra := blobio.NewReaderAt(ctx, fb.Bucket(), "obj", int64(len(data)), window, blobio.WithReadAhead(1+r.IntN(5)))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rr := rand.New(rand.NewPCG(seed, uint64(g)))
				for _, a := range accesses(rr, len(data), window, 200) {
					off, length := int64(a[0]), a[1]
					p := make([]byte, length)
					n, err := ra.ReadAt(p, off)
					if errors.Is(err, blobio.ErrClosed) {
						return
					}
					if err != nil && err != io.EOF {
						if n != 0 {
							t.Errorf("n %d with %v", n, err)
						}
						continue
					}
					if off < 0 {
						continue
					}
					want := 0
					if off < int64(len(data)) {
						want = min(length, len(data)-int(off))
					}
					if n != want || (n > 0 && !bytes.Equal(p[:n], data[off:off+int64(n)])) {
						t.Errorf("seed %d: read %d at %d: n %d, wrong bytes or count", seed, length, off, n)
					}
					if (err == io.EOF) != (want < length || off >= int64(len(data))) {
						t.Errorf("eof %v", err)
					}
				}
			}()
		}
		if seed%2 == 0 {
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
			ra.Close()
		}
		wg.Wait()
		ra.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if runtime.NumGoroutine() > before {
		t.Errorf("goroutines left")
	}
}
