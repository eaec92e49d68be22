// Package crosscheck holds tests only: it reads what lakegc writes with
// software lakegc did not write, so that "byte-compatible with lakeFS" is
// checked against an independent implementation rather than asserted.
//
// Apache Arrow's Go Parquet reader (github.com/apache/arrow-go/v18/parquet)
// reads the uncommitted export of package uncommitted and the deleted/
// report of package sweep: the schema (names, physical and logical types),
// the codec of every column chunk, the page kinds (data page v1 only, the
// kind Spark's vectorised reader needs before Spark 3.4) and value
// encodings, and every row against a model of what was exported. It reads
// metadata and pages with the reader's file API and values through pqarrow.
//
// # What is read
//
// The uncommitted export of a random staging area (9 branches, Unicode keys
// and branch names, relative and full addresses inside and outside the
// namespace, tombstones, a trailer), split over several files by a small
// WithMaxFileSize, once with the default codec (GZIP at DefaultGzipLevel,
// lakeFS's) and once each with uncommitted.Zstd (what lakegc.Collect
// writes), GZIP's default level, parquet-go's ZSTD and Snappy
// (WithCompression): two columns, physical_address BYTE_ARRAY
// annotated String (UTF8) and creation_date INT64; every column chunk in the
// expected codec; data pages v1 only; values PLAIN or dictionary encoded; and
// the rows of all files together equal, row for row, to the model's.
//
// The deleted/ report of sweep.Mark (one UTF8 column address, Snappy, pages
// v1, PLAIN or dictionary): its addresses equal the model's garbage and what
// sweep.Candidates returns. And failed/ (address, error) after a sweep on the
// S3-protocol server of internal/s3test, where some deletes are
// refused.
//
// The checks are themselves tested: a file written with parquet-go's
// defaults (v2 pages, DELTA_LENGTH_BYTE_ARRAY, no compression, no UTF8
// annotation) must be reported on each count.
package crosscheck
