package sweep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
)

// A counted key stream is the format of the keep index, of the parts
// record, and of the spill files of counts: keys strictly ascending, each
// with a count and a second number (aux), front-coded, under a magic and a
// checksum:
//
//	magic      the format's, ending in '\n'
//	entries    uvarint shared, uvarint suffix length (≥ 1), suffix bytes,
//	           varint count (zig-zag), uvarint aux
//	           (the key is the previous key's first shared bytes + suffix;
//	           shared is exactly the length of the prefix the two keys share)
//	end        uvarint 0, uvarint 0
//	number     uvarint, the number of entries
//	checksum   CRC-32C (Castagnoli) of everything before it, 4 bytes big-endian
//
// Nothing may follow the checksum. Every varint is as short as its value
// allows. The reader accepts only what the encoder writes, and what the
// format's rules allow (countFormat.valid); it never holds more than its
// buffer and one key of at most maxRecordKey bytes.
//
// The keep index (_lakegc/index) holds, for every key of the committed keep
// set, its reference count (the number of parts that hold it; 1 for a flat
// keep set) and, in aux, the flag idxListed: the key is in a slice, and the
// run found its object there older than the cutoff and kept it (what the
// live record of earlier versions held). A key whose count is 0 is there
// only with that flag (an object kept for an uncommitted reference).
//
// The parts record (_lakegc/parts) holds, for every part a run counted, its
// ID, the number of its keys and, in aux, a CRC-32C of its keys (each
// preceded by its length as a uvarint).
const (
	indexMagic = "lakegc-index\x00v1\n"
	partsMagic = "lakegc-parts\x00v1\n"
	deltaMagic = "lakegc-delta\x00v1\n"
)

// idxListed is the index's flag of a kept key found in its slice.
const idxListed = 1

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// countFormat is one kind of counted key stream.
type countFormat struct {
	magic   string
	name    string // for errors: "keep index"
	corrupt error  // wrapped by every error of a malformed stream
	// valid reports whether an entry's numbers are allowed.
	valid func(count int64, aux uint64) bool
}

var (
	errBadIndex = fmt.Errorf("%w: keep index", ErrInvalidInput)
	errBadParts = fmt.Errorf("%w: parts record", ErrInvalidInput)
	errBadDelta = errors.New("sweep: spilled counts corrupt")

	indexFormat = &countFormat{magic: indexMagic, name: "keep index", corrupt: errBadIndex,
		valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= idxListed && (c > 0 || aux == idxListed) }}
	partsFormat = &countFormat{magic: partsMagic, name: "parts record", corrupt: errBadParts,
		valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= math.MaxUint32 }}
	deltaFormat = &countFormat{magic: deltaMagic, name: "spilled counts", corrupt: errBadDelta,
		valid: func(c int64, aux uint64) bool { return c != 0 && aux == 0 }}
)

// countEncoder writes a counted key stream. Not safe for concurrent use.
type countEncoder struct {
	w    io.Writer
	f    *countFormat
	buf  []byte // entries not yet written
	size int    // write when buf reaches it
	prev []byte
	n    int64
	crc  uint32
	err  error
}

func newCountEncoder(w io.Writer, f *countFormat, size int) *countEncoder {
	e := &countEncoder{w: w, f: f, size: max(size, 512)}
	e.buf = append(make([]byte, 0, e.size+64), f.magic...)
	return e
}

func (e *countEncoder) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		e.crc = crc32.Update(e.crc, crcTable, e.buf)
		_, e.err = e.w.Write(e.buf)
		e.buf = e.buf[:0]
	}
	return e.err
}

// add appends an entry; key must be after the previous one, and count and
// aux allowed by the format.
func (e *countEncoder) add(key []byte, count int64, aux uint64) error {
	if e.err != nil {
		return e.err
	}
	shared := commonPrefix(e.prev, key)
	switch {
	case len(key) == 0 || len(key) > maxRecordKey:
		return fmt.Errorf("%w: key of %d bytes", e.f.corrupt, len(key))
	case e.n > 0 && (shared == len(key) || shared < len(e.prev) && key[shared] < e.prev[shared]):
		return fmt.Errorf("%w: key %q after %q", e.f.corrupt, key, e.prev)
	case !e.f.valid(count, aux):
		return fmt.Errorf("%w: entry %q with %d, %d", e.f.corrupt, key, count, aux)
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(shared))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(key)-shared))
	e.buf = append(e.buf, key[shared:]...)
	e.buf = binary.AppendVarint(e.buf, count)
	e.buf = binary.AppendUvarint(e.buf, aux)
	e.prev = append(e.prev[:0], key...)
	e.n++
	if len(e.buf) >= e.size {
		return e.flush()
	}
	return nil
}

// finish writes the end, the number of entries and the checksum.
func (e *countEncoder) finish() error {
	e.buf = append(e.buf, 0, 0)
	e.buf = binary.AppendUvarint(e.buf, uint64(e.n))
	if err := e.flush(); err != nil {
		return err
	}
	_, e.err = e.w.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	return e.err
}

// commonPrefix returns the length of the longest common prefix of a and
// b, comparing eight bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// countDecoder reads a counted key stream.
type countDecoder struct {
	r    io.Reader
	f    *countFormat
	buf  []byte
	i, j int // buf[i:j] is unread
	from int // buf[from:i] is read and not yet in crc
	crc  uint32
	rerr error // the reader's error, once it returned one
	key  []byte
	n    int64
	done bool
	err  error
}

func newCountDecoder(r io.Reader, f *countFormat, bufSize int) (*countDecoder, error) {
	d := &countDecoder{r: r, f: f, buf: make([]byte, max(bufSize, 64))}
	for i := 0; i < len(f.magic); i++ {
		b, err := d.byte()
		if err != nil {
			return nil, err
		}
		if b != f.magic[i] {
			return nil, fmt.Errorf("%w: not a %s", f.corrupt, f.name)
		}
	}
	return d, nil
}

// fill reads more bytes; io.ErrUnexpectedEOF when there are none.
func (d *countDecoder) fill() error {
	d.crc = crc32.Update(d.crc, crcTable, d.buf[d.from:d.i])
	d.j = copy(d.buf, d.buf[d.i:d.j])
	d.i, d.from = 0, 0
	for d.j == 0 {
		if d.rerr != nil {
			if d.rerr == io.EOF {
				return fmt.Errorf("%w: cut short", d.f.corrupt)
			}
			return fmt.Errorf("sweep: read %s: %w", d.f.name, d.rerr)
		}
		var n int
		n, d.rerr = d.r.Read(d.buf[d.j:])
		d.j += n
	}
	return nil
}

func (d *countDecoder) byte() (byte, error) {
	if d.i == d.j {
		if err := d.fill(); err != nil {
			return 0, err
		}
	}
	b := d.buf[d.i]
	d.i++
	return b, nil
}

// uvarint reads a uvarint, refusing one longer than its value needs.
func (d *countDecoder) uvarint() (uint64, error) {
	var v uint64
	for s := 0; s < 70; s += 7 {
		b, err := d.byte()
		if err != nil {
			return 0, err
		}
		if s == 63 && b > 1 {
			break
		}
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			if b == 0 && s > 0 {
				break // not minimal
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: bad varint", d.f.corrupt)
}

// next returns the next entry; the key is valid until the following call.
// ok is false at the end, once the number of entries and the checksum are
// verified and nothing follows.
func (d *countDecoder) next() (key []byte, count int64, aux uint64, ok bool, err error) {
	if d.err != nil || d.done {
		return nil, 0, 0, false, d.err
	}
	key, count, aux, ok, err = d.entry()
	if err != nil {
		d.err = err
	}
	return key, count, aux, ok, err
}

func (d *countDecoder) entry() ([]byte, int64, uint64, bool, error) {
	var shared, suffix, uc, aux uint64
	var err error
	if k, ok := d.fast(); ok {
		return k.key, k.count, k.aux, k.err == nil, k.err
	}
	if shared, err = d.uvarint(); err != nil {
		return nil, 0, 0, false, err
	}
	if suffix, err = d.uvarint(); err != nil {
		return nil, 0, 0, false, err
	}
	if shared == 0 && suffix == 0 {
		return nil, 0, 0, false, d.end()
	}
	if err := d.header(shared, suffix); err != nil {
		return nil, 0, 0, false, err
	}
	first := d.firstAfter(shared)
	d.key = d.key[:shared]
	for rest := int(suffix); rest > 0; {
		if d.i == d.j {
			if err := d.fill(); err != nil {
				return nil, 0, 0, false, err
			}
		}
		c := min(rest, d.j-d.i)
		d.key = append(d.key, d.buf[d.i:d.i+c]...)
		d.i += c
		rest -= c
	}
	if uc, err = d.uvarint(); err != nil {
		return nil, 0, 0, false, err
	}
	if aux, err = d.uvarint(); err != nil {
		return nil, 0, 0, false, err
	}
	count, err := d.check(shared, first, uc, aux)
	return d.key, count, aux, err == nil, err
}

// header checks an entry's lengths against the previous key.
func (d *countDecoder) header(shared, suffix uint64) error {
	if suffix == 0 || shared > uint64(len(d.key)) || suffix > maxRecordKey-shared {
		return fmt.Errorf("%w: bad entry %d", d.f.corrupt, d.n)
	}
	return nil
}

// firstAfter returns the previous key's byte after shared, or -1.
func (d *countDecoder) firstAfter(shared uint64) int {
	if shared < uint64(len(d.key)) {
		return int(d.key[shared])
	}
	return -1
}

// check finishes an entry whose key is d.key: it must sort strictly after
// the previous key and share exactly shared bytes with it (first is the
// previous key's byte after them, or -1), and its numbers must be allowed.
func (d *countDecoder) check(shared uint64, first int, uc, aux uint64) (int64, error) {
	if first >= 0 && int(d.key[shared]) <= first {
		return 0, fmt.Errorf("%w: entry %d out of order", d.f.corrupt, d.n)
	}
	count := int64(uc >> 1)
	if uc&1 != 0 {
		count = ^count
	}
	if !d.f.valid(count, aux) {
		return 0, fmt.Errorf("%w: entry %d: %d, %d", d.f.corrupt, d.n, count, aux)
	}
	d.n++
	return count, nil
}

type fastEntry struct {
	key   []byte
	count int64
	aux   uint64
	err   error
}

// fast decodes an entry that lies whole in the buffer, without a call per
// byte; false (nothing read) when it does not, or is the end, or breaks the
// format (the slow path says how).
func (d *countDecoder) fast() (fastEntry, bool) {
	b := d.buf[d.i:d.j]
	shared, n1 := minUvarint(b)
	if n1 <= 0 {
		return fastEntry{}, false
	}
	suffix, n2 := minUvarint(b[n1:])
	if n2 <= 0 || suffix == 0 || d.header(shared, suffix) != nil || uint64(len(b)-n1-n2) < suffix {
		return fastEntry{}, false
	}
	p := n1 + n2 + int(suffix)
	uc, n3 := minUvarint(b[p:])
	if n3 <= 0 {
		return fastEntry{}, false
	}
	aux, n4 := minUvarint(b[p+n3:])
	if n4 <= 0 {
		return fastEntry{}, false
	}
	first := d.firstAfter(shared)
	d.key = append(d.key[:shared], b[n1+n2:p]...)
	d.i += p + n3 + n4
	count, err := d.check(shared, first, uc, aux)
	return fastEntry{d.key, count, aux, err}, true
}

// minUvarint decodes a uvarint at the start of b; n ≤ 0 when b does not
// hold one whole, or it is longer than its value needs.
func minUvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 1 && b[n-1] == 0 {
		return 0, 0
	}
	return v, n
}

// end reads and checks what follows the last entry.
func (d *countDecoder) end() error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	if n != uint64(d.n) {
		return fmt.Errorf("%w: %d entries, it says %d", d.f.corrupt, d.n, n)
	}
	d.crc = crc32.Update(d.crc, crcTable, d.buf[d.from:d.i])
	d.from = d.i
	want := d.crc
	var sum [4]byte
	for k := range sum {
		if sum[k], err = d.byte(); err != nil {
			return err
		}
	}
	if binary.BigEndian.Uint32(sum[:]) != want {
		return fmt.Errorf("%w: checksum", d.f.corrupt)
	}
	if d.i < d.j {
		return fmt.Errorf("%w: data after the checksum", d.f.corrupt)
	}
	for d.rerr == nil {
		var k int
		k, d.rerr = d.r.Read(d.buf[:1])
		if k > 0 {
			return fmt.Errorf("%w: data after the checksum", d.f.corrupt)
		}
	}
	if d.rerr != io.EOF {
		return fmt.Errorf("sweep: read %s: %w", d.f.name, d.rerr)
	}
	d.done = true
	return nil
}

// count returns the number of entries read so far.
func (d *countDecoder) count() int64 { return d.n }
