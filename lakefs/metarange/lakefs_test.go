package metarange

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"google.golang.org/protobuf/encoding/protowire"
)

// This file writes tables as lakeFS does (pkg/graveler/sstable.DiskWriter,
// pkg/graveler/committed.GeneralMetaRangeWriter): the table format of
// pebble's writer (writer_test.go), Snappy, lakeFS's properties, and
// graveler values around catalog.Entry and committed.RangeData in protobuf
// wire format.

// record is a key and value of a table.
type record struct{ key, value []byte }

// writeTable writes records, in key order, as a table of lakeFS's type
// ("ranges" or "metaranges").
func writeTable(t testing.TB, typ string, records []record, o tableOptions) []byte {
	t.Helper()
	table, _ := writeTableLayout(typ, records, o)
	return table
}

// gravelerValue encodes lakeFS's graveler value.
func gravelerValue(identity, data []byte) []byte {
	b := binary.AppendVarint(nil, int64(len(identity)))
	b = append(b, identity...)
	b = binary.AppendVarint(b, int64(len(data)))
	return append(b, data...)
}

// fixtureEntry is an object of a range: its path and physical address.
type fixtureEntry struct {
	path, address string
	typ           addressType
}

// encodeEntry encodes a catalog.Entry with the fields lakeFS sets.
func encodeEntry(address string, typ addressType) []byte {
	var b []byte
	b = protowire.AppendTag(b, entryAddressField, protowire.BytesType)
	b = protowire.AppendString(b, address)
	var ts []byte
	ts = protowire.AppendTag(ts, 1, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1700000000)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 42)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "etag")
	if typ != byPrefixDeprecated { // proto3 leaves a zero enum out
		b = protowire.AppendTag(b, entryAddressTypeField, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(typ))
	}
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendString(b, "application/octet-stream")
	return b
}

func rangeRecords(entries []fixtureEntry) []record {
	records := make([]record, len(entries))
	for i, e := range entries {
		data := encodeEntry(e.address, e.typ)
		identity := sha256.Sum256(data)
		records[i] = record{[]byte(e.path), gravelerValue(identity[:], data)}
	}
	return records
}

// fixtureRange is a range as its metarange lists it.
type fixtureRange struct {
	id             string
	minKey, maxKey string
	count          int64
	size           uint64
}

func metaRangeRecords(ranges []fixtureRange) []record {
	records := make([]record, len(ranges))
	for i, r := range ranges {
		var data []byte
		data = protowire.AppendTag(data, 1, protowire.BytesType)
		data = protowire.AppendString(data, r.minKey)
		data = protowire.AppendTag(data, 2, protowire.BytesType)
		data = protowire.AppendString(data, r.maxKey)
		data = protowire.AppendTag(data, 3, protowire.VarintType)
		data = protowire.AppendVarint(data, r.size)
		data = protowire.AppendTag(data, 4, protowire.VarintType)
		data = protowire.AppendVarint(data, uint64(r.count))
		records[i] = record{[]byte(r.maxKey), gravelerValue([]byte(r.id), data)}
	}
	return records
}

// fixtureRepo writes a repository's tables into a bucket, as lakeFS lays
// them out in the storage namespace, each named by its SHA-256.
type fixtureRepo struct {
	t      testing.TB
	bucket *blob.Bucket
	opts   tableOptions
}

func newFixtureRepo(t testing.TB, o tableOptions) *fixtureRepo {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	return &fixtureRepo{t: t, bucket: b, opts: o}
}

func (r *fixtureRepo) put(data []byte) string {
	r.t.Helper()
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	if err := r.bucket.WriteAll(context.Background(), "_lakefs/"+name, data, nil); err != nil {
		r.t.Fatal(err)
	}
	return name
}

// addRange writes a range of entries, in path order, and returns it.
func (r *fixtureRepo) addRange(entries []fixtureEntry) fixtureRange {
	r.t.Helper()
	table := writeTable(r.t, typeRanges, rangeRecords(entries), r.opts)
	rg := fixtureRange{id: r.put(table), count: int64(len(entries)), size: uint64(len(table))}
	if len(entries) > 0 {
		rg.minKey, rg.maxKey = entries[0].path, entries[len(entries)-1].path
	}
	return rg
}

// addMetaRange writes a metarange over ranges, in key order, and returns
// its ID.
func (r *fixtureRepo) addMetaRange(ranges ...fixtureRange) string {
	r.t.Helper()
	return r.put(writeTable(r.t, typeMetaRanges, metaRangeRecords(ranges), r.opts))
}
