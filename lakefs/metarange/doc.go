// Package metarange reads what a lakeFS repository's commits reference: the
// physical addresses of the objects in their metaranges and ranges, the
// SSTables lakeFS keeps at <storage namespace>/_lakefs/<id>. With the
// metarange IDs of the commits a GC keeps (lakeFS's commits report lists
// them), [Addresses] is the committed input of a mark, ready for
// sweep.Inputs.Committed: lakeFS's Spark GC client reads the same files to
// the same end.
//
// # The files
//
// lakeFS writes its tables with pebble's sstable writer (table format
// RocksDBv2, Snappy blocks, default comparer), each named by the SHA-256 of
// its contents, with user properties that include "type", "ranges" or
// "metaranges", and "count", its number of records. Every record's value is
// a graveler value,
//
//	varint len(identity) | identity | varint len(data) | data
//
// with signed varint lengths. A metarange has a record per range, keyed by
// the range's last key: the identity is the range's ID and the data a
// committed.RangeData message. A range has a record per object, keyed by
// its path: the data is a catalog.Entry message, whose fields address (1)
// and address_type (6) are all that is read here.
//
// # The addresses
//
// An entry's address is kept as lakeFS resolves it. A relative address is a
// key in the namespace, kept as stored, a linked object's included: lakeFS
// stores the address it handed out with its signature,
// data/<slice>/<xid>,<signature>, and the object was uploaded to exactly
// that key, which is what the namespace's listing shows. A full address
// (a URI) inside the namespace gives every key some lakeFS version or
// adapter could have stored its object at, all kept: the string after the
// namespace, as lakeFS's GC clients strip it; lakeFS's resolution of the
// URI since PR #9464 (September 2025), its raw path when Go keeps one
// ("data/year%3D2024/part-0"); the decoded path, which lakeFS resolved
// before that PR ("data/year=2024/part-0"); and for Azure the decoded blob
// name with the slashes around it trimmed, through any endpoint domain of
// the account (blob.core.windows.net, dfs.core.windows.net), as lakeFS's
// Azure adapter reaches it. Keeping a key that names no object costs
// nothing. A full address that names the namespace in another spelling (an
// S3 scheme alias such as s3a, "." or ".." segments, doubled slashes,
// percent-escapes, a file URI's other forms) stops the iteration with
// ErrNamespaceMismatch: the namespace given is not the one lakeFS writes.
// A full address outside the namespace, an import, is counted
// (Stats.Outside); when its path ends with a key shape lakeFS writes
// ("data/<slice>/<xid>", a flat hex name) that key is kept too, and the
// first 64 distinct such keys are looked up in the bucket: one that exists
// is the namespace's object in another spelling, and stops the iteration
// with ErrNamespaceMismatch. An address of the deprecated type, left by
// old commits, is full when lakeFS would parse it as a URI of one of its
// storages, and relative otherwise.
//
// # Reading
//
// Each metarange and each range is read once per iteration, however many
// metaranges list it: the IDs of the ranges read are kept in a set of
// 32-byte keys, about 50 bytes each with the map's overhead, at most
// WithMaxRanges of them. Tables are read whole into memory, at most
// WithConcurrency at a time and each at most WithMaxFileSize bytes, and
// addresses are streamed range by range: memory does not grow with the
// number of addresses. A missing table is an error, never skipped: the
// objects of a missing range would be left unprotected.
//
// # Bad files
//
// A table is outside input: a corrupt or crafted one must give an error,
// never a panic, a read out of bounds or an allocation it chooses. Pebble's
// reader trusts a block once its checksum matches (a checksum is no defence
// against a crafted file): it allocates a block's buffer from the length in
// the block's handle before reading it (through C's calloc when built with
// cgo, where a failed allocation ends the process), sizes a decompressed
// block by what its header claims, and walks a block's entries with
// unchecked pointer arithmetic. So before pebble opens a table, this
// package walks every part pebble's point iteration reads (footer,
// metaindex, properties, index blocks of one or two levels, data blocks)
// and checks that every handle lies inside the file, that every block is
// Snappy or uncompressed and at most 16 MiB, and that every entry and
// restart point lies inside its block, decoding as pebble decodes and
// refusing what it would decode otherwise. Pebble then reads the table;
// its record count must match the table's properties and lakeFS's "count".
// Only the table formats lakeFS's pebble writes and the next two (which
// differ in what a point reader ignores) are read.
//
// Values are decoded with protowire, not generated code: there is no
// generated code to keep in step with lakeFS's .proto files, unknown
// fields are skipped (lakeFS may add fields), and the decoder allocates
// nothing, so a value cannot make it allocate. It is stricter than
// lakeFS's own: the address must be present and UTF-8, a field read here
// with another wire type is an error rather than an unknown field, and an
// address type lakeFS does not define is an error.
package metarange
