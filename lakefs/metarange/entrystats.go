package metarange

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// entryStats reads the size and checksum (e_tag; entrySizeField and
// entryETagField) of a catalog.Entry in
// protobuf wire format, taking the last occurrence of each field as lakeFS
// does; a field that is absent is zero. A known field with the wrong wire
// type is an error. The checksum aliases b.
func entryStats(b []byte) (size int64, checksum []byte, err error) {
	for len(b) > 0 {
		num, wtyp, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, nil, fmt.Errorf("entry: tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == entrySizeField && wtyp == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, nil, fmt.Errorf("entry: size: %w", protowire.ParseError(n))
			}
			size, b = int64(v), b[n:]
		case num == entryETagField && wtyp == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, nil, fmt.Errorf("entry: checksum: %w", protowire.ParseError(n))
			}
			checksum, b = v, b[n:]
		case num == entrySizeField || num == entryETagField:
			return 0, nil, fmt.Errorf("entry: field %d has wire type %d", num, wtyp)
		default:
			n := protowire.ConsumeFieldValue(num, wtyp, b)
			if n < 0 {
				return 0, nil, fmt.Errorf("entry: field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	return size, checksum, nil
}
