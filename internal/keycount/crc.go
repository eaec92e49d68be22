package keycount

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// CopyChecked copies a stream of format f from src to dst, checking only
// its magic and checksum: a copy at the speed of the reader and the writer.
// Its entries are checked when a Decoder reads them.
func CopyChecked(dst io.Writer, src io.Reader, f *Format) error {
	cw := &crcWriter{w: dst}
	if _, err := io.Copy(cw, src); err != nil {
		return err
	}
	switch {
	case cw.n < int64(len(f.Magic))+4 || len(cw.head) < len(f.Magic) || string(cw.head[:len(f.Magic)]) != f.Magic:
		return fmt.Errorf("%w: not a %s", f.Corrupt, f.Name)
	case binary.BigEndian.Uint32(cw.tail[:]) != cw.crc:
		return fmt.Errorf("%w: checksum", f.Corrupt)
	}
	return nil
}

// crcWriter writes through, and keeps the CRC-32C of all but the last 4
// bytes written, those bytes, and the first bytes (up to 32).
type crcWriter struct {
	w    io.Writer
	crc  uint32
	tail [4]byte
	head []byte
	n    int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	if len(c.head) < 32 {
		c.head = append(c.head, p[:min(len(p), 32-len(c.head))]...)
	}
	// The bytes before the last 4 of what is written so far go into the
	// checksum: the held tail first, then p but its last 4.
	held := int(min(c.n, 4))
	all := len(p) + held
	if all > 4 {
		if out := all - 4; out <= held {
			c.crc = crc32.Update(c.crc, table, c.tail[:out])
		} else {
			c.crc = crc32.Update(c.crc, table, c.tail[:held])
			c.crc = crc32.Update(c.crc, table, p[:out-held])
		}
	}
	var last [8]byte
	k := copy(last[:], c.tail[:held])
	k += copy(last[k:], p[max(len(p)-4, 0):])
	copy(c.tail[:], last[max(k-4, 0):k])
	c.n += int64(len(p))
	return c.w.Write(p)
}
