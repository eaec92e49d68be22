package uncommitted

import (
	"fmt"
	"net/url"
	"strings"
)

// namespacePrefix returns the storage namespace with exactly one trailing
// '/', the prefix every full address inside it starts with, or "" for an
// empty namespace (which Prepare refuses).
func namespacePrefix(storageNamespace string) string {
	ns := strings.TrimRight(storageNamespace, "/")
	if ns == "" {
		return ""
	}
	return ns + "/"
}

// exportAddress returns the address to export for a physical address, and
// false when there is nothing to export: a full address outside the
// namespace (its object cannot be in the namespace listing), or an empty one.
func exportAddress(address string, typ AddressType, nsPrefix string) (string, bool) {
	if typ == Relative {
		return address, address != ""
	}
	key, ok := cutNamespace(address, strings.TrimSuffix(nsPrefix, "/"))
	return key, ok && key != ""
}

// CutNamespace returns the key, relative to the storage namespace, of a
// full address inside it: the rest of the address after the namespace
// (trailing slashes ignored) and one '/'. ok is false for an address
// outside the namespace, or naming the namespace itself. The scheme and
// authority are compared regardless of ASCII case, as a URI's are (RFC
// 3986): a reader that parses "S3://bucket/repo/x" reads the namespace's
// object, which leaving out of an input would mark. The path is compared
// exactly. Prepare relativises a full address so; a host that reads full
// addresses of its own can do the same. It allocates nothing.
func CutNamespace(storageNamespace, address string) (key string, ok bool) {
	key, ok = cutNamespace(address, strings.TrimRight(storageNamespace, "/"))
	return key, ok && key != ""
}

// cutNamespace returns the rest of address after ns (a namespace without a
// trailing '/') and a '/', the scheme and authority matched regardless of
// ASCII case and the path exactly; a namespace without a scheme is matched
// exactly, and an empty one matches nothing.
func cutNamespace(address, ns string) (string, bool) {
	if ns == "" || len(address) <= len(ns) || address[len(ns)] != '/' {
		return "", false
	}
	end := 0 // the end of the scheme and authority
	if i := strings.Index(ns, "://"); i >= 0 {
		i += len("://")
		end = len(ns)
		if j := strings.IndexByte(ns[i:], '/'); j >= 0 {
			end = i + j
		}
	}
	if !asciiEqualFold(address[:end], ns[:end]) || address[end:len(ns)] != ns[end:] {
		return "", false
	}
	return address[len(ns)+1:], true
}

// asciiEqualFold reports whether a and b are equal under ASCII case folding.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// trailerAddress classifies a trailer address, which carries no type: one
// that starts with a URI scheme ("s3://", "gs://", "file://"...) is full,
// anything else is relative.
func trailerAddress(address, nsPrefix string) (string, bool) {
	if hasScheme(address) {
		return exportAddress(address, Full, nsPrefix)
	}
	return exportAddress(address, Relative, nsPrefix)
}

// hasScheme reports whether s starts with "<scheme>://", scheme being
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) as in RFC 3986.
func hasScheme(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// lakeFS's values of its catalog's Entry.AddressType (and of the block
// adapter's IdentifierType, which has the same numbers).
const (
	lakeFSByPrefixDeprecated = 0
	lakeFSRelative           = 1
	lakeFSFull               = 2
)

// lakeFSSchemes are the URI schemes lakeFS's block adapters resolve as
// full addresses.
var lakeFSSchemes = map[string]bool{
	"s3": true, "gs": true, "http": true, "https": true,
	"local": true, "mem": true, "memory": true,
}

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
		if u, err := url.ParseRequestURI(address); err == nil && lakeFSSchemes[u.Scheme] {
			return Full, nil
		}
		return Relative, nil
	}
	return 0, fmt.Errorf("%w: lakeFS address type %d", ErrUnknownAddressType, v)
}
