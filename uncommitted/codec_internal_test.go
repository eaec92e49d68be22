package uncommitted

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"
)

// TestZstdCodecRoundTrip: what the default codec encodes, parquet-go's
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
