// Package keycount reads, writes and merges counted key streams: keys in
// strictly ascending byte order, each with a count and a second number
// (aux), front-coded, under a magic and a CRC-32C. It is the engine under
// package sweep's counted keep index, which remembers how many parts
// (lakeFS's ranges) hold each key of a committed keep set, so that a run
// reads only the parts that changed.
//
// The parts:
//
//   - [Encoder] and [Decoder] write and read a stream of a [Format]: the
//     format's magic, then entries (uvarint shared, uvarint suffix length,
//     suffix, zig-zag varint count, uvarint aux), an end (two zero bytes),
//     the number of entries and the checksum of everything before it. The
//     decoder accepts only what the encoder writes and what Format.Valid
//     allows, and holds no more than its buffer and one key of at most
//     [MaxKey] bytes; a stream cut short, altered or followed by anything
//     is an error wrapping Format.Corrupt.
//   - [CopyChecked] copies a stream checking its magic and checksum only,
//     at the speed of the copy; [CopyFile] and [CopyCheckedFile] copy one
//     (a record read from a bucket) to a file of an extsort.SpillDir, the
//     first checking every entry on the way, the second as CopyChecked,
//     and leave no file when they fail; [OpenFile] reads such a file.
//   - [Iter] streams of counted keys: [NewMerge] sums the counts of a key
//     across streams and leaves out the keys whose sum is 0 (a key taken
//     back by one stream and given by another cancels), [Spill] and
//     [MergeSpills] keep streams in spill files of an extsort.SpillDir,
//     merged a bounded number at a time.
//   - [Parts] counts immutable named parts, each a sorted key set, into
//     spill files, a bounded number open at once, and keeps each part's
//     [Stat] (its keys' number and checksum), so that a part read again is
//     known to hold what it held ([ErrChanged] otherwise); the parts of a
//     group are first read up to Parts.ReadAhead at once.
//
// Every stream fails rather than yield keys out of order. Errors of a
// stream wrap its Format.Corrupt; others start with "keycount: ".
package keycount
