package copytrack

import (
	"encoding/binary"
	"fmt"
	"time"
)

// A record is one Copy in the Store.
//
// Key: uvarint(len(repository)) | repository | created | seq
//   - The length prefix makes repository prefixes prefix-free: the records of
//     "a" and of "a/b" (or of any name with \x00 or \xff in it) never share a
//     scan.
//   - created is CreatedAt in Unix nanoseconds as a big-endian uint64 with the
//     sign bit flipped, so byte order is time order, before 1970 too.
//   - seq is 16 bytes: a process-wide counter, then a random process ID. The
//     counter keeps equal times in Track order; the random half keeps keys
//     from different processes apart, so a record is never overwritten.
//
// Value: version byte, then Branch, SrcPath, DstPath and PhysicalAddress, each
// as uvarint(len) | bytes. Repository and CreatedAt live in the key only.
const (
	recordVersion = 1
	timeLen       = 8
	seqLen        = 16
)

// repositoryPrefix returns the key prefix of every record of a repository.
func repositoryPrefix(repository string) []byte {
	p := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(repository)), uint64(len(repository)))
	return append(p, repository...)
}

func encodeKey(repository string, created time.Time, seq [seqLen]byte) []byte {
	k := repositoryPrefix(repository)
	k = binary.BigEndian.AppendUint64(k, uint64(created.UnixNano())^(1<<63))
	return append(k, seq[:]...)
}

// decodeKey returns the repository and creation time in a record key.
func decodeKey(key []byte) (repository string, created time.Time, err error) {
	n, w := uvarint(key)
	if w <= 0 || n > uint64(len(key)-w) || len(key)-w-int(n) != timeLen+seqLen {
		return "", time.Time{}, fmt.Errorf("%w: key %q: bad layout", ErrCorruptRecord, key)
	}
	rest := key[w:]
	repository = string(rest[:n])
	nanos := int64(binary.BigEndian.Uint64(rest[n:]) ^ (1 << 63))
	return repository, time.Unix(0, nanos).UTC(), nil
}

func encodeValue(c Copy) []byte {
	v := make([]byte, 0, 1+4*binary.MaxVarintLen32+len(c.Branch)+len(c.SrcPath)+len(c.DstPath)+len(c.PhysicalAddress))
	v = append(v, recordVersion)
	for _, s := range [...]string{c.Branch, c.SrcPath, c.DstPath, c.PhysicalAddress} {
		v = binary.AppendUvarint(v, uint64(len(s)))
		v = append(v, s...)
	}
	return v
}

// decodeRecord rebuilds the Copy stored under key. Any malformed input is an
// error wrapping ErrCorruptRecord that names the key.
func decodeRecord(key, value []byte) (Copy, error) {
	repository, created, err := decodeKey(key)
	if err != nil {
		return Copy{}, err
	}
	if len(value) == 0 || value[0] != recordVersion {
		return Copy{}, fmt.Errorf("%w: key %q: unknown value version", ErrCorruptRecord, key)
	}
	rest := value[1:]
	var fields [4]string
	for i := range fields {
		n, w := uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return Copy{}, fmt.Errorf("%w: key %q: truncated value", ErrCorruptRecord, key)
		}
		fields[i] = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	if len(rest) != 0 {
		return Copy{}, fmt.Errorf("%w: key %q: %d trailing bytes in value", ErrCorruptRecord, key, len(rest))
	}
	return Copy{
		Repository:      repository,
		Branch:          fields[0],
		SrcPath:         fields[1],
		DstPath:         fields[2],
		PhysicalAddress: fields[3],
		CreatedAt:       created,
	}, nil
}

// uvarint is binary.Uvarint refusing overlong encodings, so that a record
// decodes only from the bytes its encoding produces.
func uvarint(b []byte) (uint64, int) {
	n, w := binary.Uvarint(b)
	if w > 1 && b[w-1] == 0 {
		return 0, 0
	}
	return n, w
}
