package metarange

import (
	"fmt"
	"net/url"
	"strings"
)

// namespace is a repository's storage namespace as lakeFS reports it
// ("s3://bucket/prefix"), in the two forms a full address is compared with.
type namespace struct {
	prefix  string // the namespace with one trailing '/', as lakeFS's GC clients strip it
	storage string // lakeFS's storage type of its scheme
	loc     string // its host (lower case) and path, as lakeFS resolves them, with one trailing '/'
}

// What became of an entry's address.
type outcome int

const (
	asStored     outcome = iota // kept as stored: a relative address
	madeRelative                // a full address inside the namespace, kept relative to it
	outside                     // a full address outside the namespace, dropped
)

func parseNamespace(s string) (namespace, error) {
	storage, loc, ok := resolveFull(s)
	if !ok || !hasScheme(s) || strings.Trim(loc, "/") == "" {
		return namespace{}, fmt.Errorf("%w: storage namespace %q is not a URI of a storage lakeFS knows", ErrInvalidInput, s)
	}
	return namespace{
		prefix:  strings.TrimRight(s, "/") + "/",
		storage: storage,
		loc:     strings.TrimRight(loc, "/") + "/",
	}, nil
}

// keys appends to dst the keys, relative to the namespace, that keep the
// object of an entry's address, and says why. A relative address is kept
// as stored. A full one inside the namespace is kept relative to it, in the
// form lakeFS's GC clients use (the string after the namespace) and, when
// it differs (a scheme in upper case, a percent-escape), the key lakeFS's
// own resolution of the URI gives: keeping both is safe. A full address
// without a URI scheme is kept as stored, as lakeFS's Spark GC keeps it.
// Any other full address is outside the namespace: its object is not in the
// namespace's listing, so there is nothing to keep.
//
// An address of the deprecated type is full when lakeFS would resolve it so
// (a URI of a known storage scheme) and relative otherwise.
func (ns *namespace) keys(dst []string, address string, typ addressType) ([]string, outcome) {
	if typ == relative {
		return append(dst, address), asStored
	}
	storage, loc, resolved := resolveFull(address)
	if typ == byPrefixDeprecated && !resolved {
		return append(dst, address), asStored
	}
	n := len(dst)
	if len(address) > len(ns.prefix) && strings.HasPrefix(address, ns.prefix) {
		dst = append(dst, address[len(ns.prefix):])
	}
	if resolved && storage == ns.storage && len(loc) > len(ns.loc) && strings.HasPrefix(loc, ns.loc) {
		if k := loc[len(ns.loc):]; len(dst) == n || dst[n] != k {
			dst = append(dst, k)
		}
	}
	switch {
	case len(dst) > n:
		return dst, madeRelative
	case !hasScheme(address):
		return append(dst, address), asStored
	default:
		return dst, outside
	}
}

// resolveFull resolves a full address as lakeFS's block package does: a
// request URI whose scheme names a storage type lakeFS knows, its host as
// the bucket (compared here in lower case: a host matches whatever its
// case) and its raw path, or else its path, as the key. It returns the
// storage type and "<host>/<key>".
func resolveFull(address string) (storage, loc string, ok bool) {
	colon := strings.IndexByte(address, ':')
	if colon <= 0 || storageType(strings.ToLower(address[:colon])) == "" {
		return "", "", false // the common case, a relative key, without parsing
	}
	u, err := url.ParseRequestURI(address)
	if err != nil {
		return "", "", false
	}
	storage = storageType(u.Scheme)
	if storage == "" {
		return "", "", false
	}
	path := u.RawPath
	if path == "" {
		path = u.Path
	}
	return storage, strings.ToLower(u.Host) + "/" + strings.TrimPrefix(path, "/"), true
}

// storageType maps a URI scheme to lakeFS's storage type, "" if none.
func storageType(scheme string) string {
	switch scheme {
	case "s3", "gs", "local":
		return scheme
	case "mem", "memory":
		return "mem"
	case "http", "https":
		return "azure"
	}
	return ""
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
