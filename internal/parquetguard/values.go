package parquetguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/parquet-go/parquet-go/format"
)

// plainDictionary is PLAIN_DICTIONARY, deprecated in the format but still
// written by parquet-mr's v1 writer and lakeFS's: RLE_DICTIONARY in a data
// page, PLAIN in a dictionary page.
const plainDictionary format.Encoding = 2

// levelSlack is how many values the RLE/bit-packed runs of a page may hold
// past its values: a writer pads its last bit-packed run, to a multiple of 8
// (parquet-go, Arrow) or of 256 (DuckDB, whose bit-packed runs of
// dictionary indexes are 256 values long: a page of 848 values has 1,024).
// The values past the page's are checked for nothing and never used.
const levelSlack = 256

// levelsV1 checks the levels at the start of a v1 data page, after their
// 4-byte length as parquet-go reads them, and returns the bytes after them.
func levelsV1(enc format.Encoding, maxLevel, n int, data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, errors.New("truncated")
	}
	size := binary.LittleEndian.Uint32(data)
	if uint64(size) > uint64(len(data)-4) {
		return nil, fmt.Errorf("%d bytes in a page of %d", size, len(data))
	}
	src := data[4 : 4+size]
	width := bits.Len(uint(maxLevel))
	switch enc {
	case format.RLE:
		if _, err := hybrid(src, width, n+levelSlack, nil); err != nil {
			return nil, err
		}
	case format.BitPacked:
		// Every bit of src decodes.
		if int64(len(src))*8/int64(width) > int64(n+levelSlack) {
			return nil, fmt.Errorf("%d bytes of %d-bit levels for %d values", len(src), width, n)
		}
	default:
		return nil, fmt.Errorf("encoding %v", enc)
	}
	return data[4+size:], nil
}

// levelsV2 checks the levels of a v2 data page, which parquet-go skips
// when the column has none.
func levelsV2(maxLevel, n int, src []byte) error {
	if maxLevel == 0 || len(src) == 0 {
		return nil
	}
	_, err := hybrid(src, bits.Len(uint(maxLevel)), n+levelSlack, nil)
	return err
}

// checkDictionary checks a dictionary page's values (PLAIN) and records
// the lengths of its entries for the pages that refer to them.
func (c *chunk) checkDictionary(h *format.DictionaryPageHeader, data []byte) error {
	if h.Encoding != format.Plain && h.Encoding != plainDictionary {
		return fmt.Errorf("dictionary encoding %v", h.Encoding)
	}
	n := int(h.NumValues)
	switch c.col.typ {
	case format.ByteArray:
		c.dict = c.dict[:0]
		if err := c.plainByteArrays(data, n, func(l int) { c.dict = append(c.dict, int32(l)) }); err != nil {
			return fmt.Errorf("dictionary: %w", err)
		}
		if len(c.dict) != n {
			return fmt.Errorf("dictionary of %d entries claims %d", len(c.dict), n)
		}
	case format.Boolean:
		return errors.New("dictionary of booleans")
	default:
		if len(data) != n*c.col.width() {
			return fmt.Errorf("dictionary of %d bytes claims %d values of %d", len(data), n, c.col.width())
		}
	}
	c.dictLen = n
	return nil
}

// checkValues checks the values of a data page, at most n of them, as
// parquet-go decodes them with encoding enc.
func (c *chunk) checkValues(enc format.Encoding, n int, data []byte) error {
	if c.onPage != nil {
		return c.plainPage(enc, n, data)
	}
	byteArray := c.col.typ == format.ByteArray
	switch enc {
	case format.Plain:
		if byteArray {
			return c.plainByteArrays(data, n, func(int) {})
		}
		return nil // decoded in place
	case plainDictionary, format.RLEDictionary:
		return c.indexes(data, n)
	case format.RLE:
		if c.col.typ != format.Boolean {
			break
		}
		if len(data) < 4 || uint64(binary.LittleEndian.Uint32(data)) > uint64(len(data)-4) {
			return errors.New("truncated RLE booleans")
		}
		_, err := hybrid(data[4:4+binary.LittleEndian.Uint32(data)], 1, n+levelSlack, nil)
		return err
	case format.DeltaBinaryPacked:
		switch c.col.typ {
		case format.Int32:
			_, _, err := deltaRun(data, n, 32, nil)
			return err
		case format.Int64:
			_, _, err := deltaRun(data, n, 64, nil)
			return err
		}
	case format.DeltaLengthByteArray:
		if byteArray {
			return c.deltaLengths(data, n)
		}
	case format.DeltaByteArray:
		if byteArray {
			return c.deltaByteArrays(data, n)
		}
	case format.ByteStreamSplit:
		if c.col.width() > 0 {
			return nil // checkHeader bounded n values of this width
		}
	}
	return fmt.Errorf("encoding %v of %v values", enc, c.col.typ)
}

// plainByteArrays walks PLAIN byte arrays, each after its 4-byte length;
// there must be at most n, each within MaxValueSize.
func (c *chunk) plainByteArrays(data []byte, n int, each func(int)) error {
	for count := 0; len(data) > 0; count++ {
		if count == n {
			return fmt.Errorf("more than %d values", n)
		}
		if len(data) < 4 {
			return errors.New("truncated value")
		}
		l := binary.LittleEndian.Uint32(data)
		if uint64(l) > uint64(len(data)-4) {
			return fmt.Errorf("value of %d bytes, %d left", l, len(data)-4)
		}
		if int64(l) > int64(c.lim.MaxValueSize) {
			return fmt.Errorf("value of %d bytes (limit %d)", l, c.lim.MaxValueSize)
		}
		each(int(l))
		data = data[4+l:]
	}
	return nil
}

// indexes checks the dictionary indexes of a page: a bit width, then an
// RLE/bit-packed run. For byte arrays, the bytes of the entries they refer
// to are bounded like those of a page.
func (c *chunk) indexes(data []byte, n int) error {
	if c.dictLen < 0 {
		return errors.New("dictionary-encoded page before its dictionary")
	}
	if len(data) == 0 {
		return nil
	}
	width := int(data[0])
	if width > 32 {
		return fmt.Errorf("indexes of %d bits", width)
	}
	var visit func(v uint64, count int) error
	if c.col.typ == format.ByteArray {
		var seen, total int64
		visit = func(v uint64, count int) error {
			count = int(min(int64(count), int64(n)-seen))
			seen += int64(count)
			if count <= 0 {
				return nil
			}
			if v >= uint64(c.dictLen) {
				return fmt.Errorf("index %d into a dictionary of %d", v, c.dictLen)
			}
			if total += int64(count) * int64(c.dict[v]); total > int64(c.lim.MaxPageSize) {
				return fmt.Errorf("values of more than %d bytes", c.lim.MaxPageSize)
			}
			return nil
		}
	}
	_, err := hybrid(data[1:], width, n+levelSlack, visit)
	return err
}

// deltaLengths checks DELTA_LENGTH_BYTE_ARRAY values: their lengths, then
// their bytes.
func (c *chunk) deltaLengths(data []byte, n int) error {
	var total int64
	rest, _, err := deltaRun(data, n, 32, func(l int32) error {
		if l < 0 || int(l) > c.lim.MaxValueSize {
			return fmt.Errorf("value of %d bytes (limit %d)", l, c.lim.MaxValueSize)
		}
		total += int64(l)
		return nil
	})
	if err != nil {
		return err
	}
	if total > int64(len(rest)) {
		return fmt.Errorf("values of %d bytes in %d", total, len(rest))
	}
	return nil
}

// deltaByteArrays checks DELTA_BYTE_ARRAY values: each shares a prefix
// with the one before, so a few bytes can describe many large values.
func (c *chunk) deltaByteArrays(data []byte, n int) error {
	c.prefix = c.prefix[:0]
	rest, np, err := deltaRun(data, n, 32, func(p int32) error {
		c.prefix = append(c.prefix, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("prefix lengths: %w", err)
	}
	var i, last int
	var suffixes, total int64
	rest, ns, err := deltaRun(rest, n, 32, func(s int32) error {
		if i >= np {
			return fmt.Errorf("more suffixes than the %d prefixes", np)
		}
		p := c.prefix[i]
		i++
		if p < 0 || int(p) > last || s < 0 {
			return fmt.Errorf("value of prefix %d (of %d bytes before) and suffix %d", p, last, s)
		}
		last = int(p) + int(s)
		if last > c.lim.MaxValueSize {
			return fmt.Errorf("value of %d bytes (limit %d)", last, c.lim.MaxValueSize)
		}
		suffixes += int64(s)
		if total += int64(last); total > int64(c.lim.MaxPageSize) {
			return fmt.Errorf("values of more than %d bytes", c.lim.MaxPageSize)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("suffix lengths: %w", err)
	}
	if ns != np || suffixes > int64(len(rest)) {
		return fmt.Errorf("%d prefixes, %d suffixes of %d bytes in %d", np, ns, suffixes, len(rest))
	}
	return nil
}

// hybrid walks an RLE/bit-packed hybrid run of width-bit values as
// parquet-go decodes it, and returns the number of values, which may not
// exceed limit. visit, if set, sees every value, a run of equal values at
// once.
func hybrid(src []byte, width, limit int, visit func(v uint64, count int) error) (int, error) {
	valueBytes := (width + 7) / 8
	total := 0
	for len(src) > 0 {
		h, k := binary.Uvarint(src)
		if k <= 0 {
			return 0, errors.New("truncated run header")
		}
		src = src[k:]
		count := h >> 1
		if count == 0 {
			continue
		}
		if count > math.MaxInt32 {
			return 0, fmt.Errorf("run of %d values", count)
		}
		packed := h&1 == 1
		if packed {
			// count groups of 8 values, width bytes each
			size := count * uint64(width)
			if size > uint64(len(src)) {
				return 0, fmt.Errorf("bit-packed run of %d bytes, %d left", size, len(src))
			}
			count *= 8
		} else if valueBytes > len(src) {
			return 0, errors.New("truncated run value")
		}
		if count > uint64(limit-total) {
			return 0, fmt.Errorf("more than %d values", limit)
		}
		switch {
		case packed:
			if visit != nil {
				for j := range int(count) {
					if err := visit(bitsAt(src, width, j), 1); err != nil {
						return 0, err
					}
				}
			}
			src = src[int(count)/8*width:]
		default:
			var b [8]byte
			copy(b[:], src[:valueBytes])
			if visit != nil {
				if err := visit(binary.LittleEndian.Uint64(b[:]), int(count)); err != nil {
					return 0, err
				}
			}
			src = src[valueBytes:]
		}
		total += int(count)
	}
	return total, nil
}

// deltaRun walks a DELTA_BINARY_PACKED run of at most limit values of
// width bits (32 or 64) as parquet-go decodes it: every miniblock it reads
// must be whole. For 32-bit values, each, if set, sees every value, wrapped
// as parquet-go computes it. It returns the bytes after the run.
func deltaRun(src []byte, limit, width int, each func(int32) error) (rest []byte, n int, err error) {
	var hdr [3]uint64
	for i := range hdr {
		v, k := binary.Uvarint(src)
		if k <= 0 {
			return nil, 0, errors.New("truncated delta header")
		}
		hdr[i], src = v, src[k:]
	}
	first, k := binary.Varint(src)
	if k <= 0 {
		return nil, 0, errors.New("truncated delta header")
	}
	src = src[k:]
	blockSize, miniBlocks, total := hdr[0], hdr[1], hdr[2]
	switch {
	case blockSize == 0 || blockSize%128 != 0 || blockSize > 1<<16:
		return nil, 0, fmt.Errorf("delta block of %d values", blockSize)
	case miniBlocks == 0 || miniBlocks > blockSize || blockSize/miniBlocks%32 != 0:
		return nil, 0, fmt.Errorf("%d miniblocks in a delta block of %d", miniBlocks, blockSize)
	case total > uint64(limit):
		return nil, 0, fmt.Errorf("%d delta values, at most %d expected", total, limit)
	case total == 0:
		return src, 0, nil
	case width == 32 && (first < math.MinInt32 || first > math.MaxInt32):
		return nil, 0, fmt.Errorf("first value %d", first)
	}
	perMini := int(blockSize / miniBlocks)
	left := int(total) - 1
	last := int32(first)
	if each != nil {
		if err := each(last); err != nil {
			return nil, 0, err
		}
	}
	for left > 0 && len(src) > 0 {
		minDelta, k := binary.Varint(src)
		if k <= 0 {
			return nil, 0, errors.New("truncated delta block")
		}
		src = src[k:]
		if uint64(len(src)) < miniBlocks {
			return nil, 0, errors.New("truncated delta bit widths")
		}
		widths := src[:miniBlocks]
		src = src[miniBlocks:]
		for _, bw := range widths {
			m := min(perMini, left)
			size := perMini * int(bw) / 8
			if int(bw) > width || size > len(src) {
				return nil, 0, fmt.Errorf("miniblock of %d-bit deltas, %d bytes left", bw, len(src))
			}
			if each != nil {
				for j := range m {
					d := int32(0)
					if bw != 0 {
						d = int32(uint32(bitsAt(src, int(bw), j)))
					}
					last += d + int32(minDelta)
					if err := each(last); err != nil {
						return nil, 0, err
					}
				}
			}
			src = src[size:]
			if left -= m; left == 0 {
				break
			}
		}
	}
	if left > 0 {
		return nil, 0, fmt.Errorf("%d delta values missing", left)
	}
	return src, int(total), nil
}

// bitsAt returns the i-th width-bit value (width at most 32) of
// little-endian bit-packed data, zero past its end.
func bitsAt(data []byte, width, i int) uint64 {
	bit := i * width
	var b [8]byte
	if at := bit / 8; at < len(data) {
		copy(b[:], data[at:])
	}
	return binary.LittleEndian.Uint64(b[:]) >> (bit % 8) & (1<<width - 1)
}
