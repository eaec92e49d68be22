// Package parquetguard checks a Parquet file before parquet-go reads it, so
// that a file costs its reader bounded memory whatever it holds. It is the
// module's own: package uncommitted's ReadRun and package sweep's
// Candidates read outside files through it.
//
// parquet-go trusts what a file claims, and allocates it before reading the
// bytes that would back it: the sizes in a page header, the length a Snappy
// block or a ZSTD frame starts with, whatever a GZIP or Brotli stream
// expands to, the runs of levels and dictionary indexes, the counts of delta
// encodings, the lengths of Thrift lists and strings in the footer and page
// headers, the depth of the schema. An LZ4_RAW block that does not decode
// makes it double a buffer until the process dies. Files of a few hundred
// bytes make it allocate gigabytes.
//
// [Check] reads the file as parquet-go will, before it does, and refuses it
// when any claim exceeds the bytes behind it or a [Limits]:
//
//   - the footer: its size; every Thrift length and list size against the
//     bytes left; its nesting; an estimate of its decoded size; the schema's
//     depth, and a column chunk per leaf in every row group;
//   - every page of the columns read, from where parquet-go starts: the
//     header's size (it is decoded from bytes), the page's sizes and number
//     of values;
//   - every compressed page is uncompressed once, through a decoder capped
//     at the size its header claims (a buffer of exactly that size, or a
//     stream read one byte past it), and must fill it exactly: a bomb costs
//     its claimed size at most;
//   - the levels and values, as parquet-go decodes them: RLE and bit-packed
//     runs, delta headers and miniblocks, dictionary indexes hold no more
//     values than the page; byte arrays are at most MaxValueSize each; the
//     bytes a page's values decode to — a dictionary entry as often as the
//     page refers to it, a delta prefix as often as it is repeated — are at
//     most MaxPageSize.
//
// Check also refuses what would make parquet-go read other bytes than it
// checked: a page whose stored bytes do not match the CRC-32 its header
// carries (when not 0; parquet-go checks it on the pages it reads in
// order, not on the dictionary page its row reader loads apart). Check
// walks a chunk's pages from its dictionary_page_offset when the footer
// gives one, from its data_page_offset otherwise, as parquet-go's page
// reader (ColumnChunk.Pages) does.
//
// parquet-go's row reader does not: it seeks a chunk to its
// data_page_offset, and would skip what lies before unread, or read from
// the middle of a page. With [Limits.RowReaderLayout] set, Check (and so
// Open and ReadPlain) also refuses a chunk whose footer gives a
// dictionary_page_offset (not 0) other than its data_page_offset, where
// the page at that offset is not a dictionary page ending at
// data_page_offset. Files DuckDB wrote before 0.10.1 can be so (a
// data_page_offset short of the dictionary page's end by its header,
// duckdb/duckdb#10829): a reader of pages in order, from the chunk's
// start, reads them right, and leaves RowReaderLayout unset (package
// inventory, and parquetio); package uncommitted, whose ReadRun reads
// rows, sets it on every file it reads. A file Check accepted without it
// may make the row reader read bytes Check did not check, outside the
// bound below: it holds for the row reader only with RowReaderLayout set.
//
// Every codec parquet-go reads is accepted: UNCOMPRESSED, SNAPPY, GZIP,
// BROTLI, ZSTD, LZ4_RAW. LZ4 in Hadoop's framing (what Spark's "lz4" wrote
// before parquet-mr 1.12) and LZO are refused with [ErrUnsupportedCodec], as
// are LZ4_RAW pages that compress less than 3:1: parquet-go v0.32 reads
// those wrong, without an error (parquet-go/parquet-go#608).
//
// # The bound
//
// With the default limits (pages of 16 MiB and 2^20 values, values of 64
// KiB, footers of 16 MiB and 64 MiB decoded), refusing a file allocates a
// few MiB, at most about twice the largest page. Reading a file Check
// accepted is bounded by those limits; the costliest such files (pages of
// 16 MiB uncompressed from a few KiB, dictionaries of 2^20 entries, 40 000
// row groups) peaked at about 230 MiB of heap through ReadRun's two columns
// and 170 MiB through Candidates (garbage not yet collected included), and
// their tests hold them under 320 MiB.
//
// Check reads each page once more than parquet-go does, and uncompresses
// it: a reader's I/O doubles, and its CPU grows by about the time
// decompression takes.
//
// [Open] checks a file and opens it with parquet-go as Check assumes
// (SkipPageIndex, SkipBloomFilters), a panic of parquet-go an error: both
// readers open their files through it.
//
// [ReadPlain] checks a file as Check does and hands over the values of a
// required BYTE_ARRAY column's pages of PLAIN values as it checks them, for
// a reader that needs those values only (package uncommitted's
// Addresses): each page is read and uncompressed once, and parquet-go,
// opened on the footer alone ([OpenFooter]), reads none. A column of
// another kind ends it with [ErrNotPlain], and is read the other way.
//
// [FooterRows] walks a footer with the same Thrift scan, counting list
// elements rather than estimating memory, and returns its row count
// without decoding it: package uncommitted checks the footers of a run's
// files against its manifest with it.
package parquetguard
