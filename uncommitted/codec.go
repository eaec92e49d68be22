package uncommitted

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdWindow is the window of the default codec's encoder: a page is
// compressed on its own and is at most maxPageBufferSize of values, so a
// larger window would find no more matches; parquet-go's ZSTD codec keeps
// the encoder's default (8 MiB), and a history buffer of 16 MiB with it.
const zstdWindow = 1 << 20

// zstdCodec is the default codec: ZSTD at its fastest level, as
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
