package metarange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/sstable"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// The "type" user property lakeFS sets on its tables, and the properties
// that say how many records a table holds.
const (
	propType          = "type"
	typeRanges        = "ranges"
	typeMetaRanges    = "metaranges"
	propCount         = "count"  // lakeFS's record count
	propDumpEntity    = "entity" // set on the ranges of a repository dump, never on a commit's
	indexTypeTwoLevel = 2        // pebble's two-level index, from the table properties
)

// errPanicked marks the error of a panic recovered while pebble read a
// table: what layout's checks should make impossible.
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
	var fnErr error
	err := scanTable(data, tableType, func(value []byte) error {
		fnErr = fn(value)
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

func scanTable(data []byte, tableType string, fn func(value []byte) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanicked, p)
		}
	}()
	l := layout{data: data}
	index, err := l.checkMeta()
	if err != nil {
		return err
	}
	r, err := sstable.NewReader(memReadable(data), sstable.ReaderOptions{})
	if err != nil {
		return err
	}
	defer r.Close()
	props := &r.Properties
	if got := props.UserProperties[propType]; got != tableType {
		return fmt.Errorf("table type %q, want %q", got, tableType)
	}
	if _, ok := props.UserProperties[propDumpEntity]; ok {
		return fmt.Errorf("a repository dump's table, not a commit's")
	}
	want := int64(props.NumEntries)
	if s, ok := props.UserProperties[propCount]; ok {
		if n, err := strconv.ParseInt(s, 10, 64); err != nil || n != want {
			return fmt.Errorf("lakeFS's count %q differs from the table's %d entries", s, want)
		}
	}
	if n, err := l.checkIndex(index, props.IndexType == indexTypeTwoLevel); err != nil {
		return err
	} else if n != want {
		return fmt.Errorf("%d entries in the data blocks, %d in the properties", n, want)
	}
	it, err := r.NewIter(nil, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var n int64
	for k, v := it.First(); k != nil; k, v = it.Next() {
		if k.Kind() != sstable.InternalKeyKindSet {
			return fmt.Errorf("record of kind %v (lakeFS only sets)", k.Kind())
		}
		value, _, err := v.Value(nil)
		if err != nil {
			return err
		}
		if err := fn(value); err != nil {
			return err
		}
		n++
	}
	if err := it.Error(); err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("%d records read of %d", n, want)
	}
	return nil
}

// memReadable is a table in memory, as pebble reads it.
type memReadable []byte

var _ objstorage.Readable = memReadable(nil)

func (m memReadable) ReadAt(_ context.Context, p []byte, off int64) error {
	if off < 0 || off > int64(len(m)) || int64(len(p)) > int64(len(m))-off {
		return fmt.Errorf("read of %d bytes at %d: %w", len(p), off, io.ErrUnexpectedEOF)
	}
	copy(p, m[off:])
	return nil
}

func (m memReadable) Close() error { return nil }

func (m memReadable) Size() int64 { return int64(len(m)) }

func (m memReadable) NewReadHandle(context.Context) objstorage.ReadHandle {
	h := objstorage.MakeNoopReadHandle(m)
	return &h
}
