package retention

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// lakeFSRulesType is lakeFS's message, built from its graveler.proto
// (proto3, package io.treeverse.lakefs.graveler):
//
//	message GarbageCollectionRules {
//	  int32 default_retention_days = 1;
//	  map<string, int32> branch_retention_days = 2;
//	}
//
// A map field is a repeated field of a nested entry message with the
// map_entry option, which is what protoc makes of it.
var lakeFSRulesType = func() protoreflect.MessageType {
	s := proto.String
	optional := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	int32Type := descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum()
	file := &descriptorpb.FileDescriptorProto{
		Name:    s("graveler.proto"),
		Package: s("io.treeverse.lakefs.graveler"),
		Syntax:  s("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: s("GarbageCollectionRules"),
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: s("default_retention_days"), JsonName: s("defaultRetentionDays"), Number: proto.Int32(1), Label: optional, Type: int32Type},
				{Name: s("branch_retention_days"), JsonName: s("branchRetentionDays"), Number: proto.Int32(2),
					Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
					Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
					TypeName: s(".io.treeverse.lakefs.graveler.GarbageCollectionRules.BranchRetentionDaysEntry")},
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name: s("BranchRetentionDaysEntry"),
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: s("key"), JsonName: s("key"), Number: proto.Int32(1), Label: optional, Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()},
					{Name: s("value"), JsonName: s("value"), Number: proto.Int32(2), Label: optional, Type: int32Type},
				},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}},
		}},
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		panic(err)
	}
	return dynamicpb.NewMessageType(fd.Messages().Get(0))
}()

// lakeFSMessage returns r as lakeFS's message.
func lakeFSMessage(r *Rules) protoreflect.Message {
	m := lakeFSRulesType.New()
	fields := m.Descriptor().Fields()
	if r.DefaultRetentionDays != 0 {
		m.Set(fields.ByNumber(1), protoreflect.ValueOfInt32(r.DefaultRetentionDays))
	}
	branches := m.Mutable(fields.ByNumber(2)).Map()
	for b, d := range r.BranchRetentionDays {
		branches.Set(protoreflect.ValueOfString(b).MapKey(), protoreflect.ValueOfInt32(d))
	}
	return m
}

// rulesOf reads lakeFS's message back as Rules.
func rulesOf(m protoreflect.Message) Rules {
	fields := m.Descriptor().Fields()
	r := Rules{DefaultRetentionDays: int32(m.Get(fields.ByNumber(1)).Int()), BranchRetentionDays: map[string]int32{}}
	m.Get(fields.ByNumber(2)).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		r.BranchRetentionDays[k.String()] = int32(v.Int())
		return true
	})
	return r
}

// TestMarshalBinaryIsLakeFSBytes compares MarshalBinary, on random rules,
// with protobuf's own encoding of lakeFS's message: the bytes lakeFS's
// proto.Marshal writes with map entries in sorted (deterministic) order.
func TestMarshalBinaryIsLakeFSBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 16))
	names := []string{"main", "dev", "a", "b", "ab", "experiment", "dépôt", "主", "Z", "main2", "a/b", "x-y_z.1"}
	days := []int32{0, 1, 7, 127, 128, 300, 16383, 16384, 1 << 21, 1<<31 - 1}
	zeroDefault := 0
	for i := range 2000 {
		r := Rules{DefaultRetentionDays: days[rng.IntN(len(days))], BranchRetentionDays: map[string]int32{}}
		for range rng.IntN(5) {
			r.BranchRetentionDays[names[rng.IntN(len(names))]] = days[rng.IntN(len(days))]
		}
		if i%3 == 0 {
			r.DefaultRetentionDays = 0
		}
		if r.DefaultRetentionDays == 0 && len(r.BranchRetentionDays) > 0 {
			zeroDefault++
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(lakeFSMessage(&r).Interface())
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("rules %+v:\nMarshalBinary % x\nprotobuf      % x", r, got, want)
		}
		// Whatever order lakeFS wrote the entries in, they read back.
		random, err := proto.Marshal(lakeFSMessage(&r).Interface())
		if err != nil {
			t.Fatal(err)
		}
		var back Rules
		err = back.UnmarshalBinary(random)
		switch {
		case len(r.BranchRetentionDays) == 0 && r.DefaultRetentionDays == 0:
			if !errors.Is(err, ErrNotFound) || len(random) != 0 {
				t.Fatalf("zero rules: lakeFS wrote % x, read back as %v; want no bytes and ErrNotFound", random, err)
			}
		case err != nil || !rulesEqual(back, r):
			t.Fatalf("lakeFS's % x read back as %+v, %v; want %+v", random, back, err, r)
		}
	}
	if zeroDefault < 100 {
		t.Errorf("only %d rules with a zero default and branch rules", zeroDefault)
	}
}

// checkLikeProtobuf compares UnmarshalBinary with protobuf's decoding of
// lakeFS's message: what we accept, protobuf reads to the same rules; what
// protobuf reads and we refuse is refused for a documented reason (the zero
// rules, rules that fail Validate, a known field of another wire type).
func checkLikeProtobuf(t *testing.T, b []byte) {
	var ours Rules
	err := ours.UnmarshalBinary(b)
	m := lakeFSRulesType.New()
	panicked, perr := unmarshalReference(b, m)
	if panicked {
		// protobuf-go's dynamic messages panic on a map entry whose key
		// has another wire type ("cannot convert nil to map key"): there is
		// no reference to compare with, and such input must not be read.
		if err == nil {
			t.Fatalf("% x: we read %+v, protobuf's reference decoder panics on it", b, ours)
		}
		return
	}
	if err == nil {
		if perr != nil {
			t.Fatalf("% x: we read %+v, protobuf refuses: %v", b, ours, perr)
		}
		if theirs := rulesOf(m); !rulesEqual(ours, theirs) {
			t.Fatalf("% x: we read %+v, protobuf %+v", b, ours, theirs)
		}
		return
	}
	if perr != nil {
		return // both refuse
	}
	theirs := rulesOf(m)
	switch {
	case errors.Is(err, ErrNotFound) && theirs.isZero():
	case errors.Is(err, ErrInvalidRules) && theirs.Validate() != nil:
	case errors.Is(err, ErrInvalidRules) && strings.Contains(err.Error(), " has wire type "):
		// A known field with another wire type: protobuf keeps it as an
		// unknown field, we refuse the message.
	default:
		t.Fatalf("% x: protobuf reads %+v, we refuse: %v", b, theirs, err)
	}
}

// unmarshalReference decodes b with protobuf's runtime, reporting a panic
// of the runtime instead of failing the test with it.
func unmarshalReference(b []byte, m protoreflect.Message) (panicked bool, err error) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	return false, proto.Unmarshal(b, m.Interface())
}

func TestUnmarshalBinaryLikeProtobuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 16))
	pieces := [][]byte{
		{0x08, 0x07}, {0x08, 0x00}, {0x08, 0xac, 0x02}, {0x08, 0xff, 0xff, 0xff, 0xff, 0x0f},
		{0x12, 0x08, 0x0a, 0x04, 'm', 'a', 'i', 'n', 0x10, 0x5a}, {0x12, 0x02, 0x10, 0x05}, {0x12, 0x03, 0x0a, 0x01, 'a'},
		{0x12, 0x00}, {0x78, 0x01}, {0x7b, 0x08, 0x01, 0x7c}, {0x12, 0x05, 0x0a, 0x03, 'a', 0xff, 'b'}, {0x0a, 0x01, 0x07},
	}
	for range 5000 {
		var b []byte
		for range rng.IntN(5) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if len(b) > 0 && rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		t.Run(fmt.Sprintf("% x", b), func(t *testing.T) { checkLikeProtobuf(t, b) })
	}
}

// TestLakeFSMessageMatchesGoldenFiles checks the test's descriptor against
// the hand-written golden files, so that the two sources agree.
func TestLakeFSMessageMatchesGoldenFiles(t *testing.T) {
	r := Rules{DefaultRetentionDays: 300, BranchRetentionDays: map[string]int32{"dev": 365, "experiment": 0}}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(lakeFSMessage(&r).Interface())
	if err != nil {
		t.Fatal(err)
	}
	if golden := readHex(t, "testdata/rules/multibyte.hex"); !bytes.Equal(b, golden) {
		t.Errorf("protobuf % x, golden % x", b, golden)
	}
	if !maps.Equal(rulesOf(lakeFSMessage(&r)).BranchRetentionDays, r.BranchRetentionDays) {
		t.Error("rulesOf does not invert lakeFSMessage")
	}
}
