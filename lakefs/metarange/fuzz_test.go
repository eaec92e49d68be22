package metarange

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// seedTables are tables as lakeFS writes them and variants that reach the
// rest of the format, written once per process or written by lakeFS's
// pebble (testdata). They are small, at most 32 KiB, so that an execution
// is quick.
var seedTables = sync.OnceValue(func() [][]byte {
	t := &testing.T{}
	entries := randomEntries(rand.New(rand.NewPCG(3, 4)), 8, "seed")
	records := rangeRecords(entries)
	tables := [][]byte{
		writeTable(t, typeRanges, records, lakeFSOptions),
		writeTable(t, typeRanges, records, tableOptions{compression: noCompression}),
		writeTable(t, typeRanges, records, tableOptions{blockSize: 64, compression: noCompression}),
		writeTable(t, typeRanges, records, tableOptions{blockSize: 64, compression: snappyCompression}),
		writeTable(t, typeRanges, records, tableOptions{blockSize: 64, checksum: checksumXXHash64, magic: pebbleMagic, version: 2}),
		writeTable(t, typeRanges, nil, lakeFSOptions),
		writeTable(t, typeMetaRanges, metaRangeRecords([]fixtureRange{{id: string(bytes.Repeat([]byte("ab"), 32)), maxKey: "k"}}), lakeFSOptions),
	}
	golden, _ := filepath.Glob("testdata/namespace/_lakefs/*")
	formats, _ := filepath.Glob("testdata/formats/*") // the variants of the format lakeFS's pebble writes
	for _, name := range append(golden, formats...) {
		if data, err := os.ReadFile(name); err == nil && len(data) <= 32<<10 {
			tables = append(tables, data)
		}
	}
	return tables
})

// readAll reads a table the way Addresses reads ranges and metaranges,
// and fails the test on a panic, which layout's checks must prevent.
func readAll(t *testing.T, table []byte) {
	ns, err := parseNamespace(testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{typeRanges, typeMetaRanges} {
		var keys []string
		var e Entry
		err := eachValue(table, typ, "fuzz", func(value []byte) error {
			identity, data, err := splitValue(value)
			if err != nil {
				return err
			}
			if typ == typeMetaRanges {
				parseID(identity)
				_, err := decodeRangeData(data)
				return err
			}
			address, at, err := decodeEntry(data)
			if err != nil {
				return err
			}
			keys, _ = ns.keys(keys[:0], string(address), at)
			return decodeEntryFields(data, &e)
		})
		if errors.Is(err, errPanicked) {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	for _, err := range Ranges(bytes.NewReader(table), int64(len(table))) {
		if errors.Is(err, errPanicked) {
			t.Fatalf("Ranges: %v", err)
		}
	}
	for _, err := range Entries(bytes.NewReader(table), int64(len(table))) {
		if errors.Is(err, errPanicked) {
			t.Fatalf("Entries: %v", err)
		}
	}
}

// FuzzTable reads a seed table cut short and altered, its checksums left
// as they are. Inputs are small (which seed, how much to cut, what to
// alter): the fuzzer minimizes an input byte by byte, which would take it
// most of its time on whole tables.
func FuzzTable(f *testing.F) {
	for i := range seedTables() {
		f.Add(uint8(i), uint16(0), []byte{})
	}
	f.Add(uint8(0), uint16(1), []byte{})
	f.Add(uint8(1), uint16(0), []byte{0, 20, 0x80})
	f.Fuzz(func(t *testing.T, which uint8, cut uint16, mutations []byte) {
		tables := seedTables()
		table := bytes.Clone(tables[int(which)%len(tables)])
		table = table[:len(table)-int(cut)%(len(table)+1)]
		alter(table, mutations)
		readAll(t, table)
	})
}

// alter xors bytes of a table: mutations are triples of a big-endian
// offset (modulo the table's length) and a mask.
func alter(table, mutations []byte) {
	for ; len(mutations) >= 3 && len(table) > 0; mutations = mutations[3:] {
		at := (int(mutations[0])<<8 | int(mutations[1])) % len(table)
		table[at] ^= mutations[2]
	}
}

// FuzzCraftedTable alters a valid table and reseals its block checksums,
// as a crafted file would, so that the altered bytes get past the
// checksums into the structure of the blocks.
func FuzzCraftedTable(f *testing.F) {
	f.Add(uint8(0), []byte{0, 10, 0xff})
	f.Add(uint8(2), []byte{0, 2, 0x80, 1, 0, 0x7f})
	f.Add(uint8(3), []byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, which uint8, mutations []byte) {
		tables := seedTables()
		table := bytes.Clone(tables[int(which)%len(tables)])
		l, err := layoutOf(table)
		if err != nil {
			t.Skip("not a table this package reads")
		}
		alter(table, mutations)
		reseal(table, l)
		readAll(t, table)
	})
}

// layoutOf finds the blocks of a table this package reads.
func layoutOf(table []byte) (*tableLayout, error) {
	t, err := openTable(table)
	if err != nil {
		return nil, err
	}
	metaindex, _, _ := t.checkFooter()
	l := &tableLayout{metaindex: metaindex}
	var buf, topBuf, indexBuf []byte
	meta, err := t.block(metaindex, &buf)
	if err != nil {
		return nil, err
	}
	err = walkBlock(meta, func(name, value []byte) error {
		if string(name) == metaPropertiesName {
			l.props, _, err = decodeHandle(value)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	dataOf := func(b []byte) error {
		return walkBlock(b, func(_, value []byte) error {
			h, _, err := decodeHandle(value)
			l.data = append(l.data, h)
			return err
		})
	}
	top, err := t.block(t.index, &topBuf)
	if err != nil {
		return nil, err
	}
	if !t.twoLevel {
		l.index = []handle{t.index}
		return l, dataOf(top)
	}
	l.topIndex = t.index
	return l, walkBlock(top, func(_, value []byte) error {
		h, _, err := decodeHandle(value)
		if err != nil {
			return err
		}
		l.index = append(l.index, h)
		b, err := t.block(h, &indexBuf)
		if err != nil {
			return err
		}
		return dataOf(b)
	})
}

// FuzzEntry compares decodeEntry with the protobuf runtime: what it
// accepts, the runtime accepts and reads alike.
func FuzzEntry(f *testing.F) {
	f.Add(encodeEntry("data/gx/cy", relative))
	f.Add(encodeEntry("s3://bucket/repo/x", full))
	f.Add(encodeEntry("4d2f", byPrefixDeprecated))
	f.Add(append(encodeEntry("data/a", relative), 0x22, 0x01, 0xff)) // an e_tag that is not UTF-8: skipped
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5 {
		f.Add(randomEntry(rng))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		address, typ, err := decodeEntry(b)
		var e Entry
		fieldsErr := decodeEntryFields(b, &e)
		if err != nil {
			if fieldsErr == nil {
				t.Fatalf("decodeEntryFields accepts %x, decodeEntry does not: %v", b, err)
			}
			return
		}
		model, err := modelEntry(b)
		if err != nil {
			t.Fatalf("decodeEntry accepts %x, the protobuf runtime does not: %v", b, err)
		}
		if string(address) != model.Address || typ != model.AddressType {
			t.Fatalf("decodeEntry(%x) = %q, %d; the runtime reads %q, %d", b, address, typ, model.Address, model.AddressType)
		}
		if fieldsErr != nil {
			return // a known field with another wire type: decodeEntry skips it
		}
		if e.Address != model.Address || e.AddressType != model.AddressType || e.Size != model.Size ||
			e.ETag != model.ETag || e.ContentType != model.ContentType {
			t.Fatalf("decodeEntryFields(%x) = %+v; the runtime reads %+v", b, e, model)
		}
	})
}

// FuzzValue splits graveler values: those it builds come back whole,
// anything else is split or refused without a panic.
func FuzzValue(f *testing.F) {
	f.Add([]byte("id"), []byte("data"), []byte{}, gravelerValue([]byte("id"), []byte("data")))
	f.Add([]byte{}, []byte{}, []byte("tail"), []byte{0x01})
	f.Fuzz(func(t *testing.T, identity, data, tail, raw []byte) {
		gotID, gotData, err := splitValue(append(gravelerValue(identity, data), tail...))
		if err != nil || !bytes.Equal(gotID, identity) || !bytes.Equal(gotData, data) {
			t.Fatalf("split(%q, %q) = %q, %q, %v", identity, data, gotID, gotData, err)
		}
		if id, d, err := splitValue(raw); err == nil && len(id)+len(d) > len(raw) {
			t.Fatalf("split(%x) returned more bytes than it was given", raw)
		}
	})
}

// FuzzAddress checks the outcomes of the address rules: a relative address
// is kept as stored (and on S3 as aws-sdk-go v1 cleaned it, if that
// differs), a full one inside the namespace yields non-empty keys
// (at most five: as written, raw, decoded, and for S3 the raw and the
// decoded path as aws-sdk-go v1 cleaned them, or Azure's trimmed), one
// outside at most its tail, a mismatch none.
func FuzzAddress(f *testing.F) {
	f.Add("s3://bucket/repo", "s3://bucket/repo/data/x", uint8(full))
	f.Add("s3://bucket/repo", "s3://bucket/repo/a//b%3D?x", uint8(full))
	f.Add("s3://bucket/repo", "S3://BUCKET/repo/a%20b", uint8(full))
	f.Add("s3://bucket/repo", "data/x", uint8(relative))
	f.Add("local:///var/repo", "4d2f", uint8(byPrefixDeprecated))
	f.Add("s3://bucket/repo", "s3a://bucket/repo/x", uint8(full))
	f.Add("s3://bucket/repo", "gs://b/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", uint8(full))
	f.Add("https://acct.blob.core.windows.net/c/repo", "https://acct.dfs.core.windows.net/c/repo/k%3Dv/", uint8(full))
	f.Fuzz(func(t *testing.T, namespace, address string, typ uint8) {
		ns, err := parseNamespace(namespace)
		if err != nil {
			return
		}
		at := addressType(typ % 3)
		keys, oc := ns.keys(nil, address, at)
		switch oc {
		case asStored:
			want := []string{address}
			_, _, resolved := resolveFull(address)
			if cleaned, ok := ns.ns.CleanedRelative(address); ok && (at == relative || at == byPrefixDeprecated && !resolved) {
				// Only a relative address: a full one that is no URI of
				// a storage names no object lakeFS reads.
				want = append(want, cleaned)
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("kept as stored: %q, want %q", keys, want)
			}
		case madeRelative:
			if len(keys) == 0 || len(keys) > 5 || slices.Contains(keys, "") || at == relative {
				t.Fatalf("made relative: %q", keys)
			}
		case outside:
			if len(keys) > 1 || at == relative {
				t.Fatalf("outside: %q", keys)
			}
		case mismatch:
			if len(keys) != 0 || at == relative {
				t.Fatalf("mismatch: %q", keys)
			}
		default:
			t.Fatalf("outcome %d", oc)
		}
	})
}

// rangeDataDescriptor is lakeFS's committed.RangeData, as committed.proto
// declares it.
var rangeDataDescriptor = func() protoreflect.MessageDescriptor {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: typ.Enum(),
		}
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("committed.proto"),
		Package: proto.String("committed"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("RangeData"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("min_key", rangeMinKeyField, descriptorpb.FieldDescriptorProto_TYPE_BYTES),
				field("max_key", rangeMaxKeyField, descriptorpb.FieldDescriptorProto_TYPE_BYTES),
				field("estimated_size", rangeEstimatedSizeField, descriptorpb.FieldDescriptorProto_TYPE_UINT64),
				field("count", rangeCountField, descriptorpb.FieldDescriptorProto_TYPE_INT64),
			},
		}},
	}, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	return fd.Messages().ByName("RangeData")
}()

// FuzzRangeData compares decodeRangeData with the protobuf runtime: what
// it accepts, the runtime accepts and reads alike.
func FuzzRangeData(f *testing.F) {
	_, data, err := splitValue(metaRangeRecords([]fixtureRange{{minKey: "a", maxKey: "b", count: 3, size: 4096}})[0].value)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte{0x0a, 0x01, 'a', 0x12, 0x01, 'b', 0x18, 0x80, 0x20, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0x0a, 0x01, 'a', 0x0a, 0x01, 'c', 0x28, 0x05}) // min_key twice, an unknown field
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeRangeData(b)
		if err != nil {
			return
		}
		m := dynamicpb.NewMessage(rangeDataDescriptor)
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatalf("decodeRangeData accepts %x, the protobuf runtime does not: %v", b, err)
		}
		fields := rangeDataDescriptor.Fields()
		if !bytes.Equal(d.minKey, m.Get(fields.ByNumber(rangeMinKeyField)).Bytes()) ||
			!bytes.Equal(d.maxKey, m.Get(fields.ByNumber(rangeMaxKeyField)).Bytes()) ||
			d.estimatedSize != m.Get(fields.ByNumber(rangeEstimatedSizeField)).Uint() ||
			d.count != m.Get(fields.ByNumber(rangeCountField)).Int() {
			t.Fatalf("decodeRangeData(%x) = %+v; the runtime reads %v", b, d, m)
		}
	})
}
