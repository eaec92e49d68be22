package guardtest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/parquet-go/parquet-go/format"
)

// Case is a hostile file.
type Case struct {
	Name string
	Data []byte
}

// bombs are 256 MiB of zeros compressed with GZIP and ZSTD (as 256
// members or frames of 1 MiB, read as one), and 4 MiB with Brotli.
func bomb(c format.CompressionCodec) Page {
	if c == format.Brotli {
		return DataPage(c, format.Plain, 1<<24, make([]byte, 4<<20))
	}
	return Repeated(c, format.Plain, 1<<24, make([]byte, 1<<20), 256)
}

// Hostile returns files that each take a few bytes to a few hundred KiB and
// make a reader that trusts them allocate a GiB or more, or loop forever.
// Each has a BYTE_ARRAY column named column; one has an INT64 column named
// intColumn, unless it is empty.
func Hostile(column, intColumn string) []Case {
	str := func(codec format.CompressionCodec, pages ...Page) Column {
		return Column{Name: column, Type: format.ByteArray, String: true, Codec: codec, Pages: pages}
	}
	one := DataPage(format.Uncompressed, format.Plain, 1, Plain([]byte("data/a")))
	var cases []Case
	add := func(name string, data []byte) { cases = append(cases, Case{name, data}) }
	oneString := func(name string, codec format.CompressionCodec, p Page) {
		add(name, File(int64(p.Header.DataPageHeader.V.NumValues), str(codec, p)))
	}

	p := DataPage(format.Gzip, format.Plain, 1, Plain([]byte("data/a")))
	p.Header.UncompressedPageSize = 1 << 30
	oneString("page header claims 1 GiB", format.Gzip, p)

	for _, c := range []format.CompressionCodec{format.Gzip, format.Zstd, format.Brotli} {
		p := bomb(c)
		oneString(fmt.Sprintf("%v bomb of %d MiB, honest header", c, p.Header.UncompressedPageSize>>20), c, p)
		p.Header.UncompressedPageSize = 1 << 20
		p.Header.DataPageHeader.V.NumValues = 1 << 18
		oneString(fmt.Sprintf("%v bomb, header claims 1 MiB", c), c, p)
	}

	// A frame whose header claims 1 GiB of content: the decoder allocates
	// it before it decodes a block.
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x50}
	frame = binary.LittleEndian.AppendUint64(frame, 1<<30)
	frame = append(frame, 1|1<<3, 0, 0, 'x') // last raw block of 1 byte
	oneString("ZSTD frame claims 1 GiB", format.Zstd, withData(DataPage(format.Zstd, format.Plain, 1, Plain(nil)), frame, 4))

	snappy := append(binary.AppendUvarint(nil, 1<<30), 0, 'x')
	oneString("Snappy block claims 1 GiB", format.Snappy, withData(DataPage(format.Snappy, format.Plain, 1, Plain(nil)), snappy, 4))

	// A match at offset 0: no buffer is large enough, and parquet-go
	// doubles its buffer on every failure.
	oneString("LZ4_RAW block that never decodes", format.Lz4Raw,
		withData(DataPage(format.Lz4Raw, format.Plain, 1, Plain(nil)), []byte{0x0f, 0, 0}, 100))

	// Levels: one run of 2^28 values in a few bytes.
	levels := append(Levels(1<<28, 1, 1), Plain([]byte("data/a"))...)
	c := str(format.Uncompressed, DataPage(format.Uncompressed, format.Plain, 1, levels))
	c.Optional = true
	add("definition levels claim 2^28 values", File(1, c))

	bitPacked := DataPage(format.Uncompressed, format.Plain, 1, append(binary.LittleEndian.AppendUint32(nil, 8<<20), make([]byte, 8<<20)...))
	bitPacked.Header.DataPageHeader.V.DefinitionLevelEncoding = format.BitPacked
	c = str(format.Uncompressed, bitPacked)
	c.Optional = true
	add("bit-packed levels of 8 MiB", File(1, c))

	if intColumn != "" {
		// An INT64 page whose delta header claims 2^27 values.
		delta := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 128), 4), 1<<27)
		delta = binary.AppendVarint(delta, 0)
		add("delta header claims 2^27 values", File(1, str(format.Uncompressed, one),
			Column{Name: intColumn, Type: format.Int64, Pages: []Page{DataPage(format.Uncompressed, format.DeltaBinaryPacked, 1, delta)}}))
	}

	// A dictionary entry of 64 KiB referred to 16 384 times: 1 GiB.
	entry := bytes.Repeat([]byte("a"), 64<<10)
	indexes := append([]byte{1}, binary.AppendUvarint(nil, 1<<14<<1)...)
	add("dictionary entry of 64 KiB repeated 16384 times", File(1<<14, str(format.Gzip,
		DictionaryPage(format.Gzip, 1, Plain(entry)),
		DataPage(format.Gzip, format.RLEDictionary, 1<<14, append(indexes, 0)))))

	// DELTA_BYTE_ARRAY: a value of 64 KiB, then 16 383 values that repeat it.
	prefixes, suffixes := make([]int32, 1<<14), make([]int32, 1<<14)
	for i := range prefixes {
		prefixes[i] = 64 << 10
	}
	prefixes[0], suffixes[0] = 0, 64<<10
	dba := append(append(Delta(prefixes...), Delta(suffixes...)...), entry...)
	add("delta byte arrays repeat a 64 KiB prefix 16384 times", File(1<<14, str(format.Gzip,
		DataPage(format.Gzip, format.DeltaByteArray, 1<<14, dba))))

	// Footers: a list of 2^22 column chunks (each 560 bytes once
	// decoded) in 8 bytes; a page header whose statistics claim 1 GiB.
	add("footer claims 2^22 column chunks", WithFooter([]byte("PAR1"), []byte{0x49, 0x1c, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x02, 0, 0}))

	hdr := []byte{0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x2c, 0x15, 0x02, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x1c, 0x18}
	hdr = binary.AppendUvarint(hdr, 1<<30)
	stats := Page{RawHeader: hdr, Data: make([]byte, 64)}
	stats.Header.DataPageHeader.Valid, stats.Header.DataPageHeader.V.NumValues = true, 1 // for the footer
	add("page header statistics claim 1 GiB", File(1, str(format.Uncompressed, stats)))

	// A schema nested 12 000 groups deep: parquet-go reserves a path of
	// each depth's length before it checks the depth.
	pages, md := Layout(1, str(format.Uncompressed, one))
	leafElem := md.Schema[1]
	md.Schema = md.Schema[:0]
	for i := range 12000 {
		g := format.SchemaElement{Name: "g"}
		if i == 0 {
			g.Name = "schema"
		} else {
			g.RepetitionType.Valid = true
		}
		g.NumChildren.Valid, g.NumChildren.V = true, 1
		md.Schema = append(md.Schema, g)
	}
	md.Schema = append(md.Schema, leafElem)
	add("schema nested 12000 deep", WithFooter(pages, Marshal(md)))

	// 4096 columns and 32 768 row groups without any: parquet-go reserves
	// a chunk for each pair before it counts them.
	md = Metadata(1)
	for i := range 4096 {
		e := format.SchemaElement{Name: column}
		if i > 0 {
			e.Name = "c" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		}
		e.Type.Valid, e.Type.V = true, format.ByteArray
		md.Schema = append(md.Schema, e)
	}
	md.Schema[0].NumChildren.V = 4096
	md.RowGroups = make([]format.RowGroup, 1<<15)
	add("4096 columns by 32768 empty row groups", WithFooter([]byte("PAR1"), Marshal(md)))
	return cases
}

// HostileSeeds returns the Hostile files under 64 KiB, small enough to seed
// a fuzz target.
func HostileSeeds(column, intColumn string) [][]byte {
	var seeds [][]byte
	for _, c := range Hostile(column, intColumn) {
		if len(c.Data) < 64<<10 {
			seeds = append(seeds, c.Data)
		}
	}
	return seeds
}

// withData replaces a page's payload with stored, claimed to uncompress to
// plain bytes.
func withData(p Page, stored []byte, plain int32) Page {
	p.Data = stored
	p.Header.CompressedPageSize = int32(len(stored))
	p.Header.UncompressedPageSize = plain
	return p
}
