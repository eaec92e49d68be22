package extsort

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A key stream front-codes a sequence of keys: each entry holds how many
// bytes the key shares with the key before it, the length of the rest, and
// the rest; keys sharing a long prefix ("data/<slice>/…") cost a few bytes
// each. Run files and package sweep's live record are key streams; a
// [KeyFormat] says which:
//
//	magic      KeyFormat.Magic, if any
//	entries    loose:  uvarint shared+1, uvarint rest length, rest bytes
//	           strict: uvarint shared,   uvarint rest length, rest bytes
//	end        loose:  uvarint 0;  strict: uvarint 0, uvarint 0
//	count      uvarint, the number of entries
//	checksum   with KeyFormat.Checksum: CRC-32C (Castagnoli) of everything
//	           before it, 4 bytes big-endian
//
// Nothing may follow. A loose stream holds any keys in any order, the empty
// key included. A strict stream holds non-empty keys in strictly ascending
// order, each sharing all it can with the key before it (so every rest is
// non-empty and starts with a byte the previous key does not have there),
// and every varint is as short as its value allows: its decoder accepts
// only what its encoder writes.
type KeyFormat struct {
	// Magic is written first and must be read first.
	Magic string
	// Strict makes the stream strict (see above).
	Strict bool
	// Checksum ends the stream with a CRC-32C of all before it.
	Checksum bool
	// MaxKey bounds a key; 0 means 1 GiB. The decoder refuses a longer
	// key before allocating it, and never holds more than one.
	MaxKey int
	// Corrupt is wrapped by every error of a malformed stream; nil means
	// a plain error. Errors of the reader and writer are returned as they
	// are.
	Corrupt error
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (f *KeyFormat) maxKey() uint64 {
	if f.MaxKey <= 0 {
		return maxKeyLen
	}
	return uint64(f.MaxKey)
}

// corrupt returns an error of a malformed stream.
func (f *KeyFormat) corrupt(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if f.Corrupt == nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%w: %s", f.Corrupt, msg)
}

// KeyEncoder writes a key stream. Entries gather in a buffer and go to the
// writer (and into the checksum) a buffer's worth at a time. Not safe for
// concurrent use.
type KeyEncoder struct {
	w       io.Writer
	f       KeyFormat
	buf     []byte
	flush   int
	crc     uint32
	prev    []byte
	n       int64
	ordered bool
}

// NewKeyEncoder starts a key stream of format f on w, writing its magic; it
// writes to w once bufSize bytes of entries have gathered.
func NewKeyEncoder(w io.Writer, f KeyFormat, bufSize int) (*KeyEncoder, error) {
	bufSize = max(bufSize, 64)
	e := &KeyEncoder{w: w, f: f, buf: make([]byte, 0, bufSize+64), flush: bufSize, ordered: true}
	if f.Magic == "" {
		return e, nil
	}
	return e, e.write([]byte(f.Magic))
}

func (e *KeyEncoder) write(p []byte) error {
	if e.f.Checksum {
		e.crc = crc32.Update(e.crc, castagnoli, p)
	}
	_, err := e.w.Write(p)
	return err
}

// Add appends key. In a strict stream, a key that is empty, longer than
// MaxKey or not after the previous one is an error wrapping Corrupt, and is
// not written. The prefix key shares with the previous key, which the entry
// needs, also says which of the two sorts first: the key sorts after it
// when it goes on past the shared bytes and either the previous key ends
// there or the key's next byte is the larger.
func (e *KeyEncoder) Add(key []byte) error {
	shared := 0
	if e.n > 0 {
		shared = CommonPrefix(key, e.prev)
		if shared == len(key) || shared < len(e.prev) && key[shared] < e.prev[shared] {
			if e.f.Strict {
				return e.f.corrupt("%q after %q", key, e.prev)
			}
			e.ordered = false
		}
	}
	if e.f.Strict && (len(key) == 0 || uint64(len(key)) > e.f.maxKey()) {
		return e.f.corrupt("key of %d bytes", len(key))
	}
	// The first shared bytes of prev are key's already.
	e.prev = append(e.prev[:shared], key[shared:]...)
	return e.put(key, shared)
}

// put appends key, which shares its first shared bytes with the key before
// it. It neither checks nor records the order: a caller that uses put for
// every key knows the previous key itself (spill, whose keys stay in the
// block).
func (e *KeyEncoder) put(key []byte, shared int) error {
	e.n++
	head := uint64(shared)
	if !e.f.Strict {
		head++
	}
	e.buf = binary.AppendUvarint(e.buf, head)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(key)-shared))
	e.buf = append(e.buf, key[shared:]...)
	if len(e.buf) < e.flush {
		return nil
	}
	err := e.write(e.buf)
	if cap(e.buf) > 2*e.flush+64 { // a huge key: do not keep its copy
		e.buf = make([]byte, 0, e.flush+64)
	}
	e.buf = e.buf[:0]
	return err
}

// Ordered reports whether the keys added so far strictly ascend.
func (e *KeyEncoder) Ordered() bool { return e.ordered }

// Finish writes the entries gathered, the end, the count and the checksum.
// It does not close the writer.
func (e *KeyEncoder) Finish() error {
	e.buf = append(e.buf, 0)
	if e.f.Strict {
		e.buf = append(e.buf, 0)
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(e.n))
	err := e.write(e.buf)
	e.buf, e.prev = e.buf[:0], nil
	if err != nil || !e.f.Checksum {
		return err
	}
	_, err = e.w.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	return err
}

// KeyDecoder reads a key stream. A stream cut short, altered or followed by
// other bytes fails Next rather than read as a shorter one. Not safe for
// concurrent use.
type KeyDecoder struct {
	r    *bufio.Reader
	f    KeyFormat
	max  uint64
	crc  uint32
	hdr  []byte // the bytes of the entry's varints, for the checksum
	key  []byte
	suf  []byte // a strict stream's suffix, until it is checked
	n    int64
	done bool
}

// NewKeyDecoder reads a key stream of format f from r, through a buffer of
// bufSize bytes, and checks its magic.
func NewKeyDecoder(r io.Reader, f KeyFormat, bufSize int) (*KeyDecoder, error) {
	d := &KeyDecoder{r: bufio.NewReaderSize(r, bufSize), f: f, max: f.maxKey()}
	if f.Magic == "" {
		return d, nil
	}
	magic := make([]byte, len(f.Magic))
	if _, err := io.ReadFull(d.r, magic); err != nil {
		return nil, d.readErr(err)
	}
	if string(magic) != f.Magic {
		return nil, f.corrupt("bad magic")
	}
	d.sum(magic)
	return d, nil
}

// Count returns the number of keys read so far.
func (d *KeyDecoder) Count() int64 { return d.n }

func (d *KeyDecoder) sum(p []byte) {
	if d.f.Checksum {
		d.crc = crc32.Update(d.crc, castagnoli, p)
	}
}

// readErr turns an end of the stream within it into a corrupt stream.
func (d *KeyDecoder) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.f.corrupt("cut short")
	}
	return err
}

// Next returns the next key, valid until the following call; ok is false at
// the end, once the count (and checksum) are verified.
func (d *KeyDecoder) Next() ([]byte, bool, error) {
	if d.done {
		return nil, false, nil
	}
	if k, ok := d.nextBuffered(); ok {
		return k, true, nil
	}
	d.hdr = d.hdr[:0]
	head, err := d.uvarint()
	if err != nil {
		return nil, false, err
	}
	if head == 0 && !d.f.Strict {
		return nil, false, d.end()
	}
	rest, err := d.uvarint()
	if err != nil {
		return nil, false, err
	}
	shared := head
	if !d.f.Strict {
		shared--
	} else if rest == 0 {
		if shared != 0 {
			return nil, false, d.f.corrupt("entry %d: empty suffix", d.n)
		}
		return nil, false, d.end()
	}
	if shared > uint64(len(d.key)) || rest > d.max-min(shared, d.max) {
		return nil, false, d.f.corrupt("entry %d: shared %d, suffix %d", d.n, shared, rest)
	}
	d.sum(d.hdr)
	if !d.f.Strict {
		d.resizeKey(shared, rest)
		if _, err := io.ReadFull(d.r, d.key[shared:]); err != nil {
			return nil, false, d.readErr(err)
		}
		d.n++
		return d.key, true, nil
	}
	// A strict stream's suffix is checked against the previous key
	// before it replaces its end.
	if uint64(cap(d.suf)) < rest {
		d.suf = make([]byte, rest, max(rest, 64))
	}
	d.suf = d.suf[:rest]
	if _, err := io.ReadFull(d.r, d.suf); err != nil {
		return nil, false, d.readErr(err)
	}
	d.sum(d.suf)
	if err := d.strictErr(shared, d.suf); err != nil {
		return nil, false, err
	}
	d.resizeKey(shared, rest)
	copy(d.key[shared:], d.suf)
	d.n++
	return d.key, true, nil
}

// nextBuffered decodes the next key when the whole entry is in the read
// buffer and valid, as most are, without a call per byte; it reports false,
// having read nothing, for anything else (the end, an entry across the
// buffer's end, any error), which Next then reads the slow way.
func (d *KeyDecoder) nextBuffered() ([]byte, bool) {
	b, _ := d.r.Peek(d.r.Buffered())
	head, n1 := binary.Uvarint(b)
	if n1 <= 0 || head == 0 && !d.f.Strict {
		return nil, false
	}
	rest, n2 := binary.Uvarint(b[n1:])
	if n2 <= 0 || rest > uint64(len(b)-n1-n2) {
		return nil, false
	}
	shared := head
	if !d.f.Strict {
		shared--
	} else if rest == 0 || !minimal(b[:n1]) || !minimal(b[n1:n1+n2]) {
		return nil, false
	}
	if shared > uint64(len(d.key)) || rest > d.max-min(shared, d.max) {
		return nil, false
	}
	entry := b[:n1+n2+int(rest)]
	suffix := entry[n1+n2:]
	if d.f.Strict && d.strictErr(shared, suffix) != nil {
		return nil, false
	}
	d.sum(entry)
	d.resizeKey(shared, rest)
	copy(d.key[shared:], suffix)
	d.r.Discard(len(entry))
	d.n++
	return d.key, true
}

// minimal reports whether the varint v is as short as its value allows.
func minimal(v []byte) bool { return len(v) == 1 || v[len(v)-1] != 0 }

// strictErr checks a strict stream's entry of shared bytes of the current
// key and suffix.
func (d *KeyDecoder) strictErr(shared uint64, suffix []byte) error {
	// The first shared bytes are the previous key's, so the new key sorts
	// after it when its suffix sorts after the rest of the previous key.
	if d.n > 0 && bytes.Compare(suffix, d.key[shared:]) <= 0 {
		return d.f.corrupt("entry %d out of order", d.n)
	}
	// The encoder shares all it can: a suffix that starts with the
	// previous key's next byte is one it would not write.
	if shared < uint64(len(d.key)) && suffix[0] == d.key[shared] {
		return d.f.corrupt("entry %d shares %d bytes, fewer than it could", d.n, shared)
	}
	return nil
}

// resizeKey makes d.key the length of the next key, shared bytes of the
// previous key (kept) and rest bytes the caller fills in.
func (d *KeyDecoder) resizeKey(shared, rest uint64) {
	n := int(shared + rest)
	if cap(d.key) < n {
		key := make([]byte, n, max(n, 64))
		copy(key, d.key[:shared])
		d.key = key
	}
	d.key = d.key[:n]
}

// uvarint reads a uvarint byte by byte, keeping its bytes for the
// checksum; in a strict stream it must be as short as its value allows.
func (d *KeyDecoder) uvarint() (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		if i == binary.MaxVarintLen64 {
			return 0, d.f.corrupt("varint overflows")
		}
		b, err := d.r.ReadByte()
		if err != nil {
			return 0, d.readErr(err)
		}
		d.hdr = append(d.hdr, b)
		if i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, d.f.corrupt("varint overflows")
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b == 0 && i > 0 && d.f.Strict {
				return 0, d.f.corrupt("varint of %d bytes for %d", i+1, x)
			}
			return x, nil
		}
	}
}

// end reads and checks the count (and the checksum), and that nothing
// follows.
func (d *KeyDecoder) end() error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	if d.f.Checksum {
		d.sum(d.hdr)
		var sum [4]byte
		if _, err := io.ReadFull(d.r, sum[:]); err != nil {
			return d.readErr(err)
		}
		if n != uint64(d.n) {
			return d.f.corrupt("count %d, read %d keys", n, d.n)
		}
		if binary.BigEndian.Uint32(sum[:]) != d.crc {
			return d.f.corrupt("checksum mismatch")
		}
	} else if n != uint64(d.n) {
		return d.f.corrupt("count %d, read %d keys", n, d.n)
	}
	if _, err := d.r.ReadByte(); err != io.EOF {
		if err != nil {
			return d.readErr(err)
		}
		return d.f.corrupt("data after the end")
	}
	d.done = true
	return nil
}
