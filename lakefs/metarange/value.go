package metarange

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// AddressType is how lakeFS resolves an entry's physical address: the enum
// Entry.AddressType of lakeFS's catalog.proto, with its wire values. Any
// other value is refused as corrupt, as lakeFS itself cannot resolve it.
type AddressType int32

// The address types lakeFS defines.
const (
	// AddressByPrefixDeprecated is the type of entries older than the
	// field: lakeFS resolves such an address as full when it parses as a
	// URI of a known storage scheme, and as relative otherwise.
	AddressByPrefixDeprecated AddressType = 0
	// AddressRelative is a key relative to the storage namespace.
	AddressRelative AddressType = 1
	// AddressFull is a URI, "s3://bucket/key".
	AddressFull AddressType = 2
)

// String returns the name catalog.proto gives the type.
func (t AddressType) String() string {
	switch t {
	case AddressByPrefixDeprecated:
		return "BY_PREFIX_DEPRECATED"
	case AddressRelative:
		return "RELATIVE"
	case AddressFull:
		return "FULL"
	}
	return "AddressType(" + strconv.Itoa(int(t)) + ")"
}

// The short names used inside the package.
type addressType = AddressType

const (
	byPrefixDeprecated = AddressByPrefixDeprecated
	relative           = AddressRelative
	full               = AddressFull
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

// Field numbers of the rest of catalog.Entry, of its metadata's map entry,
// of google.protobuf.Timestamp and of committed.RangeData.
const (
	entryLastModifiedField = 2 // google.protobuf.Timestamp
	entrySizeField         = 3 // int64
	entryETagField         = 4 // string
	entryMetadataField     = 5 // map<string, string>
	entryContentTypeField  = 7 // string

	mapKeyField   = 1
	mapValueField = 2

	timestampSecondsField = 1 // int64
	timestampNanosField   = 2 // int32

	rangeMinKeyField        = 1 // bytes
	rangeMaxKeyField        = 2 // bytes
	rangeEstimatedSizeField = 3 // uint64
	rangeCountField         = 4 // int64
)

// eachField calls fn with every field of a message in protobuf wire format:
// its number, wire type and value (the bytes of a length-delimited field,
// or nil), and v, the value of a varint field. It checks the message is
// well-formed; fn says which fields it reads and refuses them with the
// wrong wire type.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("tag: %w", protowire.ParseError(n))
		}
		if num > protowire.MaxValidNumber { // ConsumeTag checks only the minimum
			return fmt.Errorf("field number %d out of range", num)
		}
		b = b[n:]
		var value []byte
		var v uint64
		switch typ {
		case protowire.BytesType:
			value, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, value, v); err != nil {
			return err
		}
	}
	return nil
}

// wantType is the error of a field read with another wire type than its
// declared one.
func wantType(num protowire.Number, got, want protowire.Type) error {
	if got == want {
		return nil
	}
	return fmt.Errorf("field %d has wire type %d, want %d", num, got, want)
}

// decodeEntryFields decodes every field of a catalog.Entry into e (whose
// Path it leaves alone), as decodeEntry decodes the address and its type:
// the last occurrence of a field wins, except for metadata, a map, whose
// entries add up (the last of a key wins); unknown fields are skipped; a
// known field with the wrong wire type is an error. Only the address is
// checked to be UTF-8.
func decodeEntryFields(b []byte, e *Entry) error {
	*e = Entry{Path: e.Path}
	var sawTime bool
	var seconds, nanos int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
		switch num {
		case entryAddressField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			if !utf8.Valid(value) {
				return fmt.Errorf("address is not UTF-8")
			}
			e.Address = string(value)
		case entryAddressTypeField:
			if err := wantType(num, typ, protowire.VarintType); err != nil {
				return err
			}
			if v > uint64(full) {
				return fmt.Errorf("unknown address type %d", v)
			}
			e.AddressType = AddressType(v)
		case entryLastModifiedField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			sawTime = true // a message set again is merged into the first
			return eachField(value, func(num protowire.Number, typ protowire.Type, _ []byte, v uint64) error {
				switch num {
				case timestampSecondsField:
					seconds = int64(v)
				case timestampNanosField:
					nanos = int64(int32(v))
				default:
					return nil
				}
				return wantType(num, typ, protowire.VarintType)
			})
		case entrySizeField:
			if err := wantType(num, typ, protowire.VarintType); err != nil {
				return err
			}
			e.Size = int64(v)
		case entryETagField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			e.ETag = string(value)
		case entryContentTypeField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			e.ContentType = string(value)
		case entryMetadataField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var key, val []byte
			err := eachField(value, func(num protowire.Number, typ protowire.Type, value []byte, _ uint64) error {
				switch num {
				case mapKeyField:
					key = value
				case mapValueField:
					val = value
				default:
					return nil
				}
				return wantType(num, typ, protowire.BytesType)
			})
			if err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
			if e.Metadata == nil {
				e.Metadata = make(map[string]string)
			}
			e.Metadata[string(key)] = string(val)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("entry: %w", err)
	}
	if e.Address == "" {
		return fmt.Errorf("entry: no address")
	}
	if sawTime {
		e.LastModified = time.Unix(seconds, nanos).UTC()
	}
	return nil
}

// rangeData is a committed.RangeData; its keys alias the message.
type rangeData struct {
	minKey, maxKey []byte
	estimatedSize  uint64
	count          int64
}

// decodeRangeData decodes a committed.RangeData as decodeEntryFields
// decodes an entry.
func decodeRangeData(b []byte) (rangeData, error) {
	var r rangeData
	err := eachField(b, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
		want := protowire.VarintType
		switch num {
		case rangeMinKeyField:
			r.minKey, want = value, protowire.BytesType
		case rangeMaxKeyField:
			r.maxKey, want = value, protowire.BytesType
		case rangeEstimatedSizeField:
			r.estimatedSize = v
		case rangeCountField:
			r.count = int64(v)
		default:
			return nil
		}
		return wantType(num, typ, want)
	})
	if err != nil {
		return rangeData{}, fmt.Errorf("range data: %w", err)
	}
	return r, nil
}
