// Package guardtest builds Parquet files page by page, with whatever page
// headers and payloads a test wants, a corpus of hostile files, and the
// tests (Reader) that every reader package parquetguard protects runs on
// them.
package guardtest

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Column is one column of a one-row-group file.
type Column struct {
	Name     string
	Type     format.Type
	Optional bool
	// String marks a BYTE_ARRAY column as UTF-8 text.
	String bool
	Codec  format.CompressionCodec
	Pages  []Page
}

// Page is one page as stored: its header (RawHeader, if set, replaces the
// encoding of Header) and its payload.
type Page struct {
	Header    format.PageHeader
	RawHeader []byte
	Data      []byte
}

// File returns a Parquet file of one row group of rows rows holding the
// columns, pages in order.
func File(rows int64, cols ...Column) []byte {
	pages, md := Layout(rows, cols...)
	return WithFooter(pages, Marshal(md))
}

// Layout returns the start of the file File writes, up to its footer, and
// that footer.
func Layout(rows int64, cols ...Column) ([]byte, *format.FileMetaData) {
	md := Metadata(rows, cols...)
	out := []byte("PAR1")
	for i, c := range cols {
		chunk := &md.RowGroups[0].Columns[i].MetaData
		chunk.DataPageOffset = int64(len(out))
		for _, p := range c.Pages {
			h := p.RawHeader
			if h == nil {
				h = Marshal(&p.Header)
			}
			out = append(out, h...)
			out = append(out, p.Data...)
		}
		chunk.TotalCompressedSize = int64(len(out)) - chunk.DataPageOffset
		chunk.TotalUncompressedSize = chunk.TotalCompressedSize
	}
	return out, md
}

// Metadata returns the footer File writes for the columns, without their
// offsets.
func Metadata(rows int64, cols ...Column) *format.FileMetaData {
	md := &format.FileMetaData{
		Version: 1,
		NumRows: rows,
		Schema:  []format.SchemaElement{{Name: "schema"}},
	}
	md.Schema[0].NumChildren.Valid, md.Schema[0].NumChildren.V = true, int32(len(cols))
	rg := format.RowGroup{NumRows: rows}
	for _, c := range cols {
		e := format.SchemaElement{Name: c.Name}
		e.Type.Valid, e.Type.V = true, c.Type
		e.RepetitionType.Valid, e.RepetitionType.V = true, format.Required
		if c.Optional {
			e.RepetitionType.V = format.Optional
		}
		if c.String {
			e.ConvertedType.Valid, e.ConvertedType.V = true, 0 // UTF8
			e.LogicalType.Value = &format.StringType{}
		}
		md.Schema = append(md.Schema, e)
		var values int64
		encodings := []format.Encoding{format.RLE}
		for _, p := range c.Pages {
			switch {
			case p.Header.DataPageHeader.Valid:
				values += int64(p.Header.DataPageHeader.V.NumValues)
				encodings = append(encodings, p.Header.DataPageHeader.V.Encoding)
			case p.Header.DataPageHeaderV2.Valid:
				values += int64(p.Header.DataPageHeaderV2.V.NumValues)
				encodings = append(encodings, p.Header.DataPageHeaderV2.V.Encoding)
			case p.Header.DictionaryPageHeader.Valid:
				encodings = append(encodings, format.Plain)
			}
		}
		slices.Sort(encodings)
		rg.Columns = append(rg.Columns, format.ColumnChunk{MetaData: format.ColumnMetaData{
			Type:         c.Type,
			Encoding:     slices.Compact(encodings),
			PathInSchema: []string{c.Name},
			Codec:        c.Codec,
			NumValues:    values,
		}})
	}
	md.RowGroups = []format.RowGroup{rg}
	return md
}

// WithFooter appends a footer, its length and the magic bytes to a file's
// pages.
func WithFooter(pages, footer []byte) []byte {
	out := append(slices.Clip(pages), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// DataPage returns a v1 data page of n values whose uncompressed bytes
// (levels, then values) are data, stored compressed with codec; its header
// is honest.
func DataPage(codec format.CompressionCodec, enc format.Encoding, n int32, data []byte) Page {
	stored := Compress(codec, data)
	p := Page{Header: format.PageHeader{
		Type:                 format.DataPage,
		UncompressedPageSize: int32(len(data)),
		CompressedPageSize:   int32(len(stored)),
	}, Data: stored}
	p.Header.DataPageHeader.Valid = true
	p.Header.DataPageHeader.V = format.DataPageHeader{
		NumValues: n, Encoding: enc,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
	}
	return p
}

// DictionaryPage returns a dictionary page of n PLAIN values, data,
// stored compressed with codec.
func DictionaryPage(codec format.CompressionCodec, n int32, data []byte) Page {
	stored := Compress(codec, data)
	p := Page{Header: format.PageHeader{
		Type:                 format.DictionaryPage,
		UncompressedPageSize: int32(len(data)),
		CompressedPageSize:   int32(len(stored)),
	}, Data: stored}
	p.Header.DictionaryPageHeader.Valid = true
	p.Header.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: n, Encoding: format.Plain}
	return p
}

// Compress compresses data with parquet-go's codec.
func Compress(codec format.CompressionCodec, data []byte) []byte {
	if codec == format.Uncompressed {
		return slices.Clone(data)
	}
	out, err := parquet.LookupCompressionCodec(codec).Encode(nil, data)
	if err != nil {
		panic(err)
	}
	return out
}

// Plain returns byte arrays PLAIN-encoded, each after its length.
func Plain(values ...[]byte) []byte {
	var out []byte
	for _, v := range values {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(v)))
		out = append(out, v...)
	}
	return out
}

// Levels returns RLE/bit-packed hybrid levels, after their 4-byte length as
// a v1 data page stores them: one RLE run of count values of value (of
// width bits, at most 8).
func Levels(count uint64, value byte, width int) []byte {
	run := binary.AppendUvarint(nil, count<<1)
	if width > 0 {
		run = append(run, value)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(run))), run...)
}

// Delta returns int32 values DELTA_BINARY_PACKED as writers do: blocks of
// 128 values in 4 miniblocks of 32, each of the fewest bits its deltas need.
func Delta(values ...int32) []byte {
	out := binary.AppendUvarint(nil, 128)
	out = binary.AppendUvarint(out, 4)
	out = binary.AppendUvarint(out, uint64(len(values)))
	if len(values) == 0 {
		return binary.AppendVarint(out, 0)
	}
	out = binary.AppendVarint(out, int64(values[0]))
	for i := 1; i < len(values); i += 128 {
		deltas := make([]int32, min(128, len(values)-i))
		minDelta := int32(math.MaxInt32)
		for j := range deltas {
			deltas[j] = values[i+j] - values[i+j-1]
			minDelta = min(minDelta, deltas[j])
		}
		out = binary.AppendVarint(out, int64(minDelta))
		widths := len(out)
		out = append(out, 0, 0, 0, 0)
		for m := 0; m < len(deltas); m += 32 {
			mini := make([]uint32, 32)
			width := 0
			for j := m; j < min(m+32, len(deltas)); j++ {
				mini[j-m] = uint32(deltas[j] - minDelta)
				width = max(width, bits.Len32(mini[j-m]))
			}
			out[widths+m/32] = byte(width)
			packed := make([]byte, 32*width/8)
			for j, v := range mini {
				for b := range width {
					if v>>b&1 == 1 {
						packed[(j*width+b)/8] |= 1 << ((j*width + b) % 8)
					}
				}
			}
			out = append(out, packed...)
		}
	}
	return out
}

// Repeated returns a v1 data page of n values whose uncompressed bytes are
// times copies of data, stored compressed with codec: for GZIP and ZSTD,
// as times compressed copies (members, frames) that decoders read as one,
// which takes little time to build.
func Repeated(codec format.CompressionCodec, enc format.Encoding, n int32, data []byte, times int) Page {
	if codec != format.Gzip && codec != format.Zstd {
		return DataPage(codec, enc, n, bytes.Repeat(data, times))
	}
	p := DataPage(codec, enc, n, data)
	p.Data = bytes.Repeat(p.Data, times)
	p.Header.CompressedPageSize = int32(len(p.Data))
	p.Header.UncompressedPageSize = int32(len(data) * times)
	return p
}

// Marshal encodes a footer or a page header.
func Marshal(v any) []byte {
	b, err := thrift.Marshal(new(thrift.CompactProtocol), v)
	if err != nil {
		panic(err)
	}
	return b
}
