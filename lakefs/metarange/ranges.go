package metarange

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"
)

// A Range is a range as its metarange lists it: lakeFS's committed.Range.
type Range struct {
	// ID names the range's table, <storage prefix>/<ID>: the SHA-256 of
	// its contents, 64 lower-case hex digits (checked).
	ID string
	// MinKey and MaxKey are the paths of its first and last entries.
	MinKey, MaxKey []byte
	// EstimatedSize is the size of its table in bytes, as lakeFS estimated
	// it when it wrote it.
	EstimatedSize uint64
	// Count is its number of entries.
	Count int64
}

// An Entry is an object of a range: its path and the fields of lakeFS's
// catalog.Entry.
type Entry struct {
	Path         string            // the record's key: the object's path in the commit
	Address      string            // its physical address, as stored (never empty)
	AddressType  AddressType       // how lakeFS resolves Address
	LastModified time.Time         // in UTC; the zero time when not set
	Size         int64             // in bytes
	ETag         string            // the checksum lakeFS reports for it
	Metadata     map[string]string // user metadata; nil when there is none
	ContentType  string
}

// errStop ends a table's walk when the caller stops iterating.
var errStop = errors.New("stopped")

// Ranges returns the ranges of a metarange, in key order. The metarange
// is read from r, which holds its size bytes, through the caller's own
// storage: it is read whole into memory, in one ReadAt call, and is
// refused with ErrLimit if larger than WithMaxFileSize, the one option
// that applies here (the others are checked, and have no effect). A nil
// reader, a negative size or an invalid option ends the iteration with
// ErrInvalidInput, a table that is not a metarange lakeFS writes with
// ErrCorrupt, a failed or short read with the reader's error (or
// io.ErrUnexpectedEOF). An error is the iteration's last value.
//
// With Entries, a host that reads lakeFS's storage its own way (a lakeFS
// fork, through its block adapter) reads each range once, however many
// metaranges list it: it keeps the IDs of the ranges it has read and reads
// only the others. An iteration that ends with an error may have yielded
// ranges before it; a caller that must see every range (a GC's mark)
// fails as a whole.
func Ranges(r io.ReaderAt, size int64, opts ...Option) iter.Seq2[Range, error] {
	return func(yield func(Range, error) bool) {
		data, err := readAt(r, size, opts)
		if err != nil {
			yield(Range{}, err)
			return
		}
		err = eachRange(data, "metarange", func(v id, d rangeData) error {
			rg := Range{ID: v.String(), MinKey: slices.Clone(d.minKey), MaxKey: slices.Clone(d.maxKey),
				EstimatedSize: d.estimatedSize, Count: d.count}
			if !yield(rg, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(Range{}, err)
		}
	}
}

// Entries returns the entries of a range, in path order, read from r as
// Ranges reads a metarange. Every field of an entry is decoded; only its
// address is checked to be UTF-8, and an address type lakeFS does not
// define is corrupt. A Namespace resolves the addresses as Addresses does.
func Entries(r io.ReaderAt, size int64, opts ...Option) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		data, err := readAt(r, size, opts)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		record := 0
		err = eachRecord(data, typeRanges, "range", func(key, value []byte) error {
			record++
			_, entry, err := splitValue(value)
			if err != nil {
				return fmt.Errorf("%w: range: record %d: %w", ErrCorrupt, record, err)
			}
			e := Entry{Path: string(key)}
			if err := decodeEntryFields(entry, &e); err != nil {
				return fmt.Errorf("%w: range: record %d: %w", ErrCorrupt, record, err)
			}
			if !yield(e, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(Entry{}, err)
		}
	}
}

// readAt reads a whole table from r.
func readAt(r io.ReaderAt, size int64, opts []Option) ([]byte, error) {
	cfg := newConfig(opts)
	switch {
	case cfg.err != nil:
		return nil, cfg.err
	case r == nil:
		return nil, fmt.Errorf("%w: nil reader", ErrInvalidInput)
	case size < 0:
		return nil, fmt.Errorf("%w: negative size %d", ErrInvalidInput, size)
	case size > cfg.maxFileSize:
		return nil, fmt.Errorf("%w: a table of %d bytes, more than the %d-byte maximum (WithMaxFileSize)", ErrLimit, size, cfg.maxFileSize)
	}
	data := make([]byte, size)
	n, err := r.ReadAt(data, 0)
	if n == len(data) && (err == nil || err == io.EOF) {
		return data, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("metarange: read %d of %d bytes: %w", n, size, err)
}

// eachRange calls fn with every range of a metarange: its ID and its
// RangeData, which aliases data. name is the metarange's, for errors.
func eachRange(data []byte, name string, fn func(v id, d rangeData) error) error {
	record := 0
	return eachValue(data, typeMetaRanges, name, func(value []byte) error {
		record++
		identity, data, err := splitValue(value)
		if err != nil {
			return fmt.Errorf("%w: %s: record %d: %w", ErrCorrupt, name, record, err)
		}
		d, err := decodeRangeData(data)
		if err != nil {
			return fmt.Errorf("%w: %s: record %d: %w", ErrCorrupt, name, record, err)
		}
		v, ok := parseID(identity)
		if !ok {
			return fmt.Errorf("%w: %s: record %d: range ID %q is not 64 lower-case hex digits", ErrCorrupt, name, record, identity)
		}
		return fn(v, d)
	})
}

// A Namespace is a repository's storage namespace, against which entries'
// addresses are resolved as Addresses resolves them. It is safe for
// concurrent use.
type Namespace struct {
	ns namespace
}

// ParseNamespace parses a storage namespace as lakeFS reports it
// ("s3://bucket/repo"). One that is not a URI of a storage lakeFS knows is
// refused with ErrInvalidInput.
func ParseNamespace(storageNamespace string) (*Namespace, error) {
	ns, err := parseNamespace(storageNamespace)
	if err != nil {
		return nil, err
	}
	return &Namespace{ns}, nil
}

// Keys appends to dst the keys, relative to the namespace, that keep the
// object of an entry's address, as Addresses lists them (see the package
// doc): a relative address as stored, and on S3 also as lakeFS before
// v0.110 read it (aws-sdk-go v1 cleaned request paths: data//x named
// data/x); a full one inside the namespace relative to it, in every
// spelling some lakeFS version stored it at; a
// full one outside the namespace as its tail, when its path ends with a key
// shape lakeFS writes, else none (its object is not in the namespace's
// listing). A full address that names the namespace in another spelling is
// an error wrapping ErrNamespaceMismatch, and dst is returned unchanged:
// a caller must stop, not go on without the object's keys. Keys does not
// probe the bucket for outside tails as Addresses does.
func (n *Namespace) Keys(dst []string, address string, typ AddressType) ([]string, error) {
	out, oc := n.ns.keys(dst, address, typ)
	if oc == mismatch {
		_, _, err := n.ns.ns.Check(nil, address)
		return dst, fmt.Errorf("%w: %q: %w", ErrNamespaceMismatch, address, err)
	}
	return out, nil
}
