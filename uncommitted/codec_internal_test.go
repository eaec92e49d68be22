package uncommitted

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// TestZstdCodecRoundTrip: what Zstd's codec encodes, parquet-go's
// ZSTD codec decodes to the same bytes, for pages from empty to larger
// than its window, compressible or not, encoded concurrently.
func TestZstdCodecRoundTrip(t *testing.T) {
	c := &zstdCodec{}
	var pz zstd.Codec
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, maxPageBufferSize, zstdWindow + 12345, 3 * zstdWindow} {
		for _, random := range []bool{false, true} {
			src := make([]byte, n)
			for i := range src {
				if random {
					src[i] = byte(r.Uint32())
				} else {
					src[i] = "data/0123456789abcdefghij/"[i%26] + byte(i/4096%3)
				}
			}
			enc, err := c.Encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := pz.Decode(nil, enc)
			if err != nil || !bytes.Equal(dec, src) {
				t.Fatalf("%d bytes (random %v): decoded %d bytes, %v", n, random, len(dec), err)
			}
			if dec, err = c.Decode(nil, enc); err != nil || !bytes.Equal(dec, src) {
				t.Fatalf("%d bytes (random %v): own decode %d bytes, %v", n, random, len(dec), err)
			}
		}
	}
	done := make(chan []byte)
	for i := range 4 {
		go func() {
			src := bytes.Repeat([]byte{byte(i), 'x', 'y'}, 50000)
			enc, _ := c.Encode(nil, src)
			dec, _ := pz.Decode(nil, enc)
			if !bytes.Equal(dec, src) {
				dec = nil
			}
			done <- dec
		}()
	}
	for range 4 {
		if <-done == nil {
			t.Fatal("a concurrent encode did not decode back")
		}
	}
}

// TestZstdCodecWindow: every frame Zstd's codec writes declares a
// window of at most zstdWindow (a single-segment frame's is its content
// size, at most zstdWindow too) and its content size, and decodes through
// a streaming decoder that allows no larger window, as a reader with a
// bounded window buffer does; pages larger than the window included.
func TestZstdCodecWindow(t *testing.T) {
	c := &zstdCodec{}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 1000, maxPageBufferSize, zstdWindow, zstdWindow + 1, 3 * zstdWindow} {
		src := make([]byte, n)
		for i := range src {
			if i%1000 < 500 {
				src[i] = byte(r.Uint32())
			} else {
				src[i] = src[i/2] // matches from far back, beyond the window for the later bytes
			}
		}
		enc, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		var h kzstd.Header
		if err := h.Decode(enc); err != nil {
			t.Fatal(err)
		}
		window := h.WindowSize
		if h.SingleSegment {
			window = h.FrameContentSize
		}
		if window > zstdWindow || (n > 1 && (!h.HasFCS || h.FrameContentSize != uint64(n))) {
			t.Fatalf("%d bytes: frame header %+v", n, h)
		}
		d, err := kzstd.NewReader(bytes.NewReader(enc), kzstd.WithDecoderMaxWindow(zstdWindow), kzstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(d)
		d.Close()
		if err != nil || !bytes.Equal(out, src) {
			t.Fatalf("%d bytes: a decoder of a %d-byte window read %d bytes, %v", n, zstdWindow, len(out), err)
		}
	}
}
