// Package crosscheck holds tests only: it reads what lakegc writes with
// software lakegc did not write, so that "byte-compatible with lakeFS" is
// checked against an independent implementation rather than asserted.
//
// Apache Arrow's Go Parquet reader (github.com/apache/arrow-go/v18/parquet)
// reads the uncommitted export of package uncommitted and the deleted/
// report of package sweep: the schema (names, physical and logical types),
// the codec of every column chunk, the page kinds (data page v1 only, the
// kind Spark's vectorised reader needs before Spark 3.4) and value
// encodings, and every row against a model of what was exported.
package crosscheck
