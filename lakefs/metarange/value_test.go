package metarange

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/timestamppb" // catalog.proto imports it
)

// entryDescriptor is lakeFS's catalog.Entry, declared as catalog.proto
// declares it, so that the protobuf runtime can build entries.
var entryDescriptor = newEntryDescriptor(false)

// lenientEntryDescriptor declares the fields decodeEntry skips as bytes,
// so that the runtime, the model of decodeEntry, does not check their
// contents either (UTF-8, nested messages): decodeEntry reads the address
// and its type, and only needs the rest to be well-formed.
var lenientEntryDescriptor = newEntryDescriptor(true)

func newEntryDescriptor(lenient bool) protoreflect.MessageDescriptor {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name:     proto.String(name),
			JsonName: proto.String(name),
			Number:   proto.Int32(num),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     typ.Enum(),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	metadata := field("metadata", 5, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".catalog.Entry.MetadataEntry")
	metadata.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	lastModified := field("last_modified", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp")
	eTag := field("e_tag", 4, descriptorpb.FieldDescriptorProto_TYPE_STRING, "")
	contentType := field("content_type", 7, descriptorpb.FieldDescriptorProto_TYPE_STRING, "")
	name := "catalog.proto"
	if lenient {
		name = "lenient/catalog.proto"
		metadata = field("metadata", 5, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "")
		metadata.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		lastModified = field("last_modified", 2, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "")
		eTag = field("e_tag", 4, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "")
		contentType = field("content_type", 7, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "")
	}
	pkg := "catalog"
	if lenient {
		pkg = "lenient"
	}
	file := &descriptorpb.FileDescriptorProto{
		Name:       proto.String(name),
		Package:    proto.String(pkg),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Entry"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("address", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
				lastModified,
				field("size", 3, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
				eTag,
				metadata,
				field("address_type", 6, descriptorpb.FieldDescriptorProto_TYPE_ENUM, "."+pkg+".Entry.AddressType"),
				contentType,
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("MetadataEntry"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
					field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
				},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}},
			EnumType: []*descriptorpb.EnumDescriptorProto{{
				Name: proto.String("AddressType"),
				Value: []*descriptorpb.EnumValueDescriptorProto{
					{Name: proto.String("BY_PREFIX_DEPRECATED"), Number: proto.Int32(0)},
					{Name: proto.String("RELATIVE"), Number: proto.Int32(1)},
					{Name: proto.String("FULL"), Number: proto.Int32(2)},
				},
			}},
		}},
	}
	if lenient {
		file.MessageType[0].NestedType = nil
	}
	fd, err := protodesc.NewFile(file, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	return fd.Messages().ByName("Entry")
}

// modelEntry decodes an Entry with the protobuf runtime, with the lenient
// descriptor: the fields that are messages are left out.
func modelEntry(b []byte) (Entry, error) {
	m := dynamicpb.NewMessage(lenientEntryDescriptor)
	if err := proto.Unmarshal(b, m); err != nil {
		return Entry{}, err
	}
	fields := lenientEntryDescriptor.Fields()
	return Entry{
		Address:     m.Get(fields.ByNumber(entryAddressField)).String(),
		AddressType: AddressType(m.Get(fields.ByNumber(entryAddressTypeField)).Enum()),
		Size:        m.Get(fields.ByNumber(entrySizeField)).Int(),
		ETag:        string(m.Get(fields.ByNumber(entryETagField)).Bytes()),
		ContentType: string(m.Get(fields.ByNumber(entryContentTypeField)).Bytes()),
	}, nil
}

// strictModelEntry decodes an Entry with the protobuf runtime and
// catalog.proto's declarations: every field.
func strictModelEntry(b []byte) (Entry, error) {
	m := dynamicpb.NewMessage(entryDescriptor)
	if err := proto.Unmarshal(b, m); err != nil {
		return Entry{}, err
	}
	fields := entryDescriptor.Fields()
	e := Entry{
		Address:     m.Get(fields.ByNumber(entryAddressField)).String(),
		AddressType: AddressType(m.Get(fields.ByNumber(entryAddressTypeField)).Enum()),
		Size:        m.Get(fields.ByNumber(entrySizeField)).Int(),
		ETag:        m.Get(fields.ByNumber(entryETagField)).String(),
		ContentType: m.Get(fields.ByNumber(entryContentTypeField)).String(),
	}
	if f := fields.ByNumber(entryLastModifiedField); m.Has(f) {
		ts := m.Get(f).Message()
		tf := ts.Descriptor().Fields()
		e.LastModified = time.Unix(ts.Get(tf.ByNumber(1)).Int(), ts.Get(tf.ByNumber(2)).Int()).UTC()
	}
	m.Get(fields.ByNumber(entryMetadataField)).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		if e.Metadata == nil {
			e.Metadata = map[string]string{}
		}
		e.Metadata[k.String()] = v.String()
		return true
	})
	return e, nil
}

// randomEntry builds an Entry with the protobuf runtime, its fields set at
// random, in one to three parts (which protobuf merges), with unknown
// fields among them.
func randomEntry(rng *rand.Rand) []byte {
	fields := entryDescriptor.Fields()
	var out []byte
	for range 1 + rng.IntN(3) { // a field set again in a later part wins
		m := dynamicpb.NewMessage(entryDescriptor)
		address := []string{"data/g/x", "s3://bucket/repo/k", "é/ü", "data/g/x,c2ln"}[rng.IntN(4)]
		typ := addressType(rng.IntN(3))
		m.Set(fields.ByNumber(entryAddressField), protoreflect.ValueOfString(address))
		m.Set(fields.ByNumber(entryAddressTypeField), protoreflect.ValueOfEnum(protoreflect.EnumNumber(typ)))
		m.Set(fields.ByNumber(3), protoreflect.ValueOfInt64(rng.Int64()))
		m.Set(fields.ByNumber(4), protoreflect.ValueOfString([]string{"etag", "", "d41d8cd98f00b204e9800998ecf8427e"}[rng.IntN(3)]))
		if rng.IntN(4) > 0 {
			ts := m.Mutable(fields.ByNumber(entryLastModifiedField)).Message()
			tf := ts.Descriptor().Fields()
			// Either field may be left out: a later part sets only what
			// it sets, the rest merged from earlier ones.
			if rng.IntN(3) > 0 {
				ts.Set(tf.ByNumber(1), protoreflect.ValueOfInt64(rng.Int64N(1<<40)-1<<39))
			}
			if rng.IntN(3) > 0 {
				ts.Set(tf.ByNumber(2), protoreflect.ValueOfInt32(rng.Int32N(2e9)-1e9)) // out of range too
			}
		}
		if rng.IntN(2) == 0 {
			m.Set(fields.ByNumber(entryContentTypeField), protoreflect.ValueOfString("text/csv"))
		}
		md := m.Mutable(fields.ByNumber(5)).Map()
		for i := range rng.IntN(3) {
			md.Set(protoreflect.ValueOfString(string(rune('a'+i))).MapKey(), protoreflect.ValueOfString("v"))
		}
		unknown := protoreflectUnknown(rng)
		m.SetUnknown(unknown)
		part, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			panic(err)
		}
		out = append(out, part...)
	}
	return out
}

// protoreflectUnknown returns fields of numbers Entry does not declare.
func protoreflectUnknown(rng *rand.Rand) protoreflect.RawFields {
	var b []byte
	for range rng.IntN(3) {
		switch rng.IntN(3) {
		case 0:
			b = appendTagVarint(b, 100+rng.IntN(100), rng.Uint64())
		case 1:
			b = appendTagBytes(b, 8+rng.IntN(50), []byte("unknown"))
		default:
			b = append(b, 0x9d, 0x01, 1, 2, 3, 4) // field 19, fixed32
		}
	}
	return b
}

func TestDecodeEntryAgreesWithProtobuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := randomEntry(rng)
		model, err := strictModelEntry(b)
		if err != nil {
			t.Fatalf("the model fails on %x: %v", b, err)
		}
		gotAddress, gotType, err := decodeEntry(b)
		if err != nil {
			t.Fatalf("decodeEntry(%x): %v", b, err)
		}
		if string(gotAddress) != model.Address || gotType != model.AddressType {
			t.Fatalf("decodeEntry(%x) = %q, %d; the model reads %q, %d", b, gotAddress, gotType, model.Address, model.AddressType)
		}
		var e Entry
		if err := decodeEntryFields(b, &e); err != nil {
			t.Fatalf("decodeEntryFields(%x): %v", b, err)
		}
		if !reflect.DeepEqual(e, model) {
			t.Fatalf("decodeEntryFields(%x)\n = %+v\nthe model reads\n   %+v", b, e, model)
		}
	}
}

func TestDecodeEntryRefuses(t *testing.T) {
	valid := encodeEntry("data/a", relative)
	cases := map[string][]byte{
		"no address":                   encodeEntry("", relative),
		"truncated":                    valid[:len(valid)-1],
		"address as a varint":          appendTagVarint(nil, entryAddressField, 1),
		"address type as bytes":        appendTagBytes(appendTagBytes(nil, 1, []byte("a")), entryAddressTypeField, []byte{1}),
		"unknown address type":         encodeEntry("data/a", 3),
		"negative address type":        appendTagVarint(appendTagBytes(nil, 1, []byte("a")), entryAddressTypeField, 1<<64-1),
		"address not UTF-8":            appendTagBytes(nil, 1, []byte{0xff}),
		"field number 0":               append([]byte{0x02, 0x00}, valid...),
		"group end without start":      append(valid, 0x0c),
		"length beyond the message":    append(valid, 0x42, 0x7f),
		"varint without its last byte": append(valid, 0x18, 0x80),
	}
	for name, b := range cases {
		if a, typ, err := decodeEntry(b); err == nil {
			t.Errorf("%s: decodeEntry(%x) = %q, %d; want an error", name, b, a, typ)
		}
	}
}

func TestSplitValue(t *testing.T) {
	identity, data := []byte("identity"), bytes.Repeat([]byte("d"), 300)
	v := gravelerValue(identity, data)
	for _, tail := range [][]byte{nil, []byte("ignored")} {
		gotID, gotData, err := splitValue(append(v, tail...))
		if err != nil || !bytes.Equal(gotID, identity) || !bytes.Equal(gotData, data) {
			t.Fatalf("splitValue = %q, %q, %v", gotID, gotData, err)
		}
	}
	for name, b := range map[string][]byte{
		"empty":             nil,
		"negative length":   {0x01},
		"identity too long": {0x10, 'a'},
		"no data length":    {0x02, 'a'},
		"data too long":     {0x02, 'a', 0x10, 'b'},
		"overflowing":       bytes.Repeat([]byte{0xff}, 11),
	} {
		if _, _, err := splitValue(b); err == nil {
			t.Errorf("%s: splitValue(%x) succeeded", name, b)
		}
	}
}

func appendTagVarint(b []byte, num int, v uint64) []byte {
	b = appendUvarint(b, uint64(num)<<3)
	return appendUvarint(b, v)
}

func appendTagBytes(b []byte, num int, v []byte) []byte {
	b = appendUvarint(b, uint64(num)<<3|2)
	b = appendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
