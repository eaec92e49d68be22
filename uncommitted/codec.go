package uncommitted

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// Zstd returns a ZSTD codec for WithCompression: the fastest level, as
// parquet-go's zstd.Codec{Level: zstd.SpeedFastest}, but with an encoder
// window of 1 MiB (a page is compressed alone and holds at most 256 KiB of
// values), so a write keeps about 1 MiB of encoder history instead of 16.
// On the bottom line's addresses (BenchmarkCodec, BENCHMARKS.md) its files
// took about a third less CPU than GZIP at DefaultGzipLevel to read back
// and a little less to write, and were a third smaller, for a fifth fewer
// range reads. ReadRun and Addresses read it, as does every reader of
// Parquet's ZSTD (Spark from 3.2, Arrow, DuckDB); Spark 3.0 and 3.1, which
// lakeFS's Spark client for Scala 2.12 is built against, read it only
// through Hadoop's native zstd library and fail without it, so the default
// stays lakeFS's GZIP. lakegc.Collect writes its exports with it: they are
// read back only by its own mark. The codec is safe for concurrent use.
// Every call returns the same codec, whose encoders (each with its 1 MiB
// window, costly to make) are pooled across exports.
func Zstd() compress.Codec { return sharedZstd }

var sharedZstd = &zstdCodec{}

// zstdWindow is the window of Zstd's encoder: a page is
// compressed on its own and is at most maxPageBufferSize of values, so a
// larger window would find no more matches; parquet-go's ZSTD codec keeps
// the encoder's default (8 MiB), and a history buffer of 16 MiB with it.
const zstdWindow = 1 << 20

// zstdCodec is Zstd's codec: ZSTD at its fastest level, as
// parquet-go's zstd.Codec{Level: zstd.SpeedFastest} writes it but with an
// encoder of zstdWindow, so about 1 MiB of history instead of 16. It
// decodes as parquet-go's. Safe for concurrent use.
type zstdCodec struct {
	encoders sync.Pool // of *kzstd.Encoder
	decoder  zstd.Codec
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(nil,
			kzstd.WithEncoderConcurrency(1),
			kzstd.WithEncoderLevel(kzstd.SpeedFastest),
			kzstd.WithWindowSize(zstdWindow),
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false),
		)
		if err != nil {
			return dst[:0], err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	return c.decoder.Decode(dst, src)
}
