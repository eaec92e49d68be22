package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/extsort"
)

// A live record is the sorted set of keys a run kept in the slices, which the
// next optimized run carries over for the slices it does not list. It is a
// front-coded stream, so that keys sharing "data/<slice>/" cost a few bytes
// each:
//
//	magic      "lakegc-live\x00v1\n"
//	entries    uvarint shared, uvarint suffix length, suffix bytes
//	           (the key is the previous key's first shared bytes + suffix;
//	           keys strictly ascend, so every suffix is non-empty)
//	end        uvarint 0, uvarint 0
//	count      uvarint, the number of entries
//	checksum   CRC-32C (Castagnoli) of everything before it, 4 bytes big-endian
//
// Nothing may follow the checksum. The reader refuses a key longer than
// maxRecordKey, a shared length past the previous key or shorter than the
// keys share, a varint longer than its value needs, keys out of order, a
// wrong count or checksum, and a stream cut short: it accepts only what the
// encoder writes, and never allocates more than one key of maxRecordKey
// bytes.
const liveMagic = "lakegc-live\x00v1\n"

// maxRecordKey bounds a key of a live record: object stores take keys of
// about 1 KiB; 64 KiB is parquetguard's bound on an address too.
const maxRecordKey = 64 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadRecord is wrapped by every error of a malformed live record.
var errBadRecord = fmt.Errorf("%w: live record", ErrInvalidInput)

// liveEncoder writes a live record to w. Entries gather in buf and go to w,
// and into the checksum, a few KiB at a time: the end (finish) writes the
// rest.
type liveEncoder struct {
	w    io.Writer
	crc  uint32
	prev []byte
	n    int64
	buf  []byte
}

// liveFlush is how many bytes of entries the encoder gathers before it
// writes them.
const liveFlush = 8 << 10

func newLiveEncoder(w io.Writer) (*liveEncoder, error) {
	e := &liveEncoder{w: w, buf: make([]byte, 0, liveFlush+64)}
	return e, e.write([]byte(liveMagic))
}

func (e *liveEncoder) write(p []byte) error {
	e.crc = crc32.Update(e.crc, castagnoli, p)
	_, err := e.w.Write(p)
	return err
}

// add appends key, which must sort after the previous one. The prefix key
// shares with the previous key, which the entry needs, also says which of
// the two sorts first: the key sorts after it when it goes on past the
// shared bytes and either the previous key ends there or the key's next
// byte is the larger.
func (e *liveEncoder) add(key []byte) error {
	if len(key) == 0 || len(key) > maxRecordKey {
		return fmt.Errorf("%w: key of %d bytes", errBadRecord, len(key))
	}
	shared := extsort.CommonPrefix(key, e.prev)
	if e.n > 0 && (shared == len(key) || shared < len(e.prev) && key[shared] < e.prev[shared]) {
		return fmt.Errorf("%w: %q after %q", errBadRecord, key, e.prev)
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(shared))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(key)-shared))
	e.buf = append(e.buf, key[shared:]...)
	e.prev = append(e.prev[:shared], key[shared:]...) // the shared bytes are there
	e.n++
	if len(e.buf) >= liveFlush {
		err := e.write(e.buf)
		e.buf = e.buf[:0]
		return err
	}
	return nil
}

// finish writes the entries gathered, the end, the count and the checksum.
func (e *liveEncoder) finish() error {
	e.buf = binary.AppendUvarint(append(e.buf, 0, 0), uint64(e.n))
	if err := e.write(e.buf); err != nil {
		return err
	}
	e.buf = e.buf[:0]
	_, err := e.w.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	return err
}

// liveDecoder reads a live record; its keys come out strictly ascending.
type liveDecoder struct {
	r    *bufio.Reader
	crc  uint32
	hdr  []byte
	key  []byte
	suf  []byte
	n    int64
	done bool
}

func newLiveDecoder(r io.Reader, bufSize int) (*liveDecoder, error) {
	d := &liveDecoder{r: bufio.NewReaderSize(r, bufSize)}
	magic := make([]byte, len(liveMagic))
	if _, err := io.ReadFull(d.r, magic); err != nil {
		return nil, d.readErr(err)
	}
	if string(magic) != liveMagic {
		return nil, fmt.Errorf("%w: bad magic", errBadRecord)
	}
	d.crc = crc32.Update(0, castagnoli, magic)
	return d, nil
}

func (d *liveDecoder) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: cut short", errBadRecord)
	}
	return fmt.Errorf("sweep: read live record: %w", err)
}

// uvarint reads a uvarint, keeping its bytes for the checksum.
func (d *liveDecoder) uvarint() (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		if i == binary.MaxVarintLen64 {
			return 0, fmt.Errorf("%w: varint overflows", errBadRecord)
		}
		b, err := d.r.ReadByte()
		if err != nil {
			return 0, d.readErr(err)
		}
		d.hdr = append(d.hdr, b)
		if i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, fmt.Errorf("%w: varint overflows", errBadRecord)
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b == 0 && i > 0 {
				return 0, fmt.Errorf("%w: varint of %d bytes for %d", errBadRecord, i+1, x)
			}
			return x, nil
		}
	}
}

// next returns the next key, valid until the following call; ok is false at
// the end, once the count and checksum are verified.
func (d *liveDecoder) next() ([]byte, bool, error) {
	if d.done {
		return nil, false, nil
	}
	d.hdr = d.hdr[:0]
	shared, err := d.uvarint()
	if err != nil {
		return nil, false, err
	}
	suffix, err := d.uvarint()
	if err != nil {
		return nil, false, err
	}
	if suffix == 0 {
		return nil, false, d.end(shared)
	}
	if shared > uint64(len(d.key)) || suffix > maxRecordKey || shared+suffix > maxRecordKey {
		return nil, false, fmt.Errorf("%w: entry %d: shared %d, suffix %d", errBadRecord, d.n, shared, suffix)
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.hdr)
	if cap(d.suf) < int(suffix) {
		d.suf = make([]byte, suffix, max(int(suffix), 64))
	}
	d.suf = d.suf[:suffix]
	if _, err := io.ReadFull(d.r, d.suf); err != nil {
		return nil, false, d.readErr(err)
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.suf)
	// The first shared bytes are the previous key's, so the new key sorts
	// after it when its suffix sorts after the rest of the previous key.
	if d.n > 0 && bytes.Compare(d.suf, d.key[shared:]) <= 0 {
		return nil, false, fmt.Errorf("%w: entry %d out of order", errBadRecord, d.n)
	}
	// The encoder shares all it can: a suffix that starts with the previous
	// key's next byte is one it would not write.
	if shared < uint64(len(d.key)) && d.suf[0] == d.key[shared] {
		return nil, false, fmt.Errorf("%w: entry %d shares %d bytes, fewer than it could", errBadRecord, d.n, shared)
	}
	d.key = append(d.key[:shared], d.suf...)
	d.n++
	return d.key, true, nil
}

// end reads and checks the count and the checksum, and that nothing follows.
func (d *liveDecoder) end(shared uint64) error {
	if shared != 0 {
		return fmt.Errorf("%w: entry %d: empty suffix", errBadRecord, d.n)
	}
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.hdr)
	var sum [4]byte
	if _, err := io.ReadFull(d.r, sum[:]); err != nil {
		return d.readErr(err)
	}
	if n != uint64(d.n) {
		return fmt.Errorf("%w: count %d, read %d keys", errBadRecord, n, d.n)
	}
	if binary.BigEndian.Uint32(sum[:]) != d.crc {
		return fmt.Errorf("%w: checksum mismatch", errBadRecord)
	}
	if _, err := d.r.ReadByte(); err != io.EOF {
		if err != nil {
			return d.readErr(err)
		}
		return fmt.Errorf("%w: data after the checksum", errBadRecord)
	}
	d.done = true
	return nil
}

// liveWriter streams a live record to an object; nothing is visible under
// its name unless close succeeds.
type liveWriter struct {
	cancel context.CancelFunc
	bw     *blob.Writer
	w      *bufio.Writer
	enc    *liveEncoder
	key    string
}

func newLiveWriter(ctx context.Context, bucket *blob.Bucket, key string, bufSize int) (*liveWriter, error) {
	ctx, cancel := context.WithCancel(ctx)
	bw, err := bucket.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	lw := &liveWriter{cancel: cancel, bw: bw, w: bufio.NewWriterSize(bw, bufSize), key: key}
	if lw.enc, err = newLiveEncoder(lw.w); err != nil {
		lw.abort()
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	return lw, nil
}

func (lw *liveWriter) add(key []byte) error {
	if err := lw.enc.add(key); err != nil {
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	return nil
}

func (lw *liveWriter) close() error {
	defer lw.cancel()
	err := lw.enc.finish()
	if err == nil {
		err = lw.w.Flush()
	}
	if err != nil {
		lw.abort()
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	if err := lw.bw.Close(); err != nil {
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	return nil
}

func (lw *liveWriter) abort() {
	lw.cancel()
	lw.bw.Close()
}
