package uncommitted

import "strings"

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
	if len(address) <= len(nsPrefix) || !strings.HasPrefix(address, nsPrefix) {
		return "", false
	}
	return address[len(nsPrefix):], true
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
