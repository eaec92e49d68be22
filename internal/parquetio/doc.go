// Package parquetio writes and reads the Parquet parts of the GC report
// (deleted/, failed/, unrecognized/ of a run) in blob storage, for package
// sweep.
//
// [Writer] streams rows of a struct type to one object as every reader of
// the report reads them: data page v1, Snappy (Spark's default codec), and
// the PLAIN encoding for strings when the struct's tags ask for it
// (parquet-go's defaults, v2 pages and DELTA_LENGTH_BYTE_ARRAY, are refused
// by Spark's vectorised reader before Spark 3.4). Nothing is visible under
// the object's name unless Close succeeds.
//
// [Strings] reads one string column of a part written by anyone, Spark
// included, in batches of at most 256 values. The part is outside input:
// it is checked by package parquetguard before parquet-go reads it, so its
// cost is bounded whatever it holds, and a panic of the decoder is an
// error. Every refusal wraps [ErrInvalid]; an I/O error met while reading
// stays in the chain too.
package parquetio
