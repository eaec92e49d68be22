package metarange

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// reseal recomputes the checksum of every block of the layout, so that
// altered blocks pass the checksums: what a crafted file would do.
func reseal(table []byte, l *tableLayout) {
	handles := []handle{l.topIndex, l.props, l.metaindex}
	handles = append(handles, l.index...)
	handles = append(handles, l.data...)
	sums := layout{data: table}
	if _, _, err := sums.checkFooter(); err != nil {
		sums.checksum = checksumCRC32C
	}
	for _, h := range handles {
		if h.length == 0 {
			continue
		}
		end := h.off + h.length
		if end+blockTrailerLen > uint64(len(table)) {
			continue
		}
		binary.LittleEndian.PutUint32(table[end+1:], sums.sum(table[h.off:end+1]))
	}
}

// countValues reads a table's values with eachValue.
func countValues(table []byte, typ string) (int, error) {
	n := 0
	err := eachValue(table, typ, "test", func([]byte) error { n++; return nil })
	return n, err
}

func TestLayoutReadsWhatPebbleWrites(t *testing.T) {
	bigValue := strings.Repeat("v", 100<<10) // larger than a block
	cases := []struct {
		name    string
		entries int
		opts    tableOptions
		twoLvl  bool
	}{
		{"lakeFS's options", 1000, lakeFSOptions, false},
		{"empty", 0, lakeFSOptions, false},
		{"one entry", 1, lakeFSOptions, false},
		{"uncompressed", 1000, tableOptions{compression: noCompression}, false},
		{"two-level index", 3000, tableOptions{blockSize: 128, compression: snappyCompression}, true},
		{"two-level, uncompressed", 3000, tableOptions{blockSize: 128, compression: noCompression}, true},
		{"a value larger than a block", -1, lakeFSOptions, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var records []record
			for i := range c.entries {
				records = append(records, record{[]byte(fmt.Sprintf("key/%06d", i)), []byte(fmt.Sprintf("value %d", i))})
			}
			if c.entries < 0 {
				records = []record{{[]byte("a"), []byte("small")}, {[]byte("b"), []byte(bigValue)}, {[]byte("c"), []byte("small")}}
			}
			table, l := writeTableLayout(typeRanges, records, c.opts)
			if got := len(l.index) > 1; got != c.twoLvl {
				t.Fatalf("two-level index: %v, want %v", got, c.twoLvl)
			}
			var values [][]byte
			err := eachValue(table, typeRanges, "test", func(v []byte) error {
				values = append(values, slices.Clone(v))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(values) != len(records) {
				t.Fatalf("%d values, want %d", len(values), len(records))
			}
			for i, r := range records {
				if !bytes.Equal(values[i], r.value) {
					t.Fatalf("value %d differs", i)
				}
			}
		})
	}
}

// TestLayoutRefusesCraftedTables alters tables and reseals their checksums,
// as a crafted file would: pebble alone would read out of its buffers,
// allocate what the file claims, or read fewer entries than there are.
func TestLayoutRefusesCraftedTables(t *testing.T) {
	records := make([]record, 200)
	for i := range records {
		records[i] = record{[]byte(fmt.Sprintf("key/%06d", i)), bytes.Repeat([]byte{byte(i)}, 200)}
	}
	plain := tableOptions{blockSize: 1024, compression: noCompression}
	cases := []struct {
		name  string
		alter func(table []byte, l *tableLayout)
	}{
		{"restart count beyond the block", func(table []byte, l *tableLayout) {
			end := l.data[0].off + l.data[0].length
			binary.LittleEndian.PutUint32(table[end-4:], 0xfffffff0)
		}},
		{"restart count that hides the entries", func(table []byte, l *tableLayout) {
			end := l.data[0].off + l.data[0].length
			n := binary.LittleEndian.Uint32(table[end-4:])
			binary.LittleEndian.PutUint32(table[end-4:], n+uint32(l.data[0].length/8))
		}},
		{"value length beyond the block", func(table []byte, l *tableLayout) {
			// shared, unshared, then a two-byte value length: make it 16383.
			at := l.data[0].off + 2
			table[at], table[at+1] = 0xff, 0x7f
		}},
		{"last value of a block beyond the block", func(table []byte, l *tableLayout) {
			// Nothing follows it to misread: only its own length is wrong.
			entries := entryOffsets(table[l.data[0].off : l.data[0].off+l.data[0].length])
			at := l.data[0].off + uint64(entries[len(entries)-1]) + 2
			table[at], table[at+1] = 0xff, 0x7f
		}},
		{"key shares more than the previous key", func(table []byte, l *tableLayout) {
			// The second entry of the first block, after the first: shared,
			// unshared, value length (two bytes), an 18-byte internal key
			// and a 200-byte value.
			at := l.data[0].off + 1 + 1 + 2 + 18 + 200
			table[at] = 0x7f
		}},
		{"restart point inside an entry", func(table []byte, l *tableLayout) {
			end := l.data[0].off + l.data[0].length
			n := binary.LittleEndian.Uint32(table[end-4:])
			binary.LittleEndian.PutUint32(table[end-4-4*uint64(n):], 3)
		}},
		{"restart point between two entries", func(table []byte, l *tableLayout) {
			// An index block has a restart point per entry: move the second.
			end := l.index[0].off + l.index[0].length
			n := uint64(binary.LittleEndian.Uint32(table[end-4:]))
			at := end - 4 - 4*n + 4
			binary.LittleEndian.PutUint32(table[at:], binary.LittleEndian.Uint32(table[at:])+1)
		}},
		{"data block beyond the file", func(table []byte, l *tableLayout) {
			// The last data block's handle, in its index block: make its
			// length, a two-byte varint, 16383.
			last := l.data[len(l.data)-1]
			h := encodeTestHandle(last)
			at := uint64(bytes.Index(table[last.off+last.length:], h)) + last.off + last.length
			table[at+uint64(len(h))-2], table[at+uint64(len(h))-1] = 0xff, 0x7f
		}},
		{"snappy block claiming 4 GiB", func(table []byte, l *tableLayout) {
			h := l.data[0]
			table[h.off+h.length] = snappyCompression
			copy(table[h.off:], []byte{0xff, 0xff, 0xff, 0xff, 0x0f})
		}},
		{"zstd block", func(table []byte, l *tableLayout) {
			h := l.data[0]
			table[h.off+h.length] = 7
		}},
		{"properties block with no restarts", func(table []byte, l *tableLayout) {
			end := l.props.off + l.props.length
			binary.LittleEndian.PutUint32(table[end-4:], 0)
		}},
		{"metaindex naming a block beyond the file", func(table []byte, l *tableLayout) {
			h := encodeTestHandle(l.props)
			at := l.metaindex.off + uint64(bytes.Index(table[l.metaindex.off:], h))
			table[at+uint64(len(h))-1] |= 0x7f
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table, l := writeTableLayout(typeRanges, records, plain)
			if n, err := countValues(table, typeRanges); err != nil || n != len(records) {
				t.Fatalf("before: %d values, %v", n, err)
			}
			c.alter(table, l)
			reseal(table, l)
			n, err := countValues(table, typeRanges)
			t.Logf("%d values, %v", n, err)
			if !errors.Is(err, ErrCorrupt) || errors.Is(err, errPanicked) {
				t.Fatalf("%d values, err = %v; want ErrCorrupt, not a panic", n, err)
			}
		})
	}
}

// entryOffsets returns where the entries of a valid, uncompressed block
// start.
func entryOffsets(block []byte) []int {
	numRestarts := int(binary.LittleEndian.Uint32(block[len(block)-4:]))
	end := len(block) - 4*(numRestarts+1)
	var offsets []int
	for pos := 0; pos < end; {
		offsets = append(offsets, pos)
		_, n := binary.Uvarint(block[pos:])
		pos += n
		unshared, n := binary.Uvarint(block[pos:])
		pos += n
		valueLen, n := binary.Uvarint(block[pos:])
		pos += n + int(unshared) + int(valueLen)
	}
	return offsets
}

func encodeTestHandle(h handle) []byte {
	b := binary.AppendUvarint(nil, h.off)
	return binary.AppendUvarint(b, h.length)
}

func TestLayoutRefusesOtherFormats(t *testing.T) {
	records := []record{{[]byte("a"), []byte("b")}}
	formats := []struct {
		name    string
		magic   string
		version uint32
		ok      bool
	}{
		{"LevelDB", levelDBMagic, 0, false},
		{"RocksDB v1", rocksDBMagic, 1, false},
		{"Pebble v1", pebbleMagic, 1, true},
		{"Pebble v2", pebbleMagic, 2, true},
		{"Pebble v3 (value blocks)", pebbleMagic, 3, false},
		{"Pebble v4", pebbleMagic, 4, false},
	}
	for _, f := range formats {
		table := writeTable(t, typeRanges, records, tableOptions{magic: f.magic, version: f.version})
		n, err := countValues(table, typeRanges)
		switch {
		case f.ok && (err != nil || n != 1):
			t.Errorf("%s: %d values, %v", f.name, n, err)
		case !f.ok && !errors.Is(err, ErrCorrupt):
			t.Errorf("%s: err = %v, want ErrCorrupt", f.name, err)
		}
	}
	for _, sum := range []byte{checksumCRC32C, checksumXXHash64} {
		table, l := writeTableLayout(typeRanges, records, tableOptions{checksum: sum, compression: noCompression})
		if n, err := countValues(table, typeRanges); err != nil || n != 1 {
			t.Errorf("checksum type %d: %d values, %v", sum, n, err)
		}
		// A bit of the value, and a bit of the checksum: only the
		// checksum tells.
		for _, at := range []uint64{l.data[0].off + 3 + 1 + 8, l.data[0].off + l.data[0].length + 1} {
			table := bytes.Clone(table)
			table[at] ^= 1
			if _, err := countValues(table, typeRanges); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
				t.Errorf("checksum type %d, a flipped bit at %d: err = %v, want ErrCorrupt", sum, at, err)
			}
		}
	}
}

// TestTableRefusesWhatLakeFSDoesNotWrite writes well-formed tables that
// lakeFS's writer never writes: each is refused, whatever its checksums.
func TestTableRefusesWhatLakeFSDoesNotWrite(t *testing.T) {
	records := []record{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("2")}, {[]byte("c"), []byte("3")}}
	withProps := func(props map[string]string) tableOptions {
		return tableOptions{compression: noCompression, props: props}
	}
	uvarint := func(n uint64) string { return string(binary.AppendUvarint(nil, n)) }
	cases := []struct {
		name    string
		records []record
		opts    tableOptions
		alter   func(table []byte, l *tableLayout)
	}{
		{name: "keys out of order", records: []record{records[1], records[0], records[2]}},
		{name: "a key twice", records: []record{records[0], records[1], records[1]}},
		{name: "a deletion", alter: func(table []byte, l *tableLayout) {
			// The first entry: shared, unshared, value length, then the
			// user key "a" and its trailer, whose first byte is the kind.
			table[l.data[0].off+3+1] = 0
		}},
		{name: "a sequence number", alter: func(table []byte, l *tableLayout) {
			table[l.data[0].off+3+1+1] = 1 // kind set, but not sequence number 0: still read
		}},
		{name: "more records than the properties count", opts: withProps(map[string]string{propNumEntries: uvarint(2), propCount: "2"})},
		{name: "fewer records than the properties count", opts: withProps(map[string]string{propNumEntries: uvarint(4), propCount: "4"})},
		{name: "an unreadable record count", opts: withProps(map[string]string{propNumEntries: "\xff"})},
		{name: "another key order", opts: withProps(map[string]string{propComparer: "cockroach_comparator"})},
		{name: "a merge operator", opts: withProps(map[string]string{propMerger: "merge"})},
		{name: "an index type of 3 bytes", opts: withProps(map[string]string{propIndexType: "\x00\x00\x00"})},
		{name: "a two-level index type over one level", opts: withProps(map[string]string{propIndexType: "\x02\x00\x00\x00"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs := c.records
			if recs == nil {
				recs = records
			}
			if c.opts.compression == 0 && c.opts.props == nil {
				c.opts = tableOptions{compression: noCompression}
			}
			table, l := writeTableLayout(typeRanges, recs, c.opts)
			if c.alter != nil {
				c.alter(table, l)
				reseal(table, l)
			}
			n, err := countValues(table, typeRanges)
			if c.name == "a sequence number" {
				if err != nil || n != 3 {
					t.Fatalf("%d values, %v", n, err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d values, err = %v; want ErrCorrupt", n, err)
			}
			t.Log(err)
		})
	}
}
