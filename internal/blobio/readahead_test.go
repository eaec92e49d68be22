package blobio_test

import (
	"bytes"
	"context"

	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/faultblob"
)

// accesses yields offsets and lengths of reads as decoders make them:
// mostly on from where the last read ended, sometimes past a skip (a
// column not read), sometimes anywhere (a footer, a jump back), some
// across the object's end or past it.
func accesses(r *rand.Rand, size, window, n int) [][2]int {
	var out [][2]int
	pos := 0
	for range n {
		switch x := r.IntN(10); {
		case x < 6:
		case x < 8:
			pos += r.IntN(2*window + 1)
		default:
			pos = r.IntN(size+10) - 3
		}
		length := r.IntN(3*window + 2)
		if r.IntN(4) == 0 {
			length = r.IntN(8)
		}
		out = append(out, [2]int{pos, length})
		pos += length
		if pos >= size {
			pos = 0
		}
	}
	return out
}

// TestReadAheadMatchesBytesReader reads objects through a ReaderAt with
// read-ahead, in the patterns of accesses, through windows and read-aheads
// of several sizes, and checks each read against bytes.Reader's ReadAt:
// the same bytes, count and EOF.
func TestReadAheadMatchesBytesReader(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 5))
		data := make([]byte, 1+r.IntN(6000))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		require.NoError(t, b.WriteAll(ctx, "obj", data, nil))
		model := bytes.NewReader(data)
		for _, window := range []int{1, 7, 100, 1000} {
			for _, ahead := range []int{1, 2, 8} {
				ra := blobio.NewReaderAt(ctx, b, "obj", int64(len(data)), window, blobio.WithReadAhead(ahead))
				for _, a := range accesses(r, len(data), window, 300) {
					off, length := int64(a[0]), a[1]
					p, q := make([]byte, length), make([]byte, length)
					n, err := ra.ReadAt(p, off)
					m, merr := model.ReadAt(q, off)
					require.Equal(t, m, n, "seed %d window %d ahead %d: read %d at %d: %v", seed, window, ahead, length, off, err)
					require.Equal(t, q[:m], p[:n], "seed %d window %d ahead %d: read %d at %d", seed, window, ahead, length, off)
					require.Equal(t, merr == nil, err == nil, "seed %d: %v, %v", seed, err, merr)
					require.Equal(t, merr == io.EOF, err == io.EOF, "seed %d: %v, %v", seed, err, merr)
				}
				require.NoError(t, ra.Close())
			}
		}
	}
}

// latencyHook answers each read after d (or its context's end), and
// records how many are answered at once at most.
type latencyHook struct {
	d             time.Duration
	running, peak atomic.Int64
}

func (h *latencyHook) hook(ctx context.Context, _ *faultblob.Call) error {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
	select {
	case <-time.After(h.d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestReadAheadUnderFaults reads objects sequentially and at random through
// a bucket that answers reads late, by a random latency, and fails some
// (throttled, denied, stalled, cut short): every read that succeeds
// returns what a plain ReaderAt over a healthy bucket returns, a read that
// fails returns nothing, and the reader reads on after a failure.
func TestReadAheadUnderFaults(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	for seed := range uint64(6) {
		fb, err := faultblob.New(mem, faultblob.WithSeed(seed), faultblob.WithRate(faultblob.Read, 0.15),
			faultblob.WithMaxStall(2*time.Millisecond),
			faultblob.WithLatency(faultblob.Read, func(string) time.Duration { return time.Duration(rand.IntN(1500)) * time.Microsecond }))
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(seed, 6))
		data := make([]byte, 20000+r.IntN(20000))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		require.NoError(t, mem.WriteAll(ctx, "obj", data, nil))
		plain := blobio.NewReaderAt(ctx, mem, "obj", int64(len(data)), 1000)
		ra := blobio.NewReaderAt(ctx, fb.Bucket(), "obj", int64(len(data)), 1000, blobio.WithReadAhead(4))
		failed := 0
		for _, a := range accesses(r, len(data), 1000, 400) {
			off, length := int64(a[0]), a[1]
			p, q := make([]byte, length), make([]byte, length)
			n, err := ra.ReadAt(p, off)
			m, merr := plain.ReadAt(q, off)
			if err != nil && err != io.EOF {
				if !errors.Is(err, faultblob.ErrInjected) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("seed %d: read %d at %d: %v", seed, length, off, err)
				}
				require.Zero(t, n)
				failed++
				continue
			}
			require.Equal(t, m, n, "seed %d: read %d at %d", seed, length, off)
			require.Equal(t, q[:m], p[:n], "seed %d: read %d at %d", seed, length, off)
			require.Equal(t, merr, err)
		}
		require.NoError(t, ra.Close())
		require.NotZero(t, failed, "seed %d: no read failed", seed)
		t.Logf("seed %d: %d reads failed, %d faults injected", seed, failed, fb.Total())
	}
}

// TestReadAheadConcurrent scans an object of 40 windows through a bucket
// that answers each read after 20 ms: the windows are fetched several at
// once, never more than the read-ahead, each about once.
func TestReadAheadConcurrent(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 40*64)
	require.NoError(t, mem.WriteAll(ctx, "obj", data, nil))
	for _, ahead := range []int{1, 4, 8} {
		h := &latencyHook{d: 20 * time.Millisecond}
		fb, err := faultblob.New(mem, faultblob.WithHook(faultblob.Read, h.hook))
		require.NoError(t, err)
		ra := blobio.NewReaderAt(ctx, fb.Bucket(), "obj", int64(len(data)), 1024, blobio.WithReadAhead(ahead))
		start := time.Now()
		p := make([]byte, 100)
		for off := int64(0); off < int64(len(data)); off += 100 {
			n, err := ra.ReadAt(p, off)
			if err != io.EOF {
				require.NoError(t, err)
			}
			require.Equal(t, data[off:off+int64(n)], p[:n])
		}
		require.NoError(t, ra.Close())
		t.Logf("read-ahead %d: %v, %d reads, at most %d at once", ahead, time.Since(start), fb.Calls(faultblob.Read), h.peak.Load())
		require.LessOrEqual(t, h.peak.Load(), int64(ahead))
		if ahead > 1 {
			require.GreaterOrEqual(t, h.peak.Load(), int64(2))
		}
		require.LessOrEqual(t, fb.Calls(faultblob.Read), int64(40+ahead))
	}
}

// settle waits up to 2 s for the goroutines to be at most before.
func settle(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
}

// TestReadAheadCancelled cancels the context of a scan while windows are
// being fetched: the read fails with the cancellation, and once the reader
// is closed no goroutine of it is left. Close alone, mid-scan, leaves none
// either, and reads after it fail with ErrClosed.
func TestReadAheadCancelled(t *testing.T) {
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	data := bytes.Repeat([]byte("x"), 64<<10)
	require.NoError(t, mem.WriteAll(context.Background(), "obj", data, nil))
	h := &latencyHook{d: 50 * time.Millisecond}
	fb, err := faultblob.New(mem, faultblob.WithHook(faultblob.Read, h.hook))
	require.NoError(t, err)
	for _, cancelFirst := range []bool{true, false} {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		ra := blobio.NewReaderAt(ctx, fb.Bucket(), "obj", int64(len(data)), 1024, blobio.WithReadAhead(8))
		p := make([]byte, 1500)
		_, err := ra.ReadAt(p, 0) // starts the stream of windows 0 to 7
		require.NoError(t, err)
		_, err = ra.ReadAt(p, 3000)
		require.NoError(t, err)
		if cancelFirst {
			stop := time.AfterFunc(10*time.Millisecond, cancel)
			_, err = ra.ReadAt(p, 12000) // a window still being fetched
			require.ErrorIs(t, err, context.Canceled)
			_, err = ra.ReadAt(p, 20000)
			stop.Stop()
			require.ErrorIs(t, err, context.Canceled)
		}
		require.NoError(t, ra.Close())
		_, err = ra.ReadAt(p, 0)
		require.ErrorIs(t, err, blobio.ErrClosed)
		cancel()
		settle(t, before)
	}
}

// TestReadAheadShortRead: a range read that ends short fails the read that
// needs its window, as without read-ahead; no short window is served.
func TestReadAheadShortRead(t *testing.T) {
	ctx := context.Background()
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	data := bytes.Repeat([]byte("0123456789"), 1000)
	require.NoError(t, mem.WriteAll(ctx, "obj", data, nil))
	fb, err := faultblob.New(mem, faultblob.WithShortRead(func(string) int64 { return 10 }))
	require.NoError(t, err)
	for _, opts := range [][]blobio.ReaderOption{nil, {blobio.WithReadAhead(4)}} {
		ra := blobio.NewReaderAt(ctx, fb.Bucket(), "obj", int64(len(data)), 100, opts...)
		p := make([]byte, 50)
		n, err := ra.ReadAt(p, 0)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		require.Zero(t, n)
		n, err = ra.ReadAt(p[:5], 0)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a failed window is not kept")
		require.Zero(t, n)
		require.NoError(t, ra.Close())
	}
}
