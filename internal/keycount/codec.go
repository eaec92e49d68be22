package keycount

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
)

// MaxKey bounds a key of a counted key stream: object stores take keys of
// about 1 KiB.
const MaxKey = 64 << 10

var table = crc32.MakeTable(crc32.Castagnoli)

// Format is one kind of counted key stream.
type Format struct {
	// Magic starts the stream; it ends in '\n'.
	Magic string
	// Name names the stream in errors ("keep index").
	Name string
	// Corrupt is wrapped by every error of a malformed stream.
	Corrupt error
	// Valid reports whether an entry's count and aux are allowed.
	Valid func(count int64, aux uint64) bool
}

// Encoder writes a counted key stream. Not safe for concurrent use.
type Encoder struct {
	w    io.Writer
	f    *Format
	buf  []byte // entries not yet written
	size int    // write when buf reaches it
	prev []byte
	n    int64
	crc  uint32
	err  error
}

func NewEncoder(w io.Writer, f *Format, size int) *Encoder {
	e := &Encoder{w: w, f: f, size: max(size, 512)}
	e.buf = append(make([]byte, 0, e.size+64), f.Magic...)
	return e
}

func (e *Encoder) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		e.crc = crc32.Update(e.crc, table, e.buf)
		_, e.err = e.w.Write(e.buf)
		e.buf = e.buf[:0]
	}
	return e.err
}

// Add appends an entry; key must be after the previous one, and count and
// aux allowed by the format.
func (e *Encoder) Add(key []byte, count int64, aux uint64) error {
	if e.err != nil {
		return e.err
	}
	shared := commonPrefix(e.prev, key)
	switch {
	case len(key) == 0 || len(key) > MaxKey:
		return fmt.Errorf("%w: key of %d bytes", e.f.Corrupt, len(key))
	case e.n > 0 && (shared == len(key) || shared < len(e.prev) && key[shared] < e.prev[shared]):
		return fmt.Errorf("%w: key %q after %q", e.f.Corrupt, key, e.prev)
	case !e.f.Valid(count, aux):
		return fmt.Errorf("%w: entry %q with %d, %d", e.f.Corrupt, key, count, aux)
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

// Finish writes the end, the number of entries and the checksum.
func (e *Encoder) Finish() error {
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

// Decoder reads a counted key stream.
type Decoder struct {
	r    io.Reader
	f    *Format
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

func NewDecoder(r io.Reader, f *Format, bufSize int) (*Decoder, error) {
	d := &Decoder{r: r, f: f, buf: make([]byte, max(bufSize, 64))}
	for i := 0; i < len(f.Magic); i++ {
		b, err := d.byte()
		if err != nil {
			return nil, err
		}
		if b != f.Magic[i] {
			return nil, fmt.Errorf("%w: not a %s", f.Corrupt, f.Name)
		}
	}
	return d, nil
}

// fill reads more bytes; io.ErrUnexpectedEOF when there are none.
func (d *Decoder) fill() error {
	d.crc = crc32.Update(d.crc, table, d.buf[d.from:d.i])
	d.j = copy(d.buf, d.buf[d.i:d.j])
	d.i, d.from = 0, 0
	for d.j == 0 {
		if d.rerr != nil {
			if d.rerr == io.EOF {
				return fmt.Errorf("%w: cut short", d.f.Corrupt)
			}
			return fmt.Errorf("keycount: read %s: %w", d.f.Name, d.rerr)
		}
		var n int
		n, d.rerr = d.r.Read(d.buf[d.j:])
		d.j += n
	}
	return nil
}

func (d *Decoder) byte() (byte, error) {
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
func (d *Decoder) uvarint() (uint64, error) {
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
	return 0, fmt.Errorf("%w: bad varint", d.f.Corrupt)
}

// Next returns the next entry; the key is valid until the following call.
// ok is false at the end, once the number of entries and the checksum are
// verified and nothing follows.
func (d *Decoder) Next() (key []byte, count int64, aux uint64, ok bool, err error) {
	if d.err != nil || d.done {
		return nil, 0, 0, false, d.err
	}
	key, count, aux, ok, err = d.entry()
	if err != nil {
		d.err = err
	}
	return key, count, aux, ok, err
}

func (d *Decoder) entry() ([]byte, int64, uint64, bool, error) {
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
func (d *Decoder) header(shared, suffix uint64) error {
	if suffix == 0 || shared > uint64(len(d.key)) || suffix > MaxKey-shared {
		return fmt.Errorf("%w: bad entry %d", d.f.Corrupt, d.n)
	}
	return nil
}

// firstAfter returns the previous key's byte after shared, or -1.
func (d *Decoder) firstAfter(shared uint64) int {
	if shared < uint64(len(d.key)) {
		return int(d.key[shared])
	}
	return -1
}

// check finishes an entry whose key is d.key: it must sort strictly after
// the previous key and share exactly shared bytes with it (first is the
// previous key's byte after them, or -1), and its numbers must be allowed.
func (d *Decoder) check(shared uint64, first int, uc, aux uint64) (int64, error) {
	if first >= 0 && int(d.key[shared]) <= first {
		return 0, fmt.Errorf("%w: entry %d out of order", d.f.Corrupt, d.n)
	}
	count := int64(uc >> 1)
	if uc&1 != 0 {
		count = ^count
	}
	if !d.f.Valid(count, aux) {
		return 0, fmt.Errorf("%w: entry %d: %d, %d", d.f.Corrupt, d.n, count, aux)
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
func (d *Decoder) fast() (fastEntry, bool) {
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
func (d *Decoder) end() error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	if n != uint64(d.n) {
		return fmt.Errorf("%w: %d entries, it says %d", d.f.Corrupt, d.n, n)
	}
	d.crc = crc32.Update(d.crc, table, d.buf[d.from:d.i])
	d.from = d.i
	want := d.crc
	var sum [4]byte
	for k := range sum {
		if sum[k], err = d.byte(); err != nil {
			return err
		}
	}
	if binary.BigEndian.Uint32(sum[:]) != want {
		return fmt.Errorf("%w: checksum", d.f.Corrupt)
	}
	if d.i < d.j {
		return fmt.Errorf("%w: data after the checksum", d.f.Corrupt)
	}
	for d.rerr == nil {
		var k int
		k, d.rerr = d.r.Read(d.buf[:1])
		if k > 0 {
			return fmt.Errorf("%w: data after the checksum", d.f.Corrupt)
		}
	}
	if d.rerr != io.EOF {
		return fmt.Errorf("keycount: read %s: %w", d.f.Name, d.rerr)
	}
	d.done = true
	return nil
}

// Count returns the number of entries read so far.
func (d *Decoder) Count() int64 { return d.n }

// N returns the number of entries added so far.
func (e *Encoder) N() int64 { return e.n }

// Sum returns the checksum Finish wrote: the stream's last 4 bytes, big-endian.
func (e *Encoder) Sum() uint32 { return e.crc }
