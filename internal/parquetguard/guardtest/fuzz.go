package guardtest

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go/format"
)

// Fuzzed is a file's parts as a fuzz target draws them.
type Fuzzed struct {
	// Codec, Kind and Encoding pick the chunk's codec (any of the
	// format's, supported or not), the page's type (v1 or v2) and its
	// values' encoding, modulo their numbers of choices.
	Codec, Kind, Encoding uint8
	// Optional makes the column nullable: the payload starts with levels.
	Optional bool
	// NumValues is the page header's count of values.
	NumValues int32
	// Dict, if not empty, is the payload of a dictionary page before the
	// data page: PLAIN values, as many as it holds.
	Dict []byte
	// Payload is the data page's levels and values, compressed with the
	// codec if Compress (and parquet-go can), else stored as they are.
	Payload  []byte
	Compress bool
	// SizeDelta is added to the page's honest uncompressed size.
	SizeDelta int32
}

// File returns the file of one BYTE_ARRAY column named column, of one row
// group of NumValues rows.
func (f Fuzzed) File(column string) []byte {
	codec := format.CompressionCodec(f.Codec % 8)
	page := func(data []byte) Page {
		stored := data
		if f.Compress && (codec == format.Snappy || codec == format.Gzip || codec == format.Brotli || codec == format.Zstd || codec == format.Lz4Raw) {
			stored = Compress(codec, data)
		}
		p := DataPage(format.Uncompressed, format.Encoding(f.Encoding%10), f.NumValues, data)
		p.Data = stored
		p.Header.CompressedPageSize = int32(len(stored))
		p.Header.UncompressedPageSize = int32(len(data)) + f.SizeDelta
		return p
	}
	var pages []Page
	if len(f.Dict) > 0 {
		d := page(f.Dict)
		d.Header.Type = format.DictionaryPage
		d.Header.DataPageHeader.Valid = false
		d.Header.DictionaryPageHeader.Valid = true
		d.Header.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: int32(countPlain(f.Dict)), Encoding: format.Plain}
		pages = append(pages, d)
	}
	p := page(f.Payload)
	if f.Kind%2 == 1 {
		v1 := p.Header.DataPageHeader.V
		p.Header.Type = format.DataPageV2
		p.Header.DataPageHeader.Valid = false
		p.Header.DataPageHeaderV2.Valid = true
		p.Header.DataPageHeaderV2.V = format.DataPageHeaderV2{NumValues: v1.NumValues, NumRows: v1.NumValues, Encoding: v1.Encoding}
	}
	pages = append(pages, p)
	return File(int64(f.NumValues), Column{Name: column, Type: format.ByteArray, String: true, Optional: f.Optional, Codec: codec, Pages: pages})
}

// countPlain counts the PLAIN byte arrays at the start of data.
func countPlain(data []byte) int {
	n := 0
	for len(data) >= 4 {
		l := int(uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24)
		if l < 0 || l > len(data)-4 {
			break
		}
		data = data[4+l:]
		n++
	}
	return n
}

// FuzzSeeds returns Fuzzed parts of valid files: PLAIN values, a
// dictionary and its indexes, delta-encoded values, nullable values and
// v2 pages, each with every codec parquet-go reads.
func FuzzSeeds() []Fuzzed {
	plain := Plain([]byte("data/a"), []byte("data/b"), []byte("data/cc"))
	dba := append(append(Delta(0, 5, 5), Delta(6, 1, 2)...), "data/abcc"...)
	dlba := append(Delta(6, 6, 7), "data/adata/bdata/cc"...)
	indexes := []byte{2, 1<<1 | 1, 0b100100, 0} // 2 bits: one bit-packed group of 0, 1, 2
	var seeds []Fuzzed
	for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw} {
		c := uint8(codec)
		seeds = append(seeds,
			Fuzzed{Codec: c, Encoding: uint8(format.Plain), NumValues: 3, Payload: plain, Compress: true},
			Fuzzed{Codec: c, Encoding: uint8(format.RLEDictionary), NumValues: 3, Dict: plain, Payload: indexes, Compress: true},
			Fuzzed{Codec: c, Encoding: uint8(format.DeltaByteArray), NumValues: 3, Payload: dba, Compress: true},
			Fuzzed{Codec: c, Kind: 1, Encoding: uint8(format.DeltaLengthByteArray), NumValues: 3, Payload: dlba, Compress: true},
			Fuzzed{Codec: c, Encoding: uint8(format.Plain), Optional: true, NumValues: 3, Payload: append(Levels(3, 1, 1), plain...), Compress: true},
		)
	}
	return seeds
}

// FuzzInput returns the bytes of a saved fuzz input of one []byte (a file
// of testdata/fuzz/<target>/ that `go test -fuzz` wrote), so that a test can
// say what a checker must answer to it.
func FuzzInput(name string) ([]byte, error) {
	text, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(text), "\n")
	quoted, ok := strings.CutPrefix(lines[min(1, len(lines)-1)], "[]byte(")
	if !ok || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("%s: not a fuzz input of one []byte", name)
	}
	data, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []byte(data), nil
}
