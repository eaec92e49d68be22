package sweep

import (
	"errors"
	"fmt"
	"io"

	"github.com/lakegc/lakegc/internal/extsort"
)

// A live record is the sorted set of keys a run of state version 1 kept in
// the slices, which the next optimized run carries over for the slices it
// does not list; runs read it and no longer write it (the keep index took
// its place, and the tests hold its encoder). It is a
// strict key stream of internal/extsort (front-coded, so that keys sharing
// "data/<slice>/" cost a few bytes each) under a magic and a checksum:
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
// wrong count or checksum, and a stream cut short: it accepts only what
// extsort's encoder writes, and never allocates more than one key of maxRecordKey
// bytes.
const liveMagic = "lakegc-live\x00v1\n"

// maxRecordKey bounds a key of a live record: object stores take keys of
// about 1 KiB; 64 KiB is parquetguard's bound on an address too.
const maxRecordKey = 64 << 10

// errBadRecord is wrapped by every error of a malformed live record.
var errBadRecord = fmt.Errorf("%w: live record", ErrInvalidInput)

var liveFormat = extsort.KeyFormat{
	Magic:    liveMagic,
	Strict:   true,
	Checksum: true,
	MaxKey:   maxRecordKey,
	Corrupt:  errBadRecord,
}

// liveDecoder reads a live record; its keys come out strictly ascending.
type liveDecoder struct{ *extsort.KeyDecoder }

func newLiveDecoder(r io.Reader, bufSize int) (*liveDecoder, error) {
	d, err := extsort.NewKeyDecoder(r, liveFormat, bufSize)
	if err != nil {
		return nil, liveReadErr(err)
	}
	return &liveDecoder{d}, nil
}

// next returns the next key, valid until the following call; ok is false at
// the end, once the count and checksum are verified.
func (d *liveDecoder) next() ([]byte, bool, error) {
	k, ok, err := d.Next()
	return k, ok, liveReadErr(err)
}

// liveReadErr names an error of the reader (errors of the record wrap
// errBadRecord already).
func liveReadErr(err error) error {
	if err == nil || errors.Is(err, errBadRecord) {
		return err
	}
	return fmt.Errorf("sweep: read live record: %w", err)
}
