package metarange

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/golang/snappy"
)

// This file writes tables in the format lakeFS's pebble writes (RocksDBv2
// footer, prefix-compressed blocks with restart points, internal keys with
// an 8-byte trailer, a properties block, one- or two-level index), written
// here from the format's description so that the tests depend on no pebble
// version. The golden tables of testdata, written by the pebble version
// lakeFS pins, keep both this writer and the reader honest.

// tableOptions vary what lakeFS's writer leaves at pebble's defaults, to
// reach more of the format: small blocks make many data blocks and a
// two-level index.
type tableOptions struct {
	blockSize   int  // of data and index blocks; 0 is pebble's 4096
	compression byte // noCompression or snappyCompression
	checksum    byte // 0 is CRC-32C
	magic       string
	version     uint32            // with magic; "" is RocksDBv2
	props       map[string]string // more user properties
}

var lakeFSOptions = tableOptions{compression: snappyCompression}

const levelDBMagic = "\x57\xfb\x80\x8b\x24\x75\x47\xdb"

// tableLayout is where a table's blocks are.
type tableLayout struct {
	metaindex, props, topIndex handle // topIndex is zero with one level
	index                      []handle
	data                       []handle
}

// blockBuilder builds a block of entries with a restart point every
// interval entries.
type blockBuilder struct {
	interval int
	buf      []byte
	restarts []uint32
	last     []byte
	n        int
}

func (b *blockBuilder) add(key, value []byte) {
	shared := 0
	if b.n%b.interval == 0 {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
	} else {
		for shared < len(key) && shared < len(b.last) && key[shared] == b.last[shared] {
			shared++
		}
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)))
	b.buf = append(b.buf, key[shared:]...)
	b.buf = append(b.buf, value...)
	b.last = append(b.last[:0], key...)
	b.n++
}

func (b *blockBuilder) size() int { return len(b.buf) + 4*len(b.restarts) + 4 }

func (b *blockBuilder) finish() []byte {
	if len(b.restarts) == 0 {
		b.restarts = []uint32{0}
	}
	out := slices.Clone(b.buf)
	for _, r := range b.restarts {
		out = binary.LittleEndian.AppendUint32(out, r)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b.restarts)))
	*b = blockBuilder{interval: b.interval}
	return out
}

// tableWriter appends blocks to a file.
type tableWriter struct {
	out []byte
	o   tableOptions
}

// writeBlock appends a block and its trailer, compressed when asked and
// worth it (as pebble decides: by at least an eighth).
func (w *tableWriter) writeBlock(b []byte, compress bool) handle {
	typ := byte(noCompression)
	if compress && w.o.compression == snappyCompression {
		if c := snappy.Encode(nil, b); len(c) < len(b)-len(b)/8 {
			b, typ = c, snappyCompression
		}
	}
	h := handle{uint64(len(w.out)), uint64(len(b))}
	w.out = append(w.out, b...)
	w.out = append(w.out, typ)
	l := layout{checksum: w.o.checksum}
	w.out = binary.LittleEndian.AppendUint32(w.out, l.sum(w.out[h.off:]))
	return h
}

func encodeHandle(h handle) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, h.off), h.length)
}

// buildTable writes records, in key order, with user properties, and says
// where it put the blocks.
func buildTable(records []record, userProps map[string]string, o tableOptions) ([]byte, *tableLayout) {
	if o.blockSize == 0 {
		o.blockSize = 4096
	}
	if o.checksum == 0 {
		o.checksum = checksumCRC32C
	}
	if o.magic == "" {
		o.magic, o.version = rocksDBMagic, 2
	}
	w := &tableWriter{o: o}
	l := &tableLayout{}
	data := blockBuilder{interval: 16}
	index := blockBuilder{interval: 1}
	var partitions [][]byte // finished index blocks
	var lastKeys [][]byte   // the last key of each partition
	var lastKey []byte
	flushData := func() {
		if data.n == 0 {
			return
		}
		h := w.writeBlock(data.finish(), true)
		l.data = append(l.data, h)
		index.add(lastKey, encodeHandle(h))
		if index.size() >= o.blockSize {
			lastKeys = append(lastKeys, slices.Clone(lastKey))
			partitions = append(partitions, index.finish())
		}
	}
	for _, r := range records {
		key := append(slices.Clone(r.key), keyKindSet, 0, 0, 0, 0, 0, 0, 0) // sequence number 0, kind set
		data.add(key, r.value)
		lastKey = key
		if data.size() >= o.blockSize {
			flushData()
		}
	}
	flushData()
	if len(records) == 0 {
		h := w.writeBlock(data.finish(), true) // pebble writes one empty data block
		l.data = append(l.data, h)
		index.add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, encodeHandle(h))
	}
	if index.n > 0 {
		lastKeys = append(lastKeys, slices.Clone(lastKey))
		partitions = append(partitions, index.finish())
	}
	indexType := uint32(0)
	var indexHandle handle
	if len(partitions) == 1 {
		indexHandle = w.writeBlock(partitions[0], true)
		l.index = []handle{indexHandle}
	} else {
		indexType = indexTypeTwoLevel
		top := blockBuilder{interval: 1}
		for i, p := range partitions {
			h := w.writeBlock(p, true)
			l.index = append(l.index, h)
			top.add(lastKeys[i], encodeHandle(h))
		}
		indexHandle = w.writeBlock(top.finish(), true)
		l.topIndex = indexHandle
	}

	props := map[string][]byte{
		propNumEntries: binary.AppendUvarint(nil, uint64(len(records))),
		propIndexType:  binary.LittleEndian.AppendUint32(nil, indexType),
		propComparer:   []byte(bytewiseComparer),
		propMerger:     []byte("pebble.concatenate"),
	}
	for k, v := range userProps {
		props[k] = []byte(v)
	}
	for k, v := range o.props {
		props[k] = []byte(v)
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	pb := blockBuilder{interval: 16}
	for _, k := range names {
		pb.add([]byte(k), props[k])
	}
	l.props = w.writeBlock(pb.finish(), true)
	mb := blockBuilder{interval: 1}
	mb.add([]byte(metaPropertiesName), encodeHandle(l.props))
	l.metaindex = w.writeBlock(mb.finish(), false)

	var footer []byte
	if o.magic == levelDBMagic {
		footer = append(encodeHandle(l.metaindex), encodeHandle(indexHandle)...)
		footer = append(footer, make([]byte, 40-len(footer))...)
		footer = append(footer, levelDBMagic...)
	} else {
		footer = append([]byte{o.checksum}, encodeHandle(l.metaindex)...)
		footer = append(footer, encodeHandle(indexHandle)...)
		footer = append(footer, make([]byte, 41-len(footer))...)
		footer = binary.LittleEndian.AppendUint32(footer, o.version)
		footer = append(footer, o.magic...)
	}
	return append(w.out, footer...), l
}

// writeTableLayout writes records as a table of lakeFS's type ("ranges" or
// "metaranges"), with lakeFS's properties, and says where its blocks are.
func writeTableLayout(typ string, records []record, o tableOptions) ([]byte, *tableLayout) {
	props := map[string]string{propType: typ, propCount: strconv.Itoa(len(records))}
	if len(records) > 0 {
		props["min_key"], props["max_key"] = string(records[0].key), string(records[len(records)-1].key)
	}
	return buildTable(records, props, o)
}
