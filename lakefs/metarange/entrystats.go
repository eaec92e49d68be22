package metarange

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// entryStats reads the size and checksum (e_tag; entrySizeField and
// entryETagField) of a catalog.Entry in protobuf wire format, with
// eachField: the last occurrence of each field wins, as in lakeFS; a field
// that is absent is zero. A known field with the wrong wire type is an
// error. The checksum aliases b.
func entryStats(b []byte) (size int64, checksum []byte, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
		switch num {
		case entrySizeField:
			if err := wantType(num, typ, protowire.VarintType); err != nil {
				return err
			}
			size = int64(v)
		case entryETagField:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			checksum = value
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("entry: %w", err)
	}
	return size, checksum, nil
}
