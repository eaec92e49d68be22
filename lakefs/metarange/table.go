package metarange

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// The "type" user property lakeFS sets on its tables, and the properties
// that say how many records a table holds.
const (
	propType       = "type"
	typeRanges     = "ranges"
	typeMetaRanges = "metaranges"
	propCount      = "count"  // lakeFS's record count
	propDumpEntity = "entity" // set on the ranges of a repository dump, never on a commit's

	// Pebble's properties read: the table's number of records, its
	// index's type, its key order and merge operator.
	propNumEntries    = "rocksdb.num.entries"                  // uvarint
	propIndexType     = "rocksdb.block.based.table.index.type" // uint32, little-endian
	propComparer      = "rocksdb.comparator"
	propMerger        = "rocksdb.merge.operator"
	indexTypeTwoLevel = 2 // pebble's two-level index
	bytewiseComparer  = "leveldb.BytewiseComparator"

	// The kind of an internal key, in the low byte of its 8-byte trailer
	// (the high 7 bytes are its sequence number): lakeFS only sets.
	keyKindSet = 1
	trailerLen = 8
)

// errPanicked marks the error of a panic recovered while a table was read:
// what layout's checks make impossible.
var errPanicked = errors.New("sstable reader panicked")

// readFile reads a whole table from the bucket into memory, refusing one
// larger than maxSize before reading it.
func readFile(ctx context.Context, bucket *blob.Bucket, key string, maxSize int64) ([]byte, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("%w: %s: %w", ErrMissing, key, err)
		}
		return nil, fmt.Errorf("metarange: open %s: %w", key, err)
	}
	defer r.Close()
	size := r.Size()
	if size > maxSize {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d-byte maximum (WithMaxFileSize)", ErrLimit, key, size, maxSize)
	}
	if size < 0 {
		return nil, fmt.Errorf("metarange: read %s: negative size %d", key, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("metarange: read %s: %w", key, err)
	}
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("metarange: read %s: longer than its %d bytes", key, size)
	}
	return data, nil
}

// eachValue calls fn with the value of every record of a table, in key
// order, after checking that it is a table lakeFS wrote of the given type.
// The value is only valid during the call. Whatever the bytes, it returns
// an error rather than panicking, and allocates in proportion to the
// table's size. An error of fn is returned as is; any other error wraps
// ErrCorrupt, with name for context.
func eachValue(data []byte, tableType, name string, fn func(value []byte) error) error {
	return eachRecord(data, tableType, name, func(_, value []byte) error { return fn(value) })
}

// eachRecord is eachValue with each record's key, a graveler key (the
// user key of the table's internal key), valid only during the call.
func eachRecord(data []byte, tableType, name string, fn func(key, value []byte) error) error {
	var fnErr error
	err := scanTable(data, tableType, func(key, value []byte) error {
		fnErr = fn(key, value)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, name, err)
	}
	return nil
}

// scanTable reads a table of the given type, calling fn with each record.
// A panic of the reader becomes an error wrapping errPanicked; a panic of
// fn (the loop body of a caller of Ranges or Entries) is the caller's, and
// goes on as it is, never recovered.
func scanTable(data []byte, tableType string, fn func(key, value []byte) error) (err error) {
	inFn := false
	defer func() {
		if inFn {
			return // not recovered: fn panicked
		}
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanicked, p)
		}
	}()
	t, err := openTable(data)
	if err != nil {
		return err
	}
	if t.typ != tableType {
		return fmt.Errorf("table type %q, want %q", t.typ, tableType)
	}
	if t.dump {
		return fmt.Errorf("a repository dump's table, not a commit's")
	}
	return t.each(func(key, value []byte) error {
		inFn = true
		err := fn(key, value)
		inFn = false
		return err
	})
}

// table is a table held in memory whose footer, metaindex and properties
// were checked.
type table struct {
	layout
	index      handle
	twoLevel   bool
	numEntries uint64 // the records of the data blocks, as the properties count them
	typ        string // lakeFS's "type"
	dump       bool   // lakeFS's "entity" is set: a repository dump's table
}

// openTable checks what is read before the first record: the footer, the
// metaindex block, the properties block, and the bounds of every other
// block the metaindex names (a filter, range deletions or range keys,
// which lakeFS does not write and a point reader ignores).
func openTable(data []byte) (*table, error) {
	t := &table{layout: layout{data: data}}
	metaindex, index, err := t.checkFooter()
	if err != nil {
		return nil, err
	}
	if err := t.checkBounds(index); err != nil {
		return nil, fmt.Errorf("index block: %w", err)
	}
	t.index = index
	// Pebble writes the metaindex uncompressed: it is read in place, so
	// that no block read while it is walked can overwrite it.
	if err := t.checkBounds(metaindex); err != nil {
		return nil, fmt.Errorf("metaindex block: %w", err)
	}
	if typ := t.data[metaindex.off+metaindex.length]; typ != noCompression {
		return nil, fmt.Errorf("metaindex block of compression %d (pebble writes it uncompressed)", typ)
	}
	var metaBuf []byte // never used: the block is not compressed
	meta, err := t.block(metaindex, &metaBuf)
	if err != nil {
		return nil, fmt.Errorf("metaindex block: %w", err)
	}
	// The properties block is the last the metaindex names, as pebble
	// reads it, and is read once, after the walk.
	var propsHandle handle
	var hasProps bool
	err = walkBlock(meta, func(name, value []byte) error {
		if string(name) == metaValueIndexName {
			return fmt.Errorf("value blocks are not supported")
		}
		h, n, err := decodeHandle(value)
		if err != nil || n != len(value) {
			return fmt.Errorf("bad handle of %q", name)
		}
		if string(name) == metaPropertiesName {
			propsHandle, hasProps = h, true
		}
		return t.checkBounds(h)
	})
	if err != nil {
		return nil, fmt.Errorf("metaindex: %w", err)
	}
	if !hasProps {
		return nil, fmt.Errorf("no properties block")
	}
	var propsBuf []byte
	props, err := t.block(propsHandle, &propsBuf)
	if err != nil {
		return nil, fmt.Errorf("properties block: %w", err)
	}
	if err := t.readProperties(props); err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	return t, nil
}

// readProperties reads what this package needs of the properties block,
// whose keys are property names (not internal keys) and whose values are
// strings, uvarints or fixed-size integers by name. A name repeated is
// read at its last occurrence, as pebble reads it.
func (t *table) readProperties(b []byte) error {
	var count string
	var hasCount, hasEntries bool
	err := walkBlock(b, func(name, value []byte) error {
		switch string(name) {
		case propNumEntries:
			n, k := binary.Uvarint(value)
			if k <= 0 || k != len(value) {
				return fmt.Errorf("bad %s", name)
			}
			t.numEntries, hasEntries = n, true
		case propIndexType:
			if len(value) != 4 {
				return fmt.Errorf("bad %s", name)
			}
			t.twoLevel = binary.LittleEndian.Uint32(value) == indexTypeTwoLevel
		case propComparer:
			if len(value) != 0 && string(value) != bytewiseComparer {
				return fmt.Errorf("keys ordered by %q (lakeFS orders them bytewise)", value)
			}
		case propMerger:
			if s := string(value); s != "" && s != "nullptr" && s != "pebble.concatenate" {
				return fmt.Errorf("merge operator %q", value)
			}
		case propType:
			t.typ = string(value)
		case propCount:
			count, hasCount = string(value), true
		case propDumpEntity:
			t.dump = true
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case !hasEntries:
		return fmt.Errorf("no %s", propNumEntries)
	case t.numEntries > uint64(len(t.data)):
		return fmt.Errorf("%d entries in a %d-byte table", t.numEntries, len(t.data))
	}
	if hasCount {
		if n, err := strconv.ParseUint(count, 10, 64); err != nil || n != t.numEntries {
			return fmt.Errorf("lakeFS's count %q differs from the table's %d entries", count, t.numEntries)
		}
	}
	return nil
}

// each calls fn with the user key and value of every record of the data
// blocks, in order, checking each block before it calls fn with any of its
// records: that it follows the block before it in the file, its entries
// and restart points, that every key is an internal
// key of kind set, and that user keys strictly increase. It fails if the
// table holds other than its properties' number of records. The key and
// value are only valid during the call.
func (t *table) each(fn func(key, value []byte) error) error {
	var topBuf, indexBuf, dataBuf, prev []byte
	var n uint64
	// Pebble writes the data blocks one after the other, in key order, and
	// then the index blocks: a block the index names again, or before one
	// it named, is refused, so that no block is read twice and the work
	// is bounded by the file's size.
	var dataEnd, indexEnd uint64 // where the last data or index block read ends
	dataBlock := func(_, value []byte) error {
		h, _, err := decodeHandle(value) // block properties may follow the handle
		if err != nil {
			return fmt.Errorf("data block handle: %w", err)
		}
		if h.off < dataEnd {
			return fmt.Errorf("data block at %d overlaps or precedes the one before it, which ends at %d", h.off, dataEnd)
		}
		b, err := t.block(h, &dataBuf)
		if err != nil {
			return fmt.Errorf("data block at %d: %w", h.off, err)
		}
		dataEnd = h.off + h.length + blockTrailerLen
		err = walkBlock(b, func(key, _ []byte) error {
			if len(key) < trailerLen {
				return fmt.Errorf("data block at %d: key of %d bytes has no trailer", h.off, len(key))
			}
			if kind := key[len(key)-trailerLen]; kind != keyKindSet {
				return fmt.Errorf("data block at %d: record of kind %d (lakeFS only sets)", h.off, kind)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return walkBlock(b, func(key, value []byte) error {
			user := key[:len(key)-trailerLen]
			if n > 0 && bytes.Compare(user, prev) <= 0 {
				return fmt.Errorf("data block at %d: key %q after %q", h.off, user, prev)
			}
			if n++; n > t.numEntries {
				return fmt.Errorf("more records than the %d of the properties", t.numEntries)
			}
			prev = append(prev[:0], user...)
			return fn(user, value)
		})
	}
	top, err := t.block(t.index, &topBuf)
	if err != nil {
		return fmt.Errorf("index block: %w", err)
	}
	if !t.twoLevel {
		err = walkBlock(top, dataBlock)
	} else {
		err = walkBlock(top, func(_, value []byte) error {
			h, _, err := decodeHandle(value)
			if err != nil {
				return fmt.Errorf("index block handle: %w", err)
			}
			if h.off < indexEnd {
				return fmt.Errorf("index block at %d overlaps or precedes the one before it, which ends at %d", h.off, indexEnd)
			}
			b, err := t.block(h, &indexBuf)
			if err != nil {
				return fmt.Errorf("index block at %d: %w", h.off, err)
			}
			indexEnd = h.off + h.length + blockTrailerLen
			return walkBlock(b, dataBlock)
		})
	}
	if err != nil {
		return err
	}
	if n != t.numEntries {
		return fmt.Errorf("%d records read of %d", n, t.numEntries)
	}
	return nil
}
