package retention

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of lakeFS's graveler.proto:
//
//	message GarbageCollectionRules {
//	  int32 default_retention_days = 1;
//	  map<string, int32> branch_retention_days = 2;
//	}
//
// A map field is a repeated message whose entries have the key as field 1
// and the value as field 2.
const (
	fieldDefaultRetentionDays protowire.Number = 1
	fieldBranchRetentionDays  protowire.Number = 2
	fieldMapKey               protowire.Number = 1
	fieldMapValue             protowire.Number = 2
)

// MarshalBinary encodes r as lakeFS's graveler.GarbageCollectionRules
// protobuf message, the content of the rules file, with the bytes lakeFS's
// proto.Marshal writes: default_retention_days is omitted when it is 0
// (proto3), and every map entry holds its key and its value, even a value of
// 0. lakeFS writes map entries in Go's random map order; MarshalBinary sorts
// them by branch ID, as protobuf's deterministic marshalling does, so equal
// rules give equal bytes.
//
// The zero rules (0 days, no branch rules) encode as no bytes at all, which
// lakeFS, [Rules.UnmarshalBinary] and [RulesStore.Get] read as no rules: a
// GC then keeps every commit. Invalid rules are an error wrapping
// [ErrInvalidRules].
func (r *Rules) MarshalBinary() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b := []byte{}
	if r.DefaultRetentionDays != 0 {
		b = protowire.AppendTag(b, fieldDefaultRetentionDays, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.DefaultRetentionDays))
	}
	var entry []byte
	for _, branch := range r.sortedBranches() {
		entry = protowire.AppendTag(entry[:0], fieldMapKey, protowire.BytesType)
		entry = protowire.AppendString(entry, branch)
		entry = protowire.AppendTag(entry, fieldMapValue, protowire.VarintType)
		entry = protowire.AppendVarint(entry, uint64(r.BranchRetentionDays[branch]))
		b = protowire.AppendTag(b, fieldBranchRetentionDays, protowire.BytesType)
		b = protowire.AppendBytes(b, entry)
	}
	return b, nil
}

// UnmarshalBinary decodes lakeFS's graveler.GarbageCollectionRules protobuf
// message as any protobuf parser would: fields and map entries in any order
// (the last of repeated values wins), a map entry without a value means 0,
// unknown fields are skipped. Truncated or malformed bytes, a known field
// with the wrong wire type (which protobuf would keep as an unknown field),
// and rules that fail [Rules.Validate] (a map entry
// without a key is branch "", which no branch has) are an error wrapping
// [ErrInvalidRules].
//
// Bytes that decode to the zero rules (0 days, no branch rules) are an error
// wrapping [ErrNotFound]: they are no rules. That is what lakeFS makes of
// the empty message, the only spelling its own writer produces for them (it
// answers 404 and its GC keeps every commit). A message that spells the
// zero out (08 00, as versions of this package before it encoded like lakeFS
// wrote) reads as no rules too, where lakeFS would apply 0 days: the reading
// that keeps more. On error r is left unchanged.
func (r *Rules) UnmarshalBinary(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: empty rules message", ErrNotFound)
	}
	out := Rules{BranchRetentionDays: map[string]int32{}}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protoError(n)
		}
		if num > protowire.MaxValidNumber { // ConsumeTag checks only the minimum
			return fmt.Errorf("%w: field number %d out of range", ErrInvalidRules, num)
		}
		b = b[n:]
		switch {
		case num == fieldDefaultRetentionDays && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protoError(n)
			}
			out.DefaultRetentionDays = int32(v) // protobuf int32 keeps the low 32 bits
			b = b[n:]
		case num == fieldBranchRetentionDays && typ == protowire.BytesType:
			entry, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protoError(n)
			}
			branch, days, err := unmarshalMapEntry(entry)
			if err != nil {
				return err
			}
			out.BranchRetentionDays[branch] = days
			b = b[n:]
		case num == fieldDefaultRetentionDays || num == fieldBranchRetentionDays:
			return fmt.Errorf("%w: field %d has wire type %d", ErrInvalidRules, num, typ)
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protoError(n)
			}
			b = b[n:]
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	if out.isZero() {
		return fmt.Errorf("%w: rules message of 0 days and no branch rules", ErrNotFound)
	}
	*r = out
	return nil
}

// unmarshalMapEntry decodes one entry of branch_retention_days.
func unmarshalMapEntry(b []byte) (branch string, days int32, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", 0, protoError(n)
		}
		if num > protowire.MaxValidNumber {
			return "", 0, fmt.Errorf("%w: field number %d out of range", ErrInvalidRules, num)
		}
		b = b[n:]
		switch {
		case num == fieldMapKey && typ == protowire.BytesType:
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return "", 0, protoError(n)
			}
			if !utf8.ValidString(v) {
				return "", 0, fmt.Errorf("%w: branch ID %q is not valid UTF-8", ErrInvalidRules, v)
			}
			branch = v
			b = b[n:]
		case num == fieldMapValue && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return "", 0, protoError(n)
			}
			days = int32(v)
			b = b[n:]
		case num == fieldMapKey || num == fieldMapValue:
			return "", 0, fmt.Errorf("%w: map entry field %d has wire type %d", ErrInvalidRules, num, typ)
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return "", 0, protoError(n)
			}
			b = b[n:]
		}
	}
	return branch, days, nil
}

func protoError(n int) error {
	return fmt.Errorf("%w: %w", ErrInvalidRules, protowire.ParseError(n))
}
