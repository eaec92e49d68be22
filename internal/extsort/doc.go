// Package extsort sorts byte-string keys in bounded memory, spilling to
// temporary files, and merges sorted key streams: the engine under sweep's
// Mark, which sorts a keep set and a listing far larger than its memory
// budget and merge-joins them.
//
// The parts:
//
//   - [SpillDir] is a private temporary folder, locked while in use so that
//     [RemoveStaleSpills] can remove those of killed processes and no live
//     one.
//   - [KeyEncoder] and [KeyDecoder] write and read key streams: keys
//     prefix-compressed against the one before, with an end that counts
//     them, so a stream cut short or altered reads as an error, never as a
//     shorter one. A [KeyFormat] adds a magic and a checksum, or makes the
//     stream strict (keys ascend, the decoder accepts only what the
//     encoder writes): package sweep's live record is one.
//   - [RunWriter] and [OpenRun] write and read run files, key streams of
//     any keys in any order.
//   - [Sorter] gathers keys in one block of memory of a fixed size,
//     spills each full block as a sorted run and merges the runs in the end,
//     dropping repeats ([NewRepeatSorter]: keeping them, for a caller that
//     counts them). The block counts against its budget only the pages
//     it touches; where the system allows it is mapped outside the Go heap.
//   - [Pool] and [MemRun] hold many small listings in memory within one
//     shared budget, so that they need no file each.
//   - [NewMerge], [NewConcat], [Strict] and [NewPrefetch] combine streams
//     ([Iter]): a k-way merge that drops repeats, streams one after the
//     other, a check that fails a stream whose keys do not strictly ascend,
//     and a stream read ahead on a goroutine of its own.
//
// Every stream this package makes fails rather than yield keys out of
// order: a merge whose input descends, a run file altered on disk, a
// checked stream that goes back. A caller that trusts the order (a
// merge-join that keeps what both sides hold) never sees a key it would
// skip.
//
// Memory: a Sorter holds at most the bytes given to NewSorter, a Pool at
// most what it was given; run file buffers (SpillDir's ioBuf each, one per
// open file) and prefetch batches (under 512 KiB a stream) are outside
// them. Errors start with "extsort: " (a key stream's errors are the
// caller's to name: they wrap KeyFormat.Corrupt); a key too long for a block's 32-bit
// offsets wraps [ErrKeyTooLong].
package extsort
