package uncommitted

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

// ErrNamespaceMismatch is wrapped by Prepare's error for a full address
// that names the repository's storage namespace in another spelling than
// Repository.StorageNamespace (another scheme for S3 such as s3a, a file
// URI's other forms, ".." or doubled slashes, percent-escapes, a symbolic
// link), or a full address outside it whose tail is an object of the
// bucket: the export would leave the object out, and a GC delete it.
var ErrNamespaceMismatch = errors.New("uncommitted: an address names the namespace in another spelling")

// exportKeys appends to dst the addresses to export for a physical address
// (several for a full address whose object lakeFS's versions may have
// stored at several keys), and returns the class of a full one: see
// package documentation, "Addresses". A Mismatch is an error wrapping
// ErrNamespaceMismatch.
func exportKeys(dst []string, address string, typ AddressType, ns *nsaddr.Namespace) ([]string, nsaddr.Class, error) {
	if typ == Relative {
		if address != "" {
			dst = append(dst, address)
			if k, ok := ns.CleanedRelative(address); ok {
				dst = append(dst, k)
			}
		}
		return dst, 0, nil
	}
	dst, class, err := ns.Check(dst, address)
	if err != nil {
		return dst, class, fmt.Errorf("%w: %w", ErrNamespaceMismatch, err)
	}
	return dst, class, nil
}

// CutNamespace returns the key, relative to the storage namespace, of a
// full address that starts with it as spelled: the rest of the address
// after the namespace (trailing slashes ignored) and one '/'. ok is false
// for any other address, or one naming the namespace itself. The scheme
// and authority are compared regardless of ASCII case, as a URI's are (RFC
// 3986); the path exactly. It allocates nothing.
//
// It is the literal part of the rule Prepare applies: Prepare also keeps
// the keys lakeFS's resolutions of the address give, refuses an address
// that names the namespace in another spelling (ErrNamespaceMismatch), and
// keeps the tail of an address outside it (see the package documentation).
func CutNamespace(storageNamespace, address string) (key string, ok bool) {
	key, ok = nsaddr.CutLiteral(strings.TrimRight(storageNamespace, "/"), address)
	return key, ok && key != ""
}

// trailerType classifies a trailer address, which carries no type: a
// URI ("s3://", "gs://", "file://", "file:/"...) is full, anything else is
// relative.
func trailerType(address string) AddressType {
	if nsaddr.IsFull(address) {
		return Full
	}
	return Relative
}

// lakeFS's values of its catalog's Entry.AddressType (and of the block
// adapter's IdentifierType, which has the same numbers).
const (
	lakeFSByPrefixDeprecated = 0
	lakeFSRelative           = 1
	lakeFSFull               = 2
)

// AddressTypeFromLakeFS converts the address type of a lakeFS entry (the
// catalog's Entry.AddressType, stored in lakeFS's staging area) to an
// AddressType, for a host that reads lakeFS's staging area. lakeFS numbers
// its types BY_PREFIX_DEPRECATED = 0, RELATIVE = 1, FULL = 2.
//
// BY_PREFIX_DEPRECATED, the type of entries written before lakeFS
// recorded one, decides by the address itself, as lakeFS's block adapters
// do when they read the object: an address that parses as an absolute URI
// (Go's url.ParseRequestURI) of a scheme lakeFS stores data in (s3, gs,
// http, https, local, mem, memory) is Full, any other is Relative. So the
// export names the object lakeFS reads. (lakeFS's own export counts every
// such address as full, and leaves out a relative one.)
//
// Any other value is an error wrapping ErrUnknownAddressType.
func AddressTypeFromLakeFS(v int32, address string) (AddressType, error) {
	switch v {
	case lakeFSRelative:
		return Relative, nil
	case lakeFSFull:
		return Full, nil
	case lakeFSByPrefixDeprecated:
		if nsaddr.AdapterFull(address) {
			return Full, nil
		}
		return Relative, nil
	}
	return 0, fmt.Errorf("%w: lakeFS address type %d", ErrUnknownAddressType, v)
}
