package parquetguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Thrift compact-protocol type codes.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// What one list (or map) item costs once decoded into the structures of
// parquet-go's format package: a struct at most the size of the largest
// one that appears in lists (format.ColumnChunk, 560 bytes on 64-bit
// platforms), anything else at most a slice header. Strings and byte slices
// alias the footer's bytes and cost nothing more; a struct that is a field
// (not a list item) costs a little, for the union members parquet-go
// allocates apart.
const (
	structItemCost  = 576
	scalarItemCost  = 24
	structFieldCost = 64
)

var errThriftTruncated = errors.New("thrift: truncated")

// thriftScan walks Thrift compact-protocol bytes without decoding them and
// checks what parquet-go's decoder would trust: every length and list size
// against the bytes left (the decoder allocates them before reading a
// byte), the nesting against maxDepth (the decoder recurses), and the
// estimated cost of the decoded structures against maxCost.
type thriftScan struct {
	b        []byte
	pos      int
	depth    int
	maxDepth int
	cost     int64
	maxCost  int64
	// What a struct in a list, another list item and a struct field
	// cost: the estimates above, or 1, 1, 0 to count list items.
	structItem, scalarItem, structField int64
	// top, if set, sees each field of the outermost struct before it is
	// skipped, and may read it instead (done).
	top func(s *thriftScan, id int16, typ byte) (done bool, err error)
	// topList is the length of the last list or set that was a field of
	// the outermost struct.
	topList uint64
}

// structLen returns the length of the struct at the start of b.
func structLen(b []byte, maxDepth int, maxCost int64) (n int, cost int64, err error) {
	s := thriftScan{b: b, maxDepth: maxDepth, maxCost: maxCost,
		structItem: structItemCost, scalarItem: scalarItemCost, structField: structFieldCost}
	if err := s.structure(); err != nil {
		return 0, 0, err
	}
	return s.pos, s.cost, nil
}

// FooterLimits bound what [FooterRows] accepts.
type FooterLimits struct {
	// Depth bounds the nesting of structures and lists.
	Depth int
	// Items bounds the elements of all lists, sets and maps together.
	Items int
	// Schema bounds the elements of the schema.
	Schema int
}

// FooterRows returns the num_rows field of a Parquet footer (a FileMetaData
// in Thrift compact encoding, the bytes before the footer's length) after
// walking all of it without decoding: every length it declares must fit in
// the bytes that follow, and it must stay within lim. A hostile footer
// costs time linear in its size and no allocation, where a decoder would
// allocate whatever lengths it claims. Bytes after the footer's end are not
// read.
func FooterRows(footer []byte, lim FooterLimits) (int64, error) {
	rows, found := int64(0), false
	s := thriftScan{b: footer, maxDepth: lim.Depth, maxCost: int64(lim.Items), structItem: 1, scalarItem: 1}
	s.top = func(s *thriftScan, id int16, typ byte) (bool, error) {
		switch {
		case id == 3 && typ != tI64:
			return false, fmt.Errorf("thrift: num_rows of type %d", typ)
		case id == 3:
			u, err := s.uvarint()
			rows, found = int64(u>>1)^-int64(u&1), err == nil
			return true, err
		}
		s.topList = 0
		if err := s.value(typ, true); err != nil {
			return false, err
		}
		if id == 2 && s.topList > uint64(lim.Schema) {
			return false, fmt.Errorf("thrift: schema of %d elements, over %d", s.topList, lim.Schema)
		}
		return true, nil
	}
	if err := s.structure(); err != nil {
		return 0, err
	}
	switch {
	case !found:
		return 0, errors.New("thrift: footer without num_rows")
	case rows < 0:
		return 0, fmt.Errorf("thrift: footer says %d rows", rows)
	}
	return rows, nil
}

func (s *thriftScan) structure() error {
	if s.depth++; s.depth > s.maxDepth {
		return fmt.Errorf("thrift: nested deeper than %d", s.maxDepth)
	}
	defer func() { s.depth-- }()
	var id int16
	for {
		h, err := s.byte()
		if err != nil {
			return err
		}
		typ := h & 0x0f
		if typ == tStop {
			return nil
		}
		if delta := int16(h >> 4); delta != 0 {
			id += delta
		} else { // the field ID follows, zigzag-encoded
			u, err := s.uvarint()
			if err != nil {
				return err
			}
			id = int16(int64(u>>1) ^ -int64(u&1))
		}
		if s.top != nil && s.depth == 1 {
			if done, err := s.top(s, id, typ); err != nil || done {
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := s.value(typ, true); err != nil {
			return err
		}
	}
}

// value skips one value of type typ: a struct field's (where booleans are
// in the type) or a container item's (where they take a byte).
func (s *thriftScan) value(typ byte, field bool) error {
	switch typ {
	case tTrue, tFalse:
		if field {
			return nil
		}
		_, err := s.byte()
		return err
	case tByte:
		_, err := s.byte()
		return err
	case tI16, tI32, tI64:
		return s.varint()
	case tDouble:
		return s.skip(8)
	case tBinary:
		n, err := s.uvarint()
		if err != nil {
			return err
		}
		return s.skip(n)
	case tList, tSet:
		return s.list()
	case tMap:
		return s.mapping()
	case tStruct:
		if field {
			if err := s.charge(1, s.structField); err != nil {
				return err
			}
		}
		return s.structure()
	}
	return fmt.Errorf("thrift: unknown type %d", typ)
}

func (s *thriftScan) list() error {
	h, err := s.byte()
	if err != nil {
		return err
	}
	n := uint64(h >> 4)
	if n == 0x0f {
		if n, err = s.uvarint(); err != nil {
			return err
		}
	}
	if s.depth == 1 {
		s.topList = n
	}
	return s.items(n, h&0x0f, 0, false)
}

func (s *thriftScan) mapping() error {
	n, err := s.uvarint()
	if err != nil || n == 0 {
		return err
	}
	kv, err := s.byte()
	if err != nil {
		return err
	}
	return s.items(n, kv>>4, kv&0x0f, true)
}

// items skips n container items of type key (and, for a map, val): each
// takes at least a byte, so n is checked against the bytes left before
// anything is read, as parquet-go allocates n items first.
func (s *thriftScan) items(n uint64, key, val byte, isMap bool) error {
	if n > math.MaxInt32 || n > uint64(len(s.b)-s.pos) {
		return fmt.Errorf("thrift: %d items in %d bytes", n, len(s.b)-s.pos)
	}
	if s.depth+1 > s.maxDepth {
		return fmt.Errorf("thrift: nested deeper than %d", s.maxDepth)
	}
	cost := s.scalarItem
	if key == tStruct || val == tStruct {
		cost = s.structItem
	}
	if err := s.charge(int64(n), cost); err != nil {
		return err
	}
	s.depth++
	defer func() { s.depth-- }()
	for range n {
		if err := s.value(key, false); err != nil {
			return err
		}
		if isMap {
			if err := s.value(val, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *thriftScan) charge(n, each int64) error {
	s.cost += n * each
	if s.cost > s.maxCost {
		return fmt.Errorf("thrift: decodes to more than %d bytes", s.maxCost)
	}
	return nil
}

func (s *thriftScan) byte() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, errThriftTruncated
	}
	s.pos++
	return s.b[s.pos-1], nil
}

func (s *thriftScan) skip(n uint64) error {
	if n > uint64(len(s.b)-s.pos) {
		return errThriftTruncated
	}
	s.pos += int(n)
	return nil
}

func (s *thriftScan) uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b[s.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, errThriftTruncated
		}
		return 0, errors.New("thrift: varint overflows")
	}
	s.pos += n
	return v, nil
}

func (s *thriftScan) varint() error {
	_, err := s.uvarint()
	return err
}
