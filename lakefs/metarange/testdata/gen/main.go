// Command gen writes the golden tables of testdata/namespace: a small lakeFS
// repository's metaranges and ranges, written as lakeFS writes them, with the
// pebble version lakeFS pins.
//
//	cd testdata/gen && GOWORK=off go run . ../namespace/_lakefs
//
// With -formats, it writes instead, into testdata/formats, one table of the
// same records in each variant of the format that pebble version writes:
// small blocks and a two-level index, no compression, XXH64 checksums, the
// later table formats, a value larger than a block, and formats the reader
// refuses:
//
//	cd testdata/gen && GOWORK=off go run . -formats ../formats
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/sstable"
	"google.golang.org/protobuf/encoding/protowire"
)

// Address types of lakeFS's catalog.Entry.
const (
	byPrefixDeprecated = 0
	relative           = 1
	full               = 2
)

type entry struct {
	path, address string
	addressType   uint64
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-formats" {
		writeFormats(os.Args[2])
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen [-formats] DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	must(os.MkdirAll(dir, 0o755))

	// The namespace is s3://bucket/repo.
	r1 := writeRange(dir, []entry{
		{"a/1.csv", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0", relative},
		{"a/2.csv", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug", relative},
		// A linked object: its address, and the key it was uploaded to, carry the signature.
		{"a/linked.bin", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0,f6gNY3pKvL4BQ4Kwc9lHHPuz2QGVxqzE7q0m0ONhZRs", relative},
	})
	r2 := writeRange(dir, []entry{
		{"b/imported-inside.csv", "s3://bucket/repo/imported/x.csv", full},
		{"b/imported-outside.csv", "s3://other-bucket/x.csv", full},
		{"b/old-full.csv", "s3://bucket/repo/4d2f1b0c9a8e4f6b8c7e", byPrefixDeprecated},
		{"b/old-relative.csv", "4d2f1b0c9a8e4f6b8c7d", byPrefixDeprecated},
	})
	r3 := writeRange(dir, []entry{
		{"c/1.csv", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsm2d4d2gdp2b5u00", relative},
	})
	fmt.Println("metarange", writeMetaRange(dir, []rng{r1, r2}))
	fmt.Println("metarange", writeMetaRange(dir, []rng{r1, r3}))
	fmt.Println("metarange", writeMetaRange(dir, nil))
}

type rng struct {
	id             string
	minKey, maxKey string
	count          int
	size           uint64
}

type record struct{ key, value []byte }

func writeRange(dir string, entries []entry) rng {
	var records []record
	for _, e := range entries {
		data := encodeEntry(e)
		identity := sha256.Sum256(data)
		records = append(records, record{[]byte(e.path), graveler(identity[:], data)})
	}
	id, size := writeTable(dir, "ranges", records)
	return rng{id, entries[0].path, entries[len(entries)-1].path, len(entries), size}
}

func writeMetaRange(dir string, ranges []rng) string {
	var records []record
	for _, r := range ranges {
		var data []byte
		data = protowire.AppendTag(data, 1, protowire.BytesType)
		data = protowire.AppendString(data, r.minKey)
		data = protowire.AppendTag(data, 2, protowire.BytesType)
		data = protowire.AppendString(data, r.maxKey)
		data = protowire.AppendTag(data, 3, protowire.VarintType)
		data = protowire.AppendVarint(data, r.size)
		data = protowire.AppendTag(data, 4, protowire.VarintType)
		data = protowire.AppendVarint(data, uint64(r.count))
		records = append(records, record{[]byte(r.maxKey), graveler([]byte(r.id), data)})
	}
	id, _ := writeTable(dir, "metaranges", records)
	return id
}

// encodeEntry encodes a catalog.Entry with every field lakeFS sets.
func encodeEntry(e entry) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, e.address)
	var ts []byte
	ts = protowire.AppendTag(ts, 1, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1700000000)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 1234)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "d41d8cd98f00b204e9800998ecf8427e")
	var kv []byte
	kv = protowire.AppendTag(kv, 1, protowire.BytesType)
	kv = protowire.AppendString(kv, "owner")
	kv = protowire.AppendTag(kv, 2, protowire.BytesType)
	kv = protowire.AppendString(kv, "etl")
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, kv)
	if e.addressType != 0 { // proto3 leaves out a zero enum
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, e.addressType)
	}
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendString(b, "text/csv")
	return b
}

// graveler encodes a graveler value: signed varint lengths, identity, data.
func graveler(identity, data []byte) []byte {
	b := binary.AppendVarint(nil, int64(len(identity)))
	b = append(b, identity...)
	b = binary.AppendVarint(b, int64(len(data)))
	return append(b, data...)
}

// writeTable writes records as lakeFS's sstable.DiskWriter does, and names
// the file by the SHA-256 of its contents.
func writeTable(dir, typ string, records []record) (string, uint64) {
	tmp := filepath.Join(dir, "tmp")
	f, err := os.Create(tmp)
	must(err)
	props := map[string]string{"type": typ}
	w := sstable.NewWriter(f, sstable.WriterOptions{
		Compression:             sstable.SnappyCompression,
		TablePropertyCollectors: []func() sstable.TablePropertyCollector{func() sstable.TablePropertyCollector { return &static{props} }},
	})
	for _, r := range records {
		must(w.Set(r.key, r.value))
	}
	size := w.EstimatedSize()
	if len(records) > 0 {
		props["min_key"] = string(records[0].key)
		props["max_key"] = string(records[len(records)-1].key)
	} else {
		props["min_key"], props["max_key"] = "", ""
	}
	props["count"] = strconv.Itoa(len(records))
	props["estimated_size_bytes"] = strconv.FormatUint(size, 10)
	must(w.Close())
	data, err := os.ReadFile(tmp)
	must(err)
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:])
	must(os.Rename(tmp, filepath.Join(dir, id)))
	return id, size
}

type static struct{ m map[string]string }

func (*static) Add(sstable.InternalKey, []byte) error { return nil }
func (*static) Name() string                          { return "static" }
func (s *static) Finish(props map[string]string) error {
	for k, v := range s.m {
		props[k] = v
	}
	return nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// formatRecords are the records of the tables of -formats: key/%06d, whose
// value is "value %d" repeated (i%7)+1 times; with big, record 500's value
// is 100 KiB of 'v'.
func formatRecords(n int, big bool) []record {
	var records []record
	for i := range n {
		v := strings.Repeat(fmt.Sprintf("value %d", i), i%7+1)
		if big && i == 500 {
			v = strings.Repeat("v", 100<<10)
		}
		records = append(records, record{[]byte(fmt.Sprintf("key/%06d", i)), []byte(v)})
	}
	return records
}

func writeFormats(dir string) {
	must(os.MkdirAll(dir, 0o755))
	variants := []struct {
		name    string
		n       int
		big     bool
		options sstable.WriterOptions
	}{
		{"lakefs", 1000, false, sstable.WriterOptions{Compression: sstable.SnappyCompression}},
		{"empty", 0, false, sstable.WriterOptions{Compression: sstable.SnappyCompression}},
		{"two-level", 1500, false, sstable.WriterOptions{BlockSize: 128, IndexBlockSize: 128, Compression: sstable.SnappyCompression}},
		{"two-level-uncompressed", 1500, false, sstable.WriterOptions{BlockSize: 128, IndexBlockSize: 128, Compression: sstable.NoCompression}},
		{"xxhash64", 1000, false, sstable.WriterOptions{Compression: sstable.SnappyCompression, Checksum: sstable.ChecksumTypeXXHash64}},
		{"restart-interval-1", 1000, false, sstable.WriterOptions{Compression: sstable.SnappyCompression, BlockRestartInterval: 1}},
		{"big-value", 1000, true, sstable.WriterOptions{Compression: sstable.SnappyCompression}},
		{"pebblev1", 1000, false, sstable.WriterOptions{Compression: sstable.SnappyCompression, TableFormat: sstable.TableFormatPebblev1}},
		{"pebblev2", 1500, false, sstable.WriterOptions{BlockSize: 128, IndexBlockSize: 128, Compression: sstable.SnappyCompression, TableFormat: sstable.TableFormatPebblev2}},
		{"refused-leveldb", 10, false, sstable.WriterOptions{TableFormat: sstable.TableFormatLevelDB}},
		{"refused-pebblev3", 10, false, sstable.WriterOptions{TableFormat: sstable.TableFormatPebblev3}},
	}
	for _, v := range variants {
		records := formatRecords(v.n, v.big)
		f, err := os.Create(filepath.Join(dir, v.name))
		must(err)
		props := map[string]string{"type": "ranges", "count": strconv.Itoa(len(records))}
		o := v.options
		o.TablePropertyCollectors = []func() sstable.TablePropertyCollector{func() sstable.TablePropertyCollector { return &static{props} }}
		w := sstable.NewWriter(f, o)
		for _, r := range records {
			must(w.Set(r.key, r.value))
		}
		must(w.Close())
		fmt.Println("format", v.name)
	}
}
