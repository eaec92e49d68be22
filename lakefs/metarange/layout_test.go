package metarange

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/sstable"
)

// blocksOf returns the handles of every block of a valid table, from
// pebble's own reading of it.
func blocksOf(t testing.TB, table []byte) *sstable.Layout {
	t.Helper()
	r, err := sstable.NewReader(memReadable(table), sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// reseal recomputes the checksum of every block (CRC-32C, masked as
// LevelDB masks it), so that altered blocks pass pebble's checks: what a
// crafted file would do.
func reseal(table []byte, l *sstable.Layout) {
	handles := []sstable.BlockHandle{l.TopIndex, l.Properties, l.MetaIndex, l.RangeDel, l.RangeKey, l.Filter}
	handles = append(handles, l.Index...)
	for _, d := range l.Data {
		handles = append(handles, d.BlockHandle)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, h := range handles {
		if h.Length == 0 {
			continue
		}
		end := h.Offset + h.Length
		c := crc32.Update(0, castagnoli, table[h.Offset:end+1])
		binary.LittleEndian.PutUint32(table[end+1:], (c>>15|c<<17)+0xa282ead8)
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
		{"uncompressed", 1000, tableOptions{compression: sstable.NoCompression}, false},
		{"two-level index", 3000, tableOptions{blockSize: 128, compression: sstable.SnappyCompression}, true},
		{"two-level, uncompressed", 3000, tableOptions{blockSize: 128, compression: sstable.NoCompression}, true},
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
			table := writeTable(t, typeRanges, records, c.opts)
			if got := len(blocksOf(t, table).Index) > 1; got != c.twoLvl {
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
	plain := tableOptions{blockSize: 1024, compression: sstable.NoCompression}
	cases := []struct {
		name  string
		alter func(table []byte, l *sstable.Layout)
	}{
		{"restart count beyond the block", func(table []byte, l *sstable.Layout) {
			end := l.Data[0].Offset + l.Data[0].Length
			binary.LittleEndian.PutUint32(table[end-4:], 0xfffffff0)
		}},
		{"restart count that hides the entries", func(table []byte, l *sstable.Layout) {
			end := l.Data[0].Offset + l.Data[0].Length
			n := binary.LittleEndian.Uint32(table[end-4:])
			binary.LittleEndian.PutUint32(table[end-4:], n+uint32(l.Data[0].Length/8))
		}},
		{"value length beyond the block", func(table []byte, l *sstable.Layout) {
			// shared, unshared, then a two-byte value length: make it 16383.
			at := l.Data[0].Offset + 2
			table[at], table[at+1] = 0xff, 0x7f
		}},
		{"last value of a block beyond the block", func(table []byte, l *sstable.Layout) {
			// Nothing follows it to misread: only its own length is wrong.
			entries := entryOffsets(table[l.Data[0].Offset : l.Data[0].Offset+l.Data[0].Length])
			at := l.Data[0].Offset + uint64(entries[len(entries)-1]) + 2
			table[at], table[at+1] = 0xff, 0x7f
		}},
		{"key shares more than the previous key", func(table []byte, l *sstable.Layout) {
			// The second entry of the first block, after the first: shared,
			// unshared, value length (two bytes), an 18-byte internal key
			// and a 200-byte value.
			at := l.Data[0].Offset + 1 + 1 + 2 + 18 + 200
			table[at] = 0x7f
		}},
		{"restart point inside an entry", func(table []byte, l *sstable.Layout) {
			end := l.Data[0].Offset + l.Data[0].Length
			n := binary.LittleEndian.Uint32(table[end-4:])
			binary.LittleEndian.PutUint32(table[end-4-4*uint64(n):], 3)
		}},
		{"restart point between two entries", func(table []byte, l *sstable.Layout) {
			// An index block has a restart point per entry: move the second.
			end := l.Index[0].Offset + l.Index[0].Length
			n := uint64(binary.LittleEndian.Uint32(table[end-4:]))
			at := end - 4 - 4*n + 4
			binary.LittleEndian.PutUint32(table[at:], binary.LittleEndian.Uint32(table[at:])+1)
		}},
		{"data block beyond the file", func(table []byte, l *sstable.Layout) {
			// The last data block's handle, in its index block: make its
			// length, a two-byte varint, 16383.
			last := l.Data[len(l.Data)-1].BlockHandle
			h := encodeTestHandle(last)
			at := uint64(bytes.Index(table[last.Offset+last.Length:], h)) + last.Offset + last.Length
			table[at+uint64(len(h))-2], table[at+uint64(len(h))-1] = 0xff, 0x7f
		}},
		{"snappy block claiming 4 GiB", func(table []byte, l *sstable.Layout) {
			h := l.Data[0]
			table[h.Offset+h.Length] = snappyCompression
			copy(table[h.Offset:], []byte{0xff, 0xff, 0xff, 0xff, 0x0f})
		}},
		{"zstd block", func(table []byte, l *sstable.Layout) {
			h := l.Data[0]
			table[h.Offset+h.Length] = 7
		}},
		{"properties block with no restarts", func(table []byte, l *sstable.Layout) {
			end := l.Properties.Offset + l.Properties.Length
			binary.LittleEndian.PutUint32(table[end-4:], 0)
		}},
		{"metaindex naming a block beyond the file", func(table []byte, l *sstable.Layout) {
			h := encodeTestHandle(l.Properties)
			at := l.MetaIndex.Offset + uint64(bytes.Index(table[l.MetaIndex.Offset:], h))
			table[at+uint64(len(h))-1] |= 0x7f
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table := writeTable(t, typeRanges, records, plain)
			l := blocksOf(t, table)
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

func encodeTestHandle(h sstable.BlockHandle) []byte {
	b := binary.AppendUvarint(nil, h.Offset)
	return binary.AppendUvarint(b, h.Length)
}

func TestLayoutRefusesOtherFormats(t *testing.T) {
	records := []record{{[]byte("a"), []byte("b")}}
	for _, f := range []sstable.TableFormat{sstable.TableFormatLevelDB, sstable.TableFormatPebblev3, sstable.TableFormatPebblev4} {
		w := &memWritable{}
		tw := sstable.NewWriter(w, sstable.WriterOptions{TableFormat: f, TablePropertyCollectors: []func() sstable.TablePropertyCollector{
			func() sstable.TablePropertyCollector { return &staticCollector{map[string]string{"type": typeRanges}} },
		}})
		for _, r := range records {
			if err := tw.Set(r.key, r.value); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := countValues(w.Bytes(), typeRanges); !errors.Is(err, ErrCorrupt) {
			t.Errorf("format %v: err = %v, want ErrCorrupt", f, err)
		}
	}
	for _, f := range []sstable.TableFormat{sstable.TableFormatPebblev1, sstable.TableFormatPebblev2} {
		w := &memWritable{}
		tw := sstable.NewWriter(w, sstable.WriterOptions{TableFormat: f, TablePropertyCollectors: []func() sstable.TablePropertyCollector{
			func() sstable.TablePropertyCollector { return &staticCollector{map[string]string{"type": typeRanges}} },
		}})
		if err := tw.Set([]byte("a"), []byte("b")); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := countValues(w.Bytes(), typeRanges); err != nil || n != 1 {
			t.Errorf("format %v: %d values, %v", f, n, err)
		}
	}
}
