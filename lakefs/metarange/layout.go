package metarange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"
)

// A table is outside input, and this package reads it itself: layout
// checks every part of a table before any of it is used. Every block
// handle must lie inside the file, before its footer, the data blocks (and
// the index blocks of a two-level index) must come in file order, none
// overlapping the one before it, as pebble writes them, so that no block
// is read twice and the work is bounded by the file's size (table.each),
// every block must match its checksum,
// be Snappy or uncompressed and decompress to at most maxBlockSize bytes,
// and every entry and restart point of every block must lie inside its
// block. A checksum is no defence against a crafted file, so nothing is
// trusted because its checksum matches: every length read from the file
// is checked against the bytes that hold it before it is used, and no
// allocation is sized by the file beyond maxBlockSize.

// maxBlockSize bounds a block, as stored and decompressed. lakeFS's blocks
// hold about 4 KiB; only an entry larger than this would need more.
const maxBlockSize = 16 << 20

// The table formats read: those lakeFS's pebble writes (RocksDBv2 is its
// default) and the next two, which add what a reader of a table's point
// keys ignores (block properties after an index entry's handle, range key
// blocks). Later pebble formats store values apart and are refused, as is
// LevelDB's footer, which lakeFS never wrote.
const (
	footerLen       = 53 // RocksDB's and Pebble's footer
	blockTrailerLen = 5  // compression type, checksum
	rocksDBMagic    = "\xf7\xcf\xf4\x85\xb7\x41\xe2\x88"
	pebbleMagic     = "\xf0\x9f\xaa\xb3\xf0\x9f\xaa\xb3"

	noCompression     = 0
	snappyCompression = 1

	checksumCRC32C   = 1
	checksumXXHash64 = 3

	metaPropertiesName = "rocksdb.properties"
	metaValueIndexName = "pebble.value_index"
)

var errBlockOverrun = errors.New("entry overruns its block")

type handle struct{ off, length uint64 }

// layout checks a table held in memory, its blocks' checksums of the
// footer's type.
type layout struct {
	data     []byte
	checksum byte
}

// checkFooter reads the footer: the handles of the metaindex and index.
func (l *layout) checkFooter() (metaindex, index handle, err error) {
	if len(l.data) < footerLen {
		return handle{}, handle{}, fmt.Errorf("%d bytes is too short for a table", len(l.data))
	}
	f := l.data[len(l.data)-footerLen:]
	magic, version := string(f[footerLen-8:]), binary.LittleEndian.Uint32(f[footerLen-12:])
	switch {
	case magic == rocksDBMagic && version == 2:
	case magic == pebbleMagic && (version == 1 || version == 2):
	default:
		return handle{}, handle{}, fmt.Errorf("unsupported table format (magic %x, version %d)", magic, version)
	}
	if f[0] != checksumCRC32C && f[0] != checksumXXHash64 {
		return handle{}, handle{}, fmt.Errorf("unsupported checksum type %d", f[0])
	}
	l.checksum = f[0]
	metaindex, n, err := decodeHandle(f[1:])
	if err != nil {
		return handle{}, handle{}, fmt.Errorf("metaindex handle: %w", err)
	}
	index, _, err = decodeHandle(f[1+n:])
	if err != nil {
		return handle{}, handle{}, fmt.Errorf("index handle: %w", err)
	}
	return metaindex, index, nil
}

// checkBounds checks that a block and its trailer lie inside the file,
// before its footer (where pebble writes every block). checkFooter has
// checked the file holds a footer.
func (l *layout) checkBounds(h handle) error {
	size := uint64(len(l.data)) - footerLen
	if h.length > maxBlockSize {
		return fmt.Errorf("block of %d bytes", h.length)
	}
	if h.off > size || h.length+blockTrailerLen > size-h.off {
		return fmt.Errorf("block at %d of %d bytes overruns the %d bytes before the footer", h.off, h.length, size)
	}
	return nil
}

// block returns the contents of a block, after checking its bounds and
// its checksum, decompressed into *buf when it is compressed.
func (l *layout) block(h handle, buf *[]byte) ([]byte, error) {
	if err := l.checkBounds(h); err != nil {
		return nil, err
	}
	end := h.off + h.length
	want := binary.LittleEndian.Uint32(l.data[end+1:])
	if got := l.sum(l.data[h.off : end+1]); got != want {
		return nil, fmt.Errorf("block at %d: checksum %#08x, want %#08x", h.off, got, want)
	}
	raw := l.data[h.off:end]
	switch typ := l.data[end]; typ {
	case noCompression:
		return raw, nil
	case snappyCompression:
		n, err := snappy.DecodedLen(raw)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > maxBlockSize {
			return nil, fmt.Errorf("block decompresses to %d bytes", n)
		}
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		out, err := snappy.Decode((*buf)[:n], raw)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if len(out) != n {
			return nil, fmt.Errorf("snappy: %d bytes decoded, %d announced", len(out), n)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("block compression %d (lakeFS writes Snappy)", typ)
	}
}

// castagnoli is the table of CRC-32C, the checksum pebble writes.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sum is a block's checksum, of its bytes and its compression type: the
// CRC-32C masked as LevelDB masks it (rotated right 15 bits, plus a
// constant), or the low 32 bits of XXH64, as the footer says.
func (l *layout) sum(b []byte) uint32 {
	if l.checksum == checksumXXHash64 {
		return uint32(xxhash.Sum64(b))
	}
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// walkBlock checks a block's entries and restart points, and calls fn, if
// not nil, with each entry. A block is
//
//	entries | restart offsets (uint32 each) | number of restarts (uint32)
//
// and an entry is varint shared, varint unshared, varint value length, the
// key's bytes after those it shares with the previous key, and the value.
// Every restart offset must be the start of an entry, in order, that shares
// nothing with its predecessor.
func walkBlock(b []byte, fn func(key, value []byte) error) error {
	if len(b) < 4 {
		return fmt.Errorf("block of %d bytes", len(b))
	}
	numRestarts := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if numRestarts == 0 || 4*(numRestarts+1) > uint64(len(b)) {
		return fmt.Errorf("%d restart points in a %d-byte block", numRestarts, len(b))
	}
	end := len(b) - 4*int(numRestarts+1) // where entries end and restarts begin
	restarts := b[end : len(b)-4]
	if end == 0 {
		return nil // no entries: an empty block's restart points are never read
	}
	var key []byte
	next := 0 // the next restart point
	for pos := 0; pos < end; {
		shared, n := uvarint32(b[pos:end])
		if n <= 0 {
			return errBlockOverrun
		}
		isRestart := next < int(numRestarts) && int(binary.LittleEndian.Uint32(restarts[4*next:])) == pos
		if isRestart {
			next++
		}
		if pos == 0 && !isRestart {
			return fmt.Errorf("first entry is not a restart point")
		}
		if isRestart && shared != 0 || int64(shared) > int64(len(key)) {
			return fmt.Errorf("entry at %d shares %d bytes of a %d-byte key", pos, shared, len(key))
		}
		pos += n
		unshared, n := uvarint32(b[pos:end])
		if n <= 0 {
			return errBlockOverrun
		}
		pos += n
		valueLen, n := uvarint32(b[pos:end])
		if n <= 0 {
			return errBlockOverrun
		}
		pos += n
		if uint64(unshared)+uint64(valueLen) > uint64(end-pos) {
			return errBlockOverrun
		}
		key = append(key[:shared], b[pos:pos+int(unshared)]...)
		pos += int(unshared)
		value := b[pos : pos+int(valueLen)]
		pos += int(valueLen)
		if fn != nil {
			if err := fn(key, value); err != nil {
				return err
			}
		}
	}
	if next != int(numRestarts) {
		return fmt.Errorf("restart point %d is not the start of an entry", next)
	}
	return nil
}

// uvarint32 decodes a varint of at most 5 bytes and 32 bits, which pebble
// decodes alike; anything longer or larger is refused (n <= 0).
func uvarint32(b []byte) (uint32, int) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 5 || v > math.MaxUint32 {
		return 0, -1
	}
	return uint32(v), n
}

// decodeHandle decodes a block handle as pebble does (two uvarints), and
// returns the bytes it took.
func decodeHandle(b []byte) (handle, int, error) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return handle{}, 0, fmt.Errorf("bad offset varint")
	}
	length, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return handle{}, 0, fmt.Errorf("bad length varint")
	}
	return handle{off, length}, n + m, nil
}
