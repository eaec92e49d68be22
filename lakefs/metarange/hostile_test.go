package metarange

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/golang/snappy"
)

// This file crafts tables block by block, each checksum right, to reach
// what buildTable never writes: blocks the metaindex or an index names
// twice or out of order, a compressed metaindex, blocks in the footer.

// rawTable appends blocks, as given, to a table with CRC-32C checksums.
type rawTable struct{ out []byte }

func (r *rawTable) block(b []byte, typ byte) handle {
	h := handle{uint64(len(r.out)), uint64(len(b))}
	r.out = append(r.out, b...)
	r.out = append(r.out, typ)
	l := layout{checksum: checksumCRC32C}
	r.out = binary.LittleEndian.AppendUint32(r.out, l.sum(r.out[h.off:]))
	return h
}

// finish appends a RocksDBv2 footer.
func (r *rawTable) finish(metaindex, index handle) []byte {
	footer := append([]byte{checksumCRC32C}, encodeHandle(metaindex)...)
	footer = append(footer, encodeHandle(index)...)
	footer = append(footer, make([]byte, 41-len(footer))...)
	footer = binary.LittleEndian.AppendUint32(footer, 2)
	return append(r.out, append(footer, rocksDBMagic...)...)
}

// metaindexOf is an uncompressed metaindex naming the properties block.
func (r *rawTable) metaindexOf(props handle) handle {
	mb := blockBuilder{interval: 1}
	mb.add([]byte(metaPropertiesName), encodeHandle(props))
	return r.block(mb.finish(), noCompression)
}

// propsBlock is a properties block of a table of lakeFS's type typ, of n
// records, with a two-level index or not.
func propsBlock(typ string, n uint64, twoLevel bool) []byte {
	indexType := uint32(0)
	if twoLevel {
		indexType = indexTypeTwoLevel
	}
	pb := blockBuilder{interval: 16}
	pb.add([]byte(propIndexType), binary.LittleEndian.AppendUint32(nil, indexType))
	pb.add([]byte(propNumEntries), binary.AppendUvarint(nil, n))
	pb.add([]byte(propType), []byte(typ))
	return pb.finish()
}

// emptyBlock is a block of no entries, as pebble writes one for an empty
// table.
func emptyBlock() []byte {
	b := blockBuilder{interval: 16}
	return b.finish()
}

// indexKey is an index separator: a user key with pebble's separator
// trailer (kind 17, the largest sequence number).
func indexKey(user string) []byte {
	return append([]byte(user), 0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
}

// snappyExact encodes m with Snappy so that the encoding is exactly as long
// as m: literals for m[:L] in chunks of c bytes, copies at offset period
// for the middle, a literal tail of the given length, L and c chosen to
// make the lengths equal. m[from-period:len(m)-tail] must repeat with that
// period.
func snappyExact(t *testing.T, m []byte, from, period, tail int) []byte {
	for l := from; l <= len(m)-tail; l++ {
		for c := 1; c <= 60; c++ {
			out := binary.AppendUvarint(nil, uint64(len(m)))
			for i := 0; i < l; i += c {
				j := min(i+c, l)
				out = append(out, byte(j-i-1)<<2) // a literal of j-i bytes
				out = append(out, m[i:j]...)
			}
			for i := l; i < len(m)-tail; i += 64 {
				j := min(i+64, len(m)-tail)
				out = append(out, byte(j-i-1)<<2|2, byte(period), byte(period>>8)) // a copy, 2-byte offset
			}
			out = append(out, byte(tail-1)<<2)
			out = append(out, m[len(m)-tail:]...)
			if len(out) != len(m) {
				continue
			}
			if d, err := snappy.Decode(nil, out); err != nil || !bytes.Equal(d, m) {
				t.Fatalf("snappyExact: decodes to %q, %v", d, err)
			}
			return out
		}
	}
	t.Fatal("snappyExact: no encoding of the block's length")
	return nil
}

// TestMetaindexReadInPlace crafts a table whose metaindex is
// Snappy-compressed to exactly its own length, as pebble never writes
// one, and names one properties block (P1, of a "ranges" table). P1,
// decompressed, hides in a value a metaindex entry naming another
// properties block (P2, of a "metaranges" table). A reader that
// decompressed P1 into the buffer holding the metaindex, while walking it,
// would walk on into P1's bytes and read P2's properties, which pebble
// never reads: what it would read of the table would no longer be what
// lakeFS reads. The table must be refused.
func TestMetaindexReadInPlace(t *testing.T) {
	var r rawTable
	data := blockBuilder{interval: 16}
	for _, k := range []string{"a", "b", "c"} {
		data.add(append([]byte(k), keyKindSet, 0, 0, 0, 0, 0, 0, 0), []byte("v"))
	}
	dh := r.block(data.finish(), noCompression)
	index := blockBuilder{interval: 1}
	index.add(indexKey("c"), encodeHandle(dh))
	ih := r.block(index.finish(), noCompression)
	p2 := r.block(propsBlock(typeMetaRanges, 3, false), noCompression)

	// The metaindex, decoded, is m bytes: its first entry names P1 (e0
	// bytes, with a 3-byte handle), 8-byte entries "pad" of an empty
	// handle follow up to end, then its one restart point.
	const m = 600
	const end = m - 8
	e0 := 3 + len(metaPropertiesName) + 3
	// P1 decoded: an entry "zz" whose value, at e0, holds an entry naming
	// P2, then the header of an entry whose key runs to end-2 (over the
	// rest of P1 and the old bytes of the metaindex), of a 2-byte value
	// (the last "pad" entry's empty handle); then P1's own properties.
	fake := []byte{0, byte(len(metaPropertiesName)), byte(len(encodeHandle(p2)))}
	fake = append(fake, metaPropertiesName...)
	fake = append(fake, encodeHandle(p2)...)
	at := e0 + len(fake)
	zz := make([]byte, e0-5) // 5: the header and key of "zz"
	zz = append(zz, fake...)
	zz = binary.AppendUvarint(append(zz, 0), uint64(end-2-(at+4)))
	zz = append(zz, 2)
	p1 := append([]byte{0, 2, byte(len(zz)), 'z', 'z'}, zz...)
	own := propsBlock(typeRanges, 3, false)
	p1 = append(p1, own[:len(own)-8]...) // its entries, after "zz"
	p1 = binary.LittleEndian.AppendUint32(p1, 0)
	p1 = binary.LittleEndian.AppendUint32(p1, 1)
	if len(p1) > m || len(entryOffsets(p1)) < 4 {
		t.Fatalf("P1 of %d bytes, %d entries", len(p1), len(entryOffsets(p1)))
	}
	p1h := r.block(snappy.Encode(nil, p1), snappyCompression)

	meta := []byte{0, byte(len(metaPropertiesName)), 3}
	meta = append(meta, metaPropertiesName...)
	meta = append(meta, encodeHandle(p1h)...)
	if len(meta) != e0 {
		t.Fatalf("P1's handle takes %d bytes, not 3", len(encodeHandle(p1h)))
	}
	for len(meta) < end {
		meta = append(meta, 0, 3, 2, 'p', 'a', 'd', 0, 0)
	}
	meta = binary.LittleEndian.AppendUint32(meta, 0)
	meta = binary.LittleEndian.AppendUint32(meta, 1)
	mh := r.block(snappyExact(t, meta, e0+8, 8, 8), snappyCompression)
	table := r.finish(mh, ih)

	// P1's properties, the ones pebble reads, make it a range of 3
	// records; P2's a metarange. It is neither: pebble never compresses a
	// metaindex.
	for _, typ := range []string{typeRanges, typeMetaRanges} {
		n, err := countValues(table, typ)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read as %s: %d values, err = %v; want ErrCorrupt", typ, n, err)
		}
		t.Log(err)
	}
	// The same table with its metaindex uncompressed is the range P1 says.
	r.out = r.out[:mh.off]
	table = r.finish(r.block(meta, noCompression), ih)
	if n, err := countValues(table, typeRanges); err != nil || n != 3 {
		t.Fatalf("uncompressed metaindex, read as a range: %d values, %v", n, err)
	}
}

// TestBlocksReadOnce crafts tables whose index names a block twice, or
// before one it named: pebble never writes one, and a reader that read
// them would do work unbounded by the file's size (an index of a million
// entries naming one 16 MiB block of no entries, of 800 KiB compressed,
// decompresses it a million times; a two-level index multiplies that). A
// block in the footer, where pebble writes none, is refused too.
func TestBlocksReadOnce(t *testing.T) {
	// withIndex ends a table of no records with the index and properties.
	withIndex := func(r *rawTable, index blockBuilder, twoLevel bool) []byte {
		ih := r.block(index.finish(), noCompression)
		return r.finish(r.metaindexOf(r.block(propsBlock(typeRanges, 0, twoLevel), noCompression)), ih)
	}
	cases := []struct {
		name  string
		table func() []byte
	}{
		{"a data block named twice", func() []byte {
			var r rawTable
			d := r.block(emptyBlock(), noCompression)
			var index = blockBuilder{interval: 1}
			index.add(indexKey("a"), encodeHandle(d))
			index.add(indexKey("b"), encodeHandle(d))
			return withIndex(&r, index, false)
		}},
		{"data blocks out of file order", func() []byte {
			var r rawTable
			d1 := r.block(emptyBlock(), noCompression)
			d2 := r.block(emptyBlock(), noCompression)
			index := blockBuilder{interval: 1}
			index.add(indexKey("a"), encodeHandle(d2))
			index.add(indexKey("b"), encodeHandle(d1))
			return withIndex(&r, index, false)
		}},
		{"data blocks that overlap", func() []byte {
			// Two empty blocks, the second, with its trailer, inside the
			// first's restart points (which an empty block never reads).
			var r rawTable
			inner := append(emptyBlock(), noCompression, 0, 0, 0, 0)
			l := layout{checksum: checksumCRC32C}
			binary.LittleEndian.PutUint32(inner[9:], l.sum(inner[:9]))
			outer := append(make([]byte, 4), inner...)
			outer = append(outer, 0, 0, 0)
			outer = binary.LittleEndian.AppendUint32(outer, uint32(len(outer)/4)) // restart points up to here
			d1 := r.block(outer, noCompression)
			d2 := handle{d1.off + 4, 8}
			index := blockBuilder{interval: 1}
			index.add(indexKey("a"), encodeHandle(d1))
			index.add(indexKey("b"), encodeHandle(d2))
			return withIndex(&r, index, false)
		}},
		{"an index block named twice", func() []byte {
			var r rawTable
			x := r.block(emptyBlock(), noCompression)
			top := blockBuilder{interval: 1}
			top.add(indexKey("a"), encodeHandle(x))
			top.add(indexKey("b"), encodeHandle(x))
			return withIndex(&r, top, true)
		}},
		{"index blocks out of file order", func() []byte {
			var r rawTable
			d1 := r.block(emptyBlock(), noCompression)
			d2 := r.block(emptyBlock(), noCompression)
			x := blockBuilder{interval: 1}
			x.add(indexKey("b"), encodeHandle(d2))
			x2 := r.block(x.finish(), noCompression)
			x.add(indexKey("a"), encodeHandle(d1))
			x1 := r.block(x.finish(), noCompression)
			top := blockBuilder{interval: 1}
			top.add(indexKey("a"), encodeHandle(x1))
			top.add(indexKey("b"), encodeHandle(x2))
			return withIndex(&r, top, true)
		}},
		{"a data block in the footer", func() []byte {
			// An empty block at byte 16 of the footer, in its padding.
			build := func(at uint64) []byte {
				var r rawTable
				index := blockBuilder{interval: 1}
				index.add(indexKey("a"), encodeHandle(handle{at, 8}))
				return withIndex(&r, index, false)
			}
			at := uint64(len(build(1<<10))-footerLen) + 16
			table := build(at)
			if uint64(len(table)-footerLen)+16 != at {
				t.Fatal("the table's length depends on where the block is")
			}
			b := table[at:]
			copy(b, emptyBlock())
			b[8] = noCompression
			l := layout{checksum: checksumCRC32C}
			binary.LittleEndian.PutUint32(b[9:], l.sum(b[:9]))
			if _, _, err := (&layout{data: table}).checkFooter(); err != nil {
				t.Fatalf("the block broke the footer: %v", err)
			}
			return table
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table := c.table()
			n, err := countValues(table, typeRanges)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d values, err = %v; want ErrCorrupt", n, err)
			}
			t.Log(err)
		})
	}
}

// TestCallerPanicsGoOn panics in the loop bodies of Ranges and Entries and
// in eachValue's function: the panic is the caller's, and must reach it as
// it was, not turned into an error of a corrupt table (after which the
// iterator would call the loop body again, which the runtime turns into a
// panic of its own).
func TestCallerPanicsGoOn(t *testing.T) {
	rng := writeTable(t, typeRanges, rangeRecords([]fixtureEntry{{"a", "data/x", relative}, {"b", "data/y", relative}}), lakeFSOptions)
	mr := writeTable(t, typeMetaRanges, metaRangeRecords([]fixtureRange{{id: string(bytes.Repeat([]byte("ab"), 32)), maxKey: "k"}}), lakeFSOptions)
	type callerPanic struct{}
	loops := map[string]func(){
		"Ranges": func() {
			for _, err := range Ranges(bytes.NewReader(mr), int64(len(mr))) {
				t.Logf("Ranges yielded, err = %v", err)
				panic(callerPanic{})
			}
		},
		"Entries": func() {
			for _, err := range Entries(bytes.NewReader(rng), int64(len(rng))) {
				t.Logf("Entries yielded, err = %v", err)
				panic(callerPanic{})
			}
		},
		"eachValue": func() {
			err := eachValue(rng, typeRanges, "test", func([]byte) error { panic(callerPanic{}) })
			t.Logf("eachValue returned %v", err)
		},
	}
	for name, loop := range loops {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != (callerPanic{}) {
					t.Fatalf("recovered %v, want the loop body's own panic", p)
				}
			}()
			loop()
			t.Fatal("no panic")
		})
	}
}

// TestWalkBlockRefuses walks blocks that pebble's sequential reader reads,
// but not as written, or that pebble never writes: each is refused.
func TestWalkBlockRefuses(t *testing.T) {
	// entry is shared, unshared, value length (one byte each), key, value.
	entry := func(shared byte, key, value string) []byte {
		return append([]byte{shared, byte(len(key)), byte(len(value))}, key+value...)
	}
	// block ends entries with restart points.
	block := func(entries []byte, restarts ...uint32) []byte {
		entries = slices.Clone(entries)
		for _, r := range restarts {
			entries = binary.LittleEndian.AppendUint32(entries, r)
		}
		return binary.LittleEndian.AppendUint32(entries, uint32(len(restarts)))
	}
	ab := append(entry(0, "ab", "1"), entry(1, "c", "2")...)                                // "ab", "ac"
	abc := append(append(entry(0, "a", "1"), entry(0, "b", "2")...), entry(0, "c", "3")...) // at 0, 5, 10
	for _, b := range [][]byte{block(ab, 0), block(abc, 0), block(abc, 0, 5, 10), block(abc, 0, 10)} {
		if err := walkBlock(b, nil); err != nil {
			t.Fatalf("a valid block: %v", err)
		}
	}
	cases := map[string][]byte{
		// At a restart point, a reader seeks with a key it reads whole.
		"a restart point at an entry sharing a prefix": block(ab, 0, 6),
		"a first entry that is no restart point":       block(append(entry(0, "ab", "1"), entry(0, "ac", "2")...), 6),
		// Pebble reads at most 5 bytes of a varint: it would read this
		// 6-byte encoding of 2 as 2 and the entry's next field from
		// its sixth byte.
		"a 6-byte varint":                  block(append([]byte{0, 1, 0x82, 0x80, 0x80, 0x80, 0x80, 0}, "a12"...), 0),
		"no restart points":                block(ab),
		"no entries and no restart points": block(nil),
		"a restart point past the entries": block(abc, 0, 15),
		"restart points out of order":      block(abc, 0, 10, 5),
		"a restart point twice":            block(abc, 0, 5, 5),
	}
	for name, b := range cases {
		if err := walkBlock(b, nil); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestCheckBoundsEdges checks blocks at the edge of what precedes the
// footer: the metaindex, the last block of a table, ends where the footer
// starts.
func TestCheckBoundsEdges(t *testing.T) {
	table, l := writeTableLayout(typeRanges, formatRecords(10, false), lakeFSOptions)
	tbl, err := openTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if end := l.metaindex.off + l.metaindex.length + blockTrailerLen; end != uint64(len(table)-footerLen) {
		t.Fatalf("the metaindex ends at %d, the footer starts at %d", end, len(table)-footerLen)
	}
	for _, c := range []struct {
		h  handle
		ok bool
	}{
		{l.metaindex, true},
		{handle{l.metaindex.off, l.metaindex.length + 1}, false},
		{handle{l.metaindex.off + 1, l.metaindex.length}, false},
		{handle{uint64(len(table) - footerLen - blockTrailerLen), 0}, true},
		{handle{uint64(len(table) - footerLen - blockTrailerLen + 1), 0}, false},
		{handle{1<<64 - 1, 1}, false},
		{handle{0, 1<<64 - 1}, false},
	} {
		if err := tbl.checkBounds(c.h); (err == nil) != c.ok {
			t.Errorf("%+v: err = %v, want ok %v", c.h, err, c.ok)
		}
	}
}

// TestBlockSizeLimit reads tables of one empty data block, of no records,
// of 16 MiB and of 16 MiB and 4 bytes, stored or decompressed: the larger
// one is refused before it is decompressed.
func TestBlockSizeLimit(t *testing.T) {
	for _, c := range []struct {
		size        int
		compression byte
		ok          bool
	}{
		{maxBlockSize, noCompression, true},
		{maxBlockSize + 4, noCompression, false},
		{maxBlockSize, snappyCompression, true},
		{maxBlockSize + 4, snappyCompression, false},
	} {
		b := make([]byte, c.size) // restart points of no entries
		binary.LittleEndian.PutUint32(b[len(b)-4:], uint32(len(b)/4-1))
		if c.compression == snappyCompression {
			b = snappy.Encode(nil, b)
		}
		var r rawTable
		d := r.block(b, c.compression)
		index := blockBuilder{interval: 1}
		index.add(indexKey("a"), encodeHandle(d))
		ih := r.block(index.finish(), noCompression)
		table := r.finish(r.metaindexOf(r.block(propsBlock(typeRanges, 0, false), noCompression)), ih)
		n, err := countValues(table, typeRanges)
		switch {
		case c.ok && (err != nil || n != 0):
			t.Errorf("%d bytes, compression %d: %d values, %v", c.size, c.compression, n, err)
		case !c.ok && !errors.Is(err, ErrCorrupt):
			t.Errorf("%d bytes, compression %d: %d values, err = %v; want ErrCorrupt", c.size, c.compression, n, err)
		}
	}
}
