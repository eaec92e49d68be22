package sweep

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"unsafe"

	"github.com/lakegc/lakegc/internal/keycount"
	"github.com/lakegc/lakegc/internal/layout"
)

// This file is the committed index: the keep index's committed keys in
// blocks, each under a header that says what a run needs to know of it
// without decoding it, so that an optimized run copies the blocks it has
// nothing to change in as they are (the join decides, in join.go).
//
// Its layout (_lakegc/index, records of version 3):
//
//	magic     "lakegc-cindex\x00v1\n"
//	blocks    each: a header and a body
//	  header  uvarint length of the first key (≥ 1), the first key;
//	          uvarint length of the last key (≥ 1), the last key;
//	          uvarint entries (≥ 1), uvarint listed entries,
//	          uvarint recognized entries (listed ≤ recognized ≤ entries),
//	          one byte of flags (blockInSlices, blockRecognized),
//	          uvarint length of the body
//	  body    a counted key stream of blockFormat (internal/keycount, see
//	          index.go): the block's entries, each counted above 0, aux the
//	          flag idxListed
//	end       uvarint 0
//	number    uvarint blocks, uvarint entries
//	checksum  CRC-32C (Castagnoli) of everything before it, 4 bytes big-endian
//
// Blocks ascend: each block's first key is above the previous block's last,
// and its last key is not below its first. A block holds at most
// cblockEntries entries; its body passes cblockBytes by at most the
// encoder's buffer (4 KiB) and one entry. recognized counts the entries that are listed or that the run's
// recognizer accepts, and is meaningful only under blockRecognized (a run
// with a custom recognizer does not count it); blockInSlices says every
// key of the block is in a slice of the data folder. Every varint is as
// short as its value allows. Nothing may follow the checksum.

const (
	cindexMagic = "lakegc-cindex\x00v1\n"
	cblockMagic = "lakegc-cblock\n"
)

// Flags of a block's header.
const (
	blockInSlices   = 1 // every key is in a slice of the data folder
	blockRecognized = 2 // recognized is counted (the run had the built-in recognizer)
	blockFlags      = blockInSlices | blockRecognized
)

// Bounds of a block: a block closes at cblockEntries entries or once its
// body reaches cblockBytes (less with a small memory budget); a body is
// refused above cblockMax.
const (
	cblockEntries = 4096
	cblockBytes   = 64 << 10
)

const cblockMax = 2*keycount.MaxKey + 128<<10

var cindexFormat = &keycount.Format{Magic: cindexMagic, Name: "committed index", Corrupt: errBadIndex}

// blockHeader is a block's header.
type blockHeader struct {
	first, last []byte
	n, listed   int64
	recognized  int64
	flags       byte
	size        int // of the body
}

// appendHeader appends h's encoding to b.
func appendHeader(b []byte, h *blockHeader) []byte {
	b = binary.AppendUvarint(b, uint64(len(h.first)))
	b = append(b, h.first...)
	b = binary.AppendUvarint(b, uint64(len(h.last)))
	b = append(b, h.last...)
	b = binary.AppendUvarint(b, uint64(h.n))
	b = binary.AppendUvarint(b, uint64(h.listed))
	b = binary.AppendUvarint(b, uint64(h.recognized))
	b = append(b, h.flags)
	return binary.AppendUvarint(b, uint64(h.size))
}

// cindexEncoder writes a committed index: entries, each added to the block
// being built, and whole blocks copied from a previous index. Not safe for
// concurrent use.
type cindexEncoder struct {
	w      io.Writer
	crc    uint32
	err    error
	blocks int64
	n      int64
	last   []byte // the last key written, in a block closed; nil: none

	// The block being built.
	body  bytes.Buffer
	enc   *keycount.Encoder
	cur   blockHeader
	flags byte

	// blockEntries and blockBytes close a block (cblockEntries and
	// cblockBytes; tests make them small).
	blockEntries int64
	blockBytes   int

	data    string // the data folder, with its '/'
	rec     layout.Recognizer
	counted bool // rec is the built-in recognizer: recognized is counted
	folder  []byte
	inSlice bool
	hdr     []byte
}

// newCindexEncoder returns an encoder of a committed index to w, for the
// data folder data (with its '/'); counted says rec is the built-in
// recognizer, whose verdicts the headers count; blockBytes bounds a block's
// body (at most cblockBytes; Mark gives its file buffer's size).
func newCindexEncoder(w io.Writer, data string, rec layout.Recognizer, counted bool, blockBytes int) *cindexEncoder {
	e := &cindexEncoder{w: w, data: data, rec: rec, counted: counted, blockEntries: cblockEntries, blockBytes: min(max(blockBytes, 512), cblockBytes)}
	e.write([]byte(cindexMagic))
	return e
}

func (e *cindexEncoder) write(b []byte) {
	if e.err == nil {
		e.crc = crc32.Update(e.crc, crcTable, b)
		_, e.err = e.w.Write(b)
	}
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Sum returns the checksum Finish wrote: the index's last 4 bytes,
// big-endian.
func (e *cindexEncoder) Sum() uint32 { return e.crc }

// N returns the number of entries written, in closed blocks and the block
// being built.
func (e *cindexEncoder) N() int64 {
	if e.enc != nil {
		return e.n + e.enc.N()
	}
	return e.n
}

// slice reports whether key is in a slice of the data folder.
func (e *cindexEncoder) slice(key []byte) bool {
	if len(e.folder) == 0 || !bytes.HasPrefix(key, e.folder) {
		rest, ok := bytes.CutPrefix(key, []byte(e.data))
		i := bytes.IndexByte(rest, '/')
		if !ok || i < 0 {
			e.folder = e.folder[:0]
			return false
		}
		e.folder = append(e.folder[:0], key[:len(e.data)+i+1]...)
		_, _, e.inSlice = sliceOf(e.folder, e.data)
	}
	return e.inSlice
}

// Add adds an entry to the block being built; key must be above every key
// written before.
func (e *cindexEncoder) Add(key []byte, count int64, aux uint64) error {
	if e.err != nil {
		return e.err
	}
	if e.enc == nil {
		if e.last != nil && bytes.Compare(key, e.last) <= 0 {
			return fmt.Errorf("%w: key %q after %q", errBadIndex, key, e.last)
		}
		e.body.Reset()
		// Flushed to body often enough that its length bounds the block.
		e.enc = keycount.NewEncoder(&e.body, blockFormat, min(4096, e.blockBytes))
		e.cur = blockHeader{first: append(e.cur.first[:0], key...)}
		e.flags = blockFlags
		if !e.counted {
			e.flags &^= blockRecognized
		}
	}
	if err := e.enc.Add(key, count, aux); err != nil {
		e.err = err
		return err
	}
	inSlice := e.slice(key)
	if !inSlice {
		e.flags &^= blockInSlices
	}
	switch {
	case aux&idxListed != 0:
		e.cur.listed++
		e.cur.recognized++
	case e.counted && inSlice && e.rec.OKInSlice(unsafe.String(unsafe.SliceData(key), len(key)), len(e.folder)):
		e.cur.recognized++
	case e.counted && !inSlice && e.rec.OKBytes(key):
		e.cur.recognized++
	}
	e.cur.last = append(e.cur.last[:0], key...)
	if e.enc.N() >= e.blockEntries || e.body.Len() >= e.blockBytes {
		return e.closeBlock()
	}
	return nil
}

// closeBlock writes the block being built, if any.
func (e *cindexEncoder) closeBlock() error {
	if e.enc == nil || e.err != nil {
		return e.err
	}
	if e.err = e.enc.Finish(); e.err != nil {
		return e.err
	}
	e.cur.n = e.enc.N()
	e.cur.flags = e.flags
	e.cur.size = e.body.Len()
	e.enc = nil
	e.hdr = appendHeader(e.hdr[:0], &e.cur)
	e.write(e.hdr)
	e.write(e.body.Bytes())
	e.blocks++
	e.n += e.cur.n
	e.last = append(e.last[:0], e.cur.last...)
	return e.err
}

// Raw writes a block of a previous index as it is, after the block being
// built.
func (e *cindexEncoder) Raw(h *blockHeader, body []byte) error {
	if err := e.closeBlock(); err != nil {
		return err
	}
	if e.last != nil && bytes.Compare(h.first, e.last) <= 0 {
		e.err = fmt.Errorf("%w: block from %q after %q", errBadIndex, h.first, e.last)
		return e.err
	}
	e.hdr = appendHeader(e.hdr[:0], h)
	e.write(e.hdr)
	e.write(body)
	e.blocks++
	e.n += h.n
	e.last = append(e.last[:0], h.last...)
	return e.err
}

// Finish closes the last block and writes the end, the numbers and the
// checksum.
func (e *cindexEncoder) Finish() error {
	if err := e.closeBlock(); err != nil {
		return err
	}
	b := binary.AppendUvarint(nil, 0)
	b = binary.AppendUvarint(b, uint64(e.blocks))
	b = binary.AppendUvarint(b, uint64(e.n))
	e.write(b)
	if e.err == nil {
		_, e.err = e.w.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	}
	return e.err
}

// cindexReader reads a committed index from a local file whose checksum is
// verified (keycount.CopyCheckedFile): block headers, then each block's body
// as it is (raw) or decoded (decode). Not safe for concurrent use.
type cindexReader struct {
	f      *os.File
	r      *bufio.Reader
	hdr    blockHeader
	body   []byte
	last   []byte // the previous block's last key
	blocks int64
	n      int64
	ended  bool
	// want is the number of entries the state says the index holds (< 0:
	// not checked, for tests).
	want int64

	dec     *keycount.Decoder
	decoded int64 // entries of the block decoded so far
	listed  int64
}

func openCindex(name string, ioBuf int, want int64) (*cindexReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sweep: previous run's committed index: %w", err)
	}
	r := &cindexReader{f: f, r: bufio.NewReaderSize(f, ioBuf), want: want}
	magic := make([]byte, len(cindexMagic))
	if _, err := io.ReadFull(r.r, magic); err != nil || string(magic) != cindexMagic {
		f.Close()
		return nil, fmt.Errorf("%w: not a committed index", errBadIndex)
	}
	return r, nil
}

func (r *cindexReader) Close() error { return r.f.Close() }

func (r *cindexReader) uvarint(what string, max uint64) (uint64, error) {
	var v uint64
	for s := 0; ; s += 7 {
		b, err := r.r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: %s cut short", errBadIndex, what)
		}
		if s == 63 && b > 1 || b == 0 && s > 0 {
			return 0, fmt.Errorf("%w: %s: a bad varint", errBadIndex, what) // too long, or longer than its value needs
		}
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			break
		}
	}
	if v > max {
		return 0, fmt.Errorf("%w: %s %d", errBadIndex, what, v)
	}
	return v, nil
}

func (r *cindexReader) key(what string, buf []byte, n uint64) ([]byte, error) {
	buf = append(buf[:0], make([]byte, n)...)
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return nil, fmt.Errorf("%w: %s cut short", errBadIndex, what)
	}
	return buf, nil
}

// next reads the next block's header: false at the end, once the numbers
// are checked. The header is valid until the next call.
func (r *cindexReader) next() (*blockHeader, bool, error) {
	if r.ended {
		return nil, false, nil
	}
	if r.dec != nil {
		return nil, false, fmt.Errorf("sweep: committed index: a block's entries not all read")
	}
	n, err := r.uvarint("key length", keycount.MaxKey)
	if err != nil {
		return nil, false, err
	}
	if n == 0 {
		r.ended = true
		blocks, err := r.uvarint("number of blocks", 1<<62)
		if err != nil {
			return nil, false, err
		}
		entries, err := r.uvarint("number of entries", 1<<62)
		if err != nil {
			return nil, false, err
		}
		var tail [5]byte
		if k, _ := io.ReadFull(r.r, tail[:]); k != 4 {
			return nil, false, fmt.Errorf("%w: %d bytes after the numbers", errBadIndex, k)
		}
		switch {
		case int64(blocks) != r.blocks || int64(entries) != r.n:
			return nil, false, fmt.Errorf("%w: %d blocks of %d entries, it says %d of %d", errBadIndex, r.blocks, r.n, blocks, entries)
		case r.want >= 0 && r.n != r.want:
			return nil, false, fmt.Errorf("%w: %d entries, its state says %d", errBadIndex, r.n, r.want)
		}
		return nil, false, nil
	}
	h := &r.hdr
	if h.first, err = r.key("first key", h.first, n); err != nil {
		return nil, false, err
	}
	if n, err = r.uvarint("key length", keycount.MaxKey); err != nil {
		return nil, false, err
	}
	if n == 0 {
		return nil, false, fmt.Errorf("%w: an empty last key", errBadIndex)
	}
	if h.last, err = r.key("last key", h.last, n); err != nil {
		return nil, false, err
	}
	var v [4]uint64
	for i, what := range []string{"entries", "listed entries", "recognized entries", "body length"} {
		if i == 3 {
			flags, err := r.r.ReadByte()
			if err != nil || flags&^blockFlags != 0 {
				return nil, false, fmt.Errorf("%w: block flags", errBadIndex)
			}
			h.flags = flags
		}
		if v[i], err = r.uvarint(what, 1<<40); err != nil {
			return nil, false, err
		}
	}
	h.n, h.listed, h.recognized, h.size = int64(v[0]), int64(v[1]), int64(v[2]), int(v[3])
	switch {
	case h.n == 0 || h.n > cblockEntries || h.listed > h.recognized || h.recognized > h.n:
		return nil, false, fmt.Errorf("%w: a block of %d entries, %d listed, %d recognized", errBadIndex, h.n, h.listed, h.recognized)
	case h.size > cblockMax:
		return nil, false, fmt.Errorf("%w: a block of %d bytes", errBadIndex, h.size)
	case bytes.Compare(h.last, h.first) < 0:
		return nil, false, fmt.Errorf("%w: a block from %q to %q", errBadIndex, h.first, h.last)
	case r.blocks > 0 && bytes.Compare(h.first, r.last) <= 0:
		return nil, false, fmt.Errorf("%w: a block from %q after one to %q", errBadIndex, h.first, r.last)
	}
	r.blocks++
	r.n += h.n
	r.last = append(r.last[:0], h.last...)
	r.body = append(r.body[:0], make([]byte, h.size)...)
	if _, err := io.ReadFull(r.r, r.body); err != nil {
		return nil, false, fmt.Errorf("%w: a block cut short", errBadIndex)
	}
	return h, true, nil
}

// raw returns the body of the block whose header next returned, as it is;
// valid until the next call of next.
func (r *cindexReader) raw() []byte { return r.body }

// decode starts decoding the block whose header next returned: entry
// returns its entries.
func (r *cindexReader) decode() error {
	dec, err := keycount.NewDecoder(bytes.NewReader(r.body), blockFormat, 4096)
	if err != nil {
		return err
	}
	r.dec, r.decoded, r.listed = dec, 0, 0
	return nil
}

// entry returns the next entry of the block being decoded (the key valid
// until the next call); false at its end, once it is checked against its
// header.
func (r *cindexReader) entry() ([]byte, int64, bool, bool, error) {
	k, c, aux, ok, err := r.dec.Next()
	if err != nil {
		return nil, 0, false, false, fmt.Errorf("sweep: previous run's committed index: %w", err)
	}
	h := &r.hdr
	if !ok {
		r.dec = nil
		if r.decoded != h.n || r.listed != h.listed {
			return nil, 0, false, false, fmt.Errorf("%w: a block of %d entries, %d listed, its header says %d, %d", errBadIndex, r.decoded, r.listed, h.n, h.listed)
		}
		return nil, 0, false, false, nil
	}
	if r.decoded == 0 && !bytes.Equal(k, h.first) || r.decoded == h.n-1 && !bytes.Equal(k, h.last) {
		return nil, 0, false, false, fmt.Errorf("%w: a block's key %q is not its header's", errBadIndex, k)
	}
	r.decoded++
	listed := aux&idxListed != 0
	if listed {
		r.listed++
	}
	return k, c, listed, true, nil
}
