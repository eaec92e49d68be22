package metarange

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// addressType is how lakeFS resolves an entry's physical address: the enum
// Entry.AddressType of lakeFS's catalog.proto, with its wire values. Any
// other value is refused as corrupt, as lakeFS itself cannot resolve it.
type addressType int32

const (
	// byPrefixDeprecated is the type of entries older than the field: lakeFS
	// resolves such an address as full when it parses as a URI of a known
	// storage scheme, and as relative otherwise.
	byPrefixDeprecated addressType = 0
	relative           addressType = 1 // a key relative to the namespace
	full               addressType = 2 // a URI, "s3://bucket/key"
)

// Field numbers of lakeFS's messages that this package reads.
const (
	entryAddressField     = 1 // catalog.Entry.address, string
	entryAddressTypeField = 6 // catalog.Entry.address_type, enum
)

// splitValue splits a graveler value, lakeFS's
//
//	varint len(identity) | identity | varint len(data) | data
//
// with signed (zig-zag) varints, into its identity and data. Bytes after
// data are ignored, as lakeFS ignores them. The results alias b.
func splitValue(b []byte) (identity, data []byte, err error) {
	identity, rest, err := splitComponent(b)
	if err != nil {
		return nil, nil, fmt.Errorf("identity: %w", err)
	}
	data, _, err = splitComponent(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	return identity, data, nil
}

func splitComponent(b []byte) (component, rest []byte, err error) {
	l, n := binary.Varint(b)
	switch {
	case n <= 0:
		return nil, nil, fmt.Errorf("bad length varint")
	case l < 0:
		return nil, nil, fmt.Errorf("negative length %d", l)
	case l > int64(len(b)-n):
		return nil, nil, fmt.Errorf("length %d beyond the value's %d bytes", l, len(b)-n)
	}
	return b[n : n+int(l)], b[n+int(l):], nil
}

// decodeEntry reads the address and address type of a catalog.Entry in
// protobuf wire format. Like lakeFS's decoder it takes the last occurrence
// of a field and skips unknown fields; unlike it, a known field with the
// wrong wire type is an error rather than an unknown field, and the
// address type must be one lakeFS knows. The address aliases b.
func decodeEntry(b []byte) (address []byte, typ addressType, err error) {
	for len(b) > 0 {
		num, wtyp, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, 0, fmt.Errorf("entry: tag: %w", protowire.ParseError(n))
		}
		if num > protowire.MaxValidNumber { // ConsumeTag checks only the minimum
			return nil, 0, fmt.Errorf("entry: field number %d out of range", num)
		}
		b = b[n:]
		switch {
		case num == entryAddressField && wtyp == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, 0, fmt.Errorf("entry: address: %w", protowire.ParseError(n))
			}
			if !utf8.Valid(v) {
				return nil, 0, fmt.Errorf("entry: address is not UTF-8")
			}
			address, b = v, b[n:]
		case num == entryAddressTypeField && wtyp == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, 0, fmt.Errorf("entry: address type: %w", protowire.ParseError(n))
			}
			if v > uint64(full) {
				return nil, 0, fmt.Errorf("entry: unknown address type %d", v)
			}
			typ, b = addressType(v), b[n:]
		case num == entryAddressField || num == entryAddressTypeField:
			return nil, 0, fmt.Errorf("entry: field %d has wire type %d", num, wtyp)
		default:
			n := protowire.ConsumeFieldValue(num, wtyp, b)
			if n < 0 {
				return nil, 0, fmt.Errorf("entry: field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if len(address) == 0 {
		return nil, 0, fmt.Errorf("entry: no address")
	}
	return address, typ, nil
}

// checkMessage checks that b is well-formed protobuf wire format, as a
// metarange's RangeData must be; its fields themselves are not needed.
func checkMessage(b []byte) error {
	for len(b) > 0 {
		num, _, n := protowire.ConsumeField(b)
		if n < 0 {
			return fmt.Errorf("range data: field %d: %w", num, protowire.ParseError(n))
		}
		if num > protowire.MaxValidNumber { // ConsumeTag checks only the minimum
			return fmt.Errorf("range data: field number %d out of range", num)
		}
		b = b[n:]
	}
	return nil
}
