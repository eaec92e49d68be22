package retention

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
)

// Commit and metarange IDs are most of the memory ActiveCommits needs, so
// they are kept in a compact form: an ID is a record in a chunked byte arena,
// found by a 32-bit offset, and a lowercase hexadecimal ID (lakeFS's IDs are
// hex SHA-256 digests) is stored as the bytes it spells, half its length.
// A record is a uvarint header, length<<1 | isHex, then the payload.

const (
	chunkBits = 20
	chunkSize = 1 << chunkBits
	maxChunks = 1 << (32 - chunkBits)
	// maxIDLen bounds one ID so that a record, and the index before it,
	// always fits in a chunk.
	maxIDLen = 64 << 10
)

var (
	errIDTooLong      = errors.New("ID longer than 64 KiB")
	errTooManyCommits = errors.New("commit and metarange IDs exceed 4 GiB")
	errEmptyID        = errors.New("empty ID")
	hexDigits         = "0123456789abcdef"
	fromHex           = func() (t [256]byte) { // 0xff: not a lowercase hex digit
		for i := range t {
			t[i] = 0xff
		}
		for i := range len(hexDigits) {
			t[hexDigits[i]] = byte(i)
		}
		return t
	}()
)

// appendRecord appends the record of id to dst.
func appendRecord(dst []byte, id string) []byte {
	if rec, ok := appendHexRecord(dst, id); ok {
		return rec
	}
	dst = binary.AppendUvarint(dst, uint64(len(id))<<1)
	return append(dst, id...)
}

// appendHexRecord appends the compact record of id if id is lowercase hex of
// even length, and reports whether it was.
func appendHexRecord(dst []byte, id string) ([]byte, bool) {
	if len(id)%2 != 0 {
		return dst, false
	}
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(id)/2)<<1|1)
	n := len(dst)
	dst = slices.Grow(dst, len(id)/2)[:n+len(id)/2]
	out := dst[n:]
	for i := range out {
		hi, lo := fromHex[id[2*i]], fromHex[id[2*i+1]]
		if hi|lo == 0xff { // one of them is not a digit
			return dst[:start], false
		}
		out[i] = hi<<4 | lo
	}
	return dst, true
}

// arena holds records in chunks of up to chunkSize bytes, so that growing it
// copies at most one chunk. A record never straddles two chunks.
type arena struct {
	chunks [][]byte
}

// add stores rec and returns its offset.
func (a *arena) add(rec []byte) (uint32, error) {
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+len(rec) > chunkSize {
		if len(a.chunks) == maxChunks {
			return 0, errTooManyCommits
		}
		size := chunkSize
		if last < 0 {
			size = 4 << 10 // the first chunk grows with append, for small graphs
		}
		a.chunks = append(a.chunks, make([]byte, 0, size))
		last++
	}
	off := uint32(last)<<chunkBits | uint32(len(a.chunks[last]))
	a.chunks[last] = append(a.chunks[last], rec...)
	return off, nil
}

// record returns the record at off.
func (a *arena) record(off uint32) []byte {
	chunk := a.chunks[off>>chunkBits][off&(chunkSize-1):]
	h, n := binary.Uvarint(chunk)
	return chunk[:n+int(h>>1)]
}

// string returns the ID whose record is at off.
func (a *arena) string(off uint32) string {
	return string(a.appendID(nil, off))
}

// appendID appends the ID whose record is at off to dst.
func (a *arena) appendID(dst []byte, off uint32) []byte {
	chunk := a.chunks[off>>chunkBits][off&(chunkSize-1):]
	h, n := binary.Uvarint(chunk)
	payload := chunk[n : n+int(h>>1)]
	if h&1 == 0 {
		return append(dst, payload...)
	}
	for _, c := range payload {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}

// indexBefore returns the interned index stored before the record at off.
func (a *arena) indexBefore(off uint32) int32 {
	chunk := a.chunks[off>>chunkBits]
	at := off & (chunkSize - 1)
	return int32(binary.LittleEndian.Uint32(chunk[at-idxLen : at]))
}

// idLen returns the length of the ID whose record is at off.
func (a *arena) idLen(off uint32) int {
	h, _ := binary.Uvarint(a.chunks[off>>chunkBits][off&(chunkSize-1):])
	if h&1 == 1 {
		return int(h>>1) * 2
	}
	return int(h >> 1)
}

// interner gives each distinct ID a dense index: 0, 1, 2... in order of
// first sight. Each record in its arena follows the 4-byte index it has.
//
// The hash table is open-addressed with linear probing, at most half full. A
// slot holds the high 32 bits of the ID's hash, which also place it, and the
// offset of its record, never 0 as the index comes first (0 marks an empty
// slot). A probe reads the arena only when the hashes match, and finds the
// index next to the record it compares; growing the table does not read the
// arena at all. The arena is large and read at random: every read of it is a
// cache miss.
type interner struct {
	arena   arena
	offs    []uint32 // index → record offset
	slots   []uint64
	seed    maphash.Seed
	scratch []byte // the index, then the record being looked up
}

const idxLen = 4 // bytes of the index before a record

func newInterner() *interner {
	return &interner{slots: make([]uint64, 1024), seed: maphash.MakeSeed()}
}

// intern returns the index of id, adding it if it is new.
func (t *interner) intern(id string) (idx int32, added bool, err error) {
	if id == "" {
		return 0, false, errEmptyID
	}
	if len(id) > maxIDLen {
		return 0, false, errIDTooLong
	}
	t.scratch = appendRecord(append(t.scratch[:0], make([]byte, idxLen)...), id)
	rec := t.scratch[idxLen:]
	tag := maphash.Bytes(t.seed, rec) &^ (1<<32 - 1)
	mask := uint64(len(t.slots) - 1)
	for i := tag >> 32 & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			idx = int32(len(t.offs))
			binary.LittleEndian.PutUint32(t.scratch, uint32(idx))
			off, err := t.arena.add(t.scratch)
			if err != nil {
				return 0, false, err
			}
			t.offs = append(t.offs, off+idxLen)
			t.slots[i] = tag | uint64(off+idxLen)
			if 2*len(t.offs) > len(t.slots) {
				t.grow()
			}
			return idx, true, nil
		}
		if s&^(1<<32-1) == tag {
			if off := uint32(s); bytes.Equal(t.arena.record(off), rec) {
				return t.arena.indexBefore(off), false, nil
			}
		}
	}
}

func (t *interner) grow() {
	slots := make([]uint64, 2*len(t.slots))
	mask := uint64(len(slots) - 1)
	for _, s := range t.slots {
		if s == 0 {
			continue
		}
		i := s >> 32 & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	t.slots = slots
}

// id returns the ID of index idx.
func (t *interner) id(idx int32) string { return t.arena.string(t.offs[idx]) }

// dropIndex frees the hash table once no more IDs will be looked up.
func (t *interner) dropIndex() { t.slots = nil }
