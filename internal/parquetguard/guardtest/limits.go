package guardtest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go/format"
)

// AtLimits returns files that parquetguard's default limits accept and that
// cost a reader the most, for pages of values values (a power of two up to
// DefaultMaxPageValues, which gives the most): GZIP pages of the largest
// size, uncompressed from a few KiB, of PLAIN values, of delta byte arrays
// that repeat one value, a dictionary and indexes into it, nullable values
// stored uncompressed, and a footer of 40 000 row groups (fewer with fewer
// values). Each has a
// BYTE_ARRAY column named column and, for the dictionary, an INT64 column
// named intColumn unless it is empty.
func AtLimits(column, intColumn string, values int) []Case {
	const size = parquetguard.DefaultMaxPageSize
	n := int32(values)
	str := func(codec format.CompressionCodec, pages ...Page) Column {
		return Column{Name: column, Type: format.ByteArray, String: true, Codec: codec, Pages: pages}
	}
	var cases []Case
	add := func(name string, data []byte) { cases = append(cases, Case{fmt.Sprintf(name, values), data}) }

	// values values of the same length, each after its 4-byte length,
	// filling a page; a repeated chunk of 1 MiB (or less).
	length := size/values - 4
	value := bytes.Repeat([]byte("a"), length)
	chunkValues := max(1, (1<<20)/(length+4))
	chunk := bytes.Repeat(append(binary.LittleEndian.AppendUint32(nil, uint32(length)), value...), chunkValues)
	add("PLAIN page of 16 MiB, %d values", File(int64(n), str(format.Gzip, Repeated(format.Gzip, format.Plain, n, chunk, values/chunkValues))))

	prefixes, suffixes := make([]int32, values), make([]int32, values)
	for i := range prefixes {
		prefixes[i] = int32(length)
	}
	prefixes[0], suffixes[0] = 0, int32(length)
	dba := append(append(Delta(prefixes...), Delta(suffixes...)...), value...)
	add("DELTA_BYTE_ARRAY page of 16 MiB of values, %d values", File(int64(n), str(format.Gzip, DataPage(format.Gzip, format.DeltaByteArray, n, dba))))

	// A dictionary filling a page, and indexes (bit-packed, 8 a group)
	// to its first entry.
	width := max(1, bitsFor(values-1))
	indexes := append([]byte{byte(width)}, binary.AppendUvarint(nil, uint64(values/8)<<1|1)...)
	indexes = append(indexes, make([]byte, values/8*width)...)
	dictPage := Repeated(format.Gzip, format.Plain, n, chunk, values/chunkValues)
	dictPage.Header.Type = format.DictionaryPage
	dictPage.Header.DataPageHeader.Valid = false
	dictPage.Header.DictionaryPageHeader.Valid = true
	dictPage.Header.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: n, Encoding: format.Plain}
	cols := []Column{str(format.Gzip, dictPage, DataPage(format.Gzip, format.RLEDictionary, n, indexes))}
	if intColumn != "" {
		ints := Repeated(format.Gzip, format.Plain, n, make([]byte, 8*chunkValues), values/chunkValues)
		ints.Header.Type = format.DictionaryPage
		ints.Header.DataPageHeader.Valid = false
		ints.Header.DictionaryPageHeader.Valid = true
		ints.Header.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: n, Encoding: format.Plain}
		cols = append(cols, Column{Name: intColumn, Type: format.Int64, Codec: format.Gzip, Pages: []Page{
			ints, DataPage(format.Gzip, format.RLEDictionary, n, indexes),
		}})
	}
	add("dictionary of %d entries filling a page, as many indexes", File(int64(n), cols...))

	// A nullable column: definition levels, then values filling the
	// rest of the page, uncompressed.
	defined := n - n/64
	nullable := append(Levels(uint64(defined), 1, 1), bytes.Repeat(chunk, values/chunkValues)[:int(defined)*(length+4)]...)
	c := str(format.Uncompressed, DataPage(format.Uncompressed, format.Plain, defined, nullable))
	c.Optional = true
	add("nullable page of 16 MiB stored, %d values", File(int64(defined), c))

	// Row groups of one value each: 13 000 (at 2^20 values; fewer with
	// fewer), about as many as a footer of 65,536 list elements holds (each
	// row group lists its column chunk, and the chunk its encodings and
	// path: about five elements a row group). 40 000 went past that limit,
	// so uncommitted's reader refused the file in every run without the race
	// detector, which shrinks the case to 1/16.
	pages, md := Layout(1, str(format.Gzip, DataPage(format.Gzip, format.Plain, 1, Plain([]byte("data/a")))))
	rg := md.RowGroups[0]
	md.RowGroups = nil
	for range 13000 * values / parquetguard.DefaultMaxPageValues {
		md.RowGroups = append(md.RowGroups, rg)
	}
	md.NumRows = int64(len(md.RowGroups))
	cases = append(cases, Case{fmt.Sprintf("%d row groups", len(md.RowGroups)), WithFooter(pages, Marshal(md))})
	return cases
}

func bitsFor(v int) int {
	n := 0
	for ; v > 0; v >>= 1 {
		n++
	}
	return n
}
