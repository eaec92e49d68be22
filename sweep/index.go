package sweep

import (
	"fmt"
	"math"

	"github.com/lakegc/lakegc/internal/keycount"
)

// The keep index and the parts record are counted key streams
// (internal/keycount): keys strictly ascending, each
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
// format's rules allow (Format.Valid); it never holds more than its buffer
// and one key of at most keycount.MaxKey bytes.
//
// The keep index is two records (version 3 of the records):
//
//   - the committed index (_lakegc/index) holds, for every key of the
//     committed keep set, its reference count (the number of parts that
//     hold it; 1 for a flat keep set; always above 0) and, in aux, the flag
//     idxListed: the key is in a slice, and the run found its object there
//     older than the cutoff and kept it (what the live record of earlier
//     versions held). Its entries are in blocks under headers (cindex.go),
//     so that a run copies the blocks nothing changed in without decoding
//     them;
//   - the staged index (_lakegc/staged, stagedFormat) holds every key the
//     run kept for the staged keys (the uncommitted keys and the young
//     listed ones) that it records: with the flag idxListed, or committed.
//     Its count is the key's committed count (0: the staged keys alone kept
//     it), the same as the committed index's when both hold the key.
//
// A key kept is recorded when it is committed, or listed in a slice; the
// next run judges the listed keys of the slices it does not list from
// these records: a key of the staged index that is no longer staged, with
// a count of 0 and no change to it, is garbage there.
//
// The parts record (_lakegc/parts) holds, for every part a run counted, its
// ID, the number of its keys and, in aux, a CRC-32C of its keys (each
// preceded by its length as a uvarint).
const (
	partsMagic  = "lakegc-parts\x00v1\n"
	stagedMagic = "lakegc-staged\x00v1\n"
)

// idxListed is the index's flag of a kept key found in its slice.
const idxListed = 1

var (
	errBadIndex = fmt.Errorf("%w: keep index", ErrInvalidInput)
	errBadParts = fmt.Errorf("%w: parts record", ErrInvalidInput)

	// blockFormat is a block's body in the committed index (cindex.go):
	// committed keys only.
	blockFormat = &keycount.Format{Magic: cblockMagic, Name: "committed index's block", Corrupt: errBadIndex,
		Valid: func(c int64, aux uint64) bool { return c > 0 && aux <= idxListed }}
	// stagedFormat is the staged index: the keys the run kept for the
	// staged keys (uncommitted and young), each with its committed count.
	stagedFormat = &keycount.Format{Magic: stagedMagic, Name: "staged index", Corrupt: errBadIndex,
		Valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= idxListed && (c > 0 || aux == idxListed) }}
	partsFormat = &keycount.Format{Magic: partsMagic, Name: "parts record", Corrupt: errBadParts,
		Valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= math.MaxUint32 }}
)
