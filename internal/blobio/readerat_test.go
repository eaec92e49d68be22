package blobio_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/blobio"
)

// TestReadAtMatchesBytesReader reads random ranges of an object, inside it,
// across its end and past it, through windows of every size, and checks
// each read against bytes.Reader's ReadAt: the same bytes, count and EOF.
func TestReadAtMatchesBytesReader(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 4))
		data := make([]byte, r.IntN(5000))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		require.NoError(t, b.WriteAll(ctx, "obj", data, nil))
		model := bytes.NewReader(data)
		for _, window := range []int{0, 1, 100, 1 << 20} {
			ra := blobio.NewReaderAt(ctx, b, "obj", int64(len(data)), window)
			for range 200 {
				off := int64(r.IntN(len(data)+20)) - 5
				p := make([]byte, r.IntN(300))
				q := make([]byte, len(p))
				n, err := ra.ReadAt(p, off)
				m, merr := model.ReadAt(q, off)
				require.Equal(t, m, n, "seed %d window %d: read %d at %d", seed, window, len(p), off)
				require.Equal(t, q[:m], p[:n])
				require.Equal(t, merr == nil, err == nil, "seed %d: %v, %v", seed, err, merr)
				require.Equal(t, merr == io.EOF, err == io.EOF, "seed %d: %v, %v", seed, err, merr)
			}
		}
	}
}

// TestReadAtConcurrent reads one object from many goroutines at once.
func TestReadAtConcurrent(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	data := bytes.Repeat([]byte("0123456789"), 1000)
	require.NoError(t, b.WriteAll(ctx, "obj", data, nil))
	ra := blobio.NewReaderAt(ctx, b, "obj", int64(len(data)), 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 37)
			for off := int64(g); off+37 <= int64(len(data)); off += 91 {
				if _, err := ra.ReadAt(p, off); err != nil || !bytes.Equal(p, data[off:off+37]) {
					t.Errorf("at %d: %q, %v", off, p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestReadAtBucketError: the bucket's error comes back as it is.
func TestReadAtBucketError(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	_, err := blobio.NewReaderAt(context.Background(), b, "missing", 10, 0).ReadAt(make([]byte, 4), 0)
	require.Equal(t, gcerrors.NotFound, gcerrors.Code(err))
	require.False(t, errors.Is(err, io.EOF))
}
