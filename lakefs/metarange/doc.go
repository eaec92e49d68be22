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
// "metaranges", and "count", its number of records. This package reads
// them itself and depends on no pebble version, so that a program that
// links lakeFS, with the pebble version lakeFS pins, can link it too. Every
// record's value is a graveler value,
//
//	varint len(identity) | identity | varint len(data) | data
//
// with signed varint lengths. A metarange has a record per range, keyed by
// the range's last key: the identity is the range's ID and the data a
// committed.RangeData message. A range has a record per object, keyed by
// its path: the data is a catalog.Entry message, whose fields address (1)
// and address_type (6) are all that Addresses reads, and Entries reads
// whole.
//
// # The addresses
//
// An entry's address is kept as lakeFS resolves it. A relative address is a
// key in the namespace, kept as stored, a linked object's included: lakeFS
// stores the address it handed out with its signature,
// data/<slice>/<xid>,<signature>, and the object was uploaded to exactly
// that key, which is what the namespace's listing shows. On S3 a relative
// address that is not a clean path (data//x, data/./x) also keeps the key
// lakeFS before v0.110 (September 2023) read and wrote its object at:
// aws-sdk-go v1 cleaned each request's path (data/x). A full address
// (a URI) inside the namespace gives every key some lakeFS version or
// adapter could have stored its object at, all kept: the string after the
// namespace, as lakeFS's GC clients strip it; lakeFS's resolution of the
// URI since PR #9464 (September 2025), its raw path when Go keeps one
// ("data/year%3D2024/part-0"); the decoded path, which lakeFS resolved
// before that PR ("data/year=2024/part-0"); on S3 those paths cleaned as
// aws-sdk-go v1 cleaned them; and for Azure the decoded blob
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
// # The range cache
//
// A range is immutable and named by its contents, and consecutive commits
// share almost all their ranges: with [WithRangeCache], Addresses reads
// each range's keys from a cache object written the first time the range
// was read, so that a run reads from lakeFS's tables only the ranges it
// has not cached, and [Cache.Open] serves a range's keys sorted, a part of
// a mark's committed input ([RangeIDs] lists a commit set's ranges: their
// metaranges are small and read every run).
//
// A range's cache is the object
//
//	<storage prefix>/retention/gc/lakegc-ranges/<range ID>
//
// of the namespace, written once per range ID (again only when it does not
// check out). It holds the range's keys exactly as Addresses derives them
// from the table, each entry's every spelling and, for a key with a linked
// object's signature (",<signature>" in its last element), the key without
// it, as the lakeFS host keeps both; sorted ascending, without duplicates,
// each sharing its prefix with the one before. Beside them: the range's
// counts (Stats' Entries, AsStored, MadeRelative, Outside), so that Stats
// are the same from a cache as from a table; up to 64 of its imports'
// addresses and their tails, looked up in the bucket as a table's are, so
// that a namespace spelled otherwise stops a run served from caches too;
// and the distinct sizes and checksums of its entries, given to
// WithEntryStats once each, so that the lakeFS host's re-upload check sees
// every kept entry's ([Cache.ReadEntryStats] gives them without the keys,
// for a caller whose mark reads only some ranges' keys). A header names the format version, which is also the
// version of the rule that derives the keys (bumped with any change to
// it), the storage namespace as given, the storage prefix, lakeFS's data
// prefix (the folder of the tails kept) and the range ID; a CRC-32C of the
// whole follows. The checksum is checked before anything is used, then
// every field: a cache that is missing, damaged, cut short, of another
// range, of other settings or another version is ignored, never trusted
// and never an error: the range is read from its table and its cache
// written again (Stats.Cache counts hits, misses, rejected caches and
// caches that could not be written, which fail nothing). Cache.Version
// names the format version and the settings a range's keys depend on: a
// caller that remembers a range's keys by its ID (a mark's counted parts)
// must forget them when it changes. The decoder reads
// outside input as the table reader does: every length is checked against
// the bytes left, keys must ascend strictly and be at most 1 MiB, the
// encoding must be the one the encoder writes, and nothing is allocated
// that the file sizes beyond one key; a cache larger than
// WithCacheMaxBytes is not read.
//
// A missed range's keys and checksums are held, sorted and encoded in
// memory, each of WithConcurrency ranges at a time: the keys and
// checksums, with the slices that sort them, as allocated, at most
// WithCacheMaxBytes (64 MiB), and their encoding, smaller, beside them and
// the range's table, so at most twice WithCacheMaxBytes beside the table.
// A range over it is not cached, and Addresses reads it from its table
// each run (Cache.Open refuses it with ErrLimit). Its cost is one
// object per range ever kept, of about its keys' bytes after the prefix
// each shares with the key before, plus the distinct checksums: 50,000
// entries of lakeFS's keys ("data/<slice>/<xid>", sharing their slice)
// with distinct MD5s take about 46 bytes an entry, 12 of them the key, a
// fraction of the range's table; and a read of it, instead of the table,
// per run. The objects of ranges no run keeps any longer are removed by
// the lakeFS host's prune (package lakefs/host, "The range cache"): this
// package writes caches and never removes one.
//
// # Hosts with their own storage
//
// Addresses reads the namespace through a gocloud.dev bucket. A host that
// reads lakeFS's storage its own way (a lakeFS fork, through lakeFS's block
// adapter) reads the same tables with [Ranges], the ranges of a metarange
// (ID, first and last key, estimated size, number of entries, as lakeFS
// stores them), and [Entries], the entries of a range (path, address and
// its type, size, ETag, last modified time, metadata, content type), each
// from an [io.ReaderAt] and a size; [Namespace.Keys] turns an entry's
// address into the keys Addresses would list. Such a host reads each range
// once, however many of the kept commits' metaranges list it, by keeping
// the IDs of the ranges it has read.
//
// # Bad files
//
// A table is outside input: a corrupt or crafted one must give an error,
// never a panic, a read out of bounds or an allocation it chooses. A
// checksum is no defence against a crafted file, so the reader trusts no
// length it reads: it checks that the footer is of a format it reads, that
// every block handle lies inside the file, before the footer, that every
// block matches its checksum (CRC-32C, or XXH64 when the footer says so),
// is Snappy or uncompressed (the metaindex uncompressed) and at most 16 MiB
// either way, and that every entry and restart point lies inside its
// block, each restart point at an entry that shares no key prefix. Index
// blocks of one or two levels, as the table's properties say, lead to the
// data blocks, which, like the index blocks of a two-level index, must come
// in file order, none overlapping the one before it, as pebble writes
// them: no block is read twice, and the work of reading a table is bounded
// by its size. The data blocks' records must be sets (the kind in the
// 8-byte trailer of each key), in strictly increasing key order, as many
// as the properties count and as lakeFS's "count" says. A
// table of another key order or merge operator, a repository dump's table
// (property "entity"), or a table of another type is refused. Only the
// table formats lakeFS's pebble writes (RocksDBv2) and the next two (Pebble
// v1 and v2, which add what a reader of point keys ignores) are read; the
// later ones, which store values apart, are refused. An iteration that
// fails may have yielded values of the table before it: its caller fails
// as a whole.
//
// Values are decoded with protowire, not generated code: there is no
// generated code to keep in step with lakeFS's .proto files, unknown
// fields are skipped (lakeFS may add fields), and Addresses' decoder
// allocates nothing, so a value cannot make it allocate (Entries allocates
// an entry's strings and metadata, in proportion to its bytes). It is
// stricter than
// lakeFS's own: the address must be present and UTF-8, a field read here
// with another wire type is an error rather than an unknown field, and an
// address type lakeFS does not define is an error.
package metarange
