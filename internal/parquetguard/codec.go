package parquetguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// decompressor uncompresses pages with the decoders parquet-go uses, each
// capped at the size the page header claims: into a buffer of exactly that
// size for the block codecs (Snappy, LZ4_RAW, ZSTD), through a stream read
// no further than one byte past it for the others (GZIP, Brotli).
type decompressor struct {
	src bytes.Reader
	gz  *gzip.Reader
	br  *brotli.Reader
}

// zstdDecoders hold decoders that never write past the capacity of the
// buffer they are given (parquet-go's would allocate what a frame header
// claims), and refuse windows larger than a page could need.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(uint64(DefaultMaxPageSize)),
	)
	if err != nil {
		panic(err) // the options are constant
	}
	return d
}}

var errTooLong = errors.New("uncompresses to more bytes than its header says")

// decompress uncompresses src into dst, which must be exactly filled.
func (d *decompressor) decompress(codec format.CompressionCodec, dst, src []byte) error {
	switch codec {
	case format.Snappy:
		// The decoder allocates the length the block starts with, unless
		// dst holds it.
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return err
		}
		if n != len(dst) {
			return fmt.Errorf("block of %d bytes, the header says %d", n, len(dst))
		}
		_, err = snappy.Decode(dst, src)
		return err
	case format.Lz4Raw:
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			// parquet-go takes any error for a short buffer and grows
			// it forever.
			return err
		}
		return exactly(n, len(dst))
	case format.Zstd:
		z := zstdDecoders.Get().(*zstd.Decoder)
		defer zstdDecoders.Put(z)
		out, err := z.DecodeAll(src, dst[:0:len(dst)])
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return errTooLong
		}
		if err != nil {
			return err
		}
		return exactly(len(out), len(dst))
	case format.Gzip:
		d.src.Reset(src)
		var err error
		if d.gz == nil {
			d.gz, err = gzip.NewReader(&d.src)
		} else {
			err = d.gz.Reset(&d.src)
		}
		if err != nil {
			return err
		}
		return readExactly(d.gz, dst)
	case format.Brotli:
		d.src.Reset(src)
		if d.br == nil {
			d.br = brotli.NewReader(&d.src)
		} else if err := d.br.Reset(&d.src); err != nil {
			return err
		}
		return readExactly(d.br, dst)
	}
	return fmt.Errorf("%w: %v", ErrUnsupportedCodec, codec)
}

// readExactly fills dst from r and checks that r ends there.
func readExactly(r io.Reader, dst []byte) error {
	if n, err := io.ReadFull(r, dst); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return exactly(n, len(dst))
		}
		return err
	}
	var one [1]byte
	switch _, err := io.ReadFull(r, one[:]); err {
	case io.EOF:
		return nil
	case nil:
		return errTooLong
	default:
		return err
	}
}

func exactly(got, want int) error {
	if got != want {
		return fmt.Errorf("uncompresses to %d bytes, its header says %d", got, want)
	}
	return nil
}
