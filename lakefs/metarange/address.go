package metarange

import (
	"fmt"
	"net/url"
	"strings"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
)

// namespace is a repository's storage namespace as lakeFS reports it
// ("s3://bucket/prefix"), parsed by the module's one rule for full
// addresses (internal/nsaddr).
type namespace struct {
	ns *nsaddr.Namespace
}

// What became of an entry's address.
type outcome int

const (
	asStored     outcome = iota // kept as stored: a relative address
	madeRelative                // a full address inside the namespace, kept relative to it
	outside                     // a full address outside the namespace: only its tail kept
	mismatch                    // a full address naming the namespace in another spelling: an error
)

func parseNamespace(s string) (namespace, error) {
	storage, loc, ok := resolveFull(s)
	if !ok || storage == "" || !nsaddr.HasScheme(s) || strings.Trim(loc, "/") == "" {
		return namespace{}, fmt.Errorf("%w: storage namespace %q is not a URI of a storage lakeFS knows", ErrInvalidInput, s)
	}
	ns, err := nsaddr.New(s, lakefslayout.DataPrefix) // lakeFS's data folder, for the tails
	if err != nil {
		return namespace{}, fmt.Errorf("%w: storage namespace %q: %v", ErrInvalidInput, s, err)
	}
	return namespace{ns: ns}, nil
}

// keys appends to dst the keys, relative to the namespace, that keep the
// object of an entry's address, and says why. A relative address is kept
// as stored, and on S3 also as lakeFS before v0.110 cleaned it. A full one inside the namespace gives every key some lakeFS
// version or adapter could have stored its object at (see the package
// documentation); one that names the namespace in another spelling is a
// mismatch, which fails the iteration; one outside it gives its tail, if
// its path ends with a key shape lakeFS writes. A full address without a
// URI scheme is kept as stored, as lakeFS's Spark GC keeps it.
//
// An address of the deprecated type is full when lakeFS would resolve it so
// (nsaddr.AdapterFull, the rule package uncommitted's AddressTypeFromLakeFS
// applies to staged entries) and relative otherwise.
func (ns *namespace) keys(dst []string, address string, typ addressType) ([]string, outcome) {
	if typ == relative {
		return ns.relative(dst, address), asStored
	}
	if typ == byPrefixDeprecated && !nsaddr.AdapterFull(address) {
		return ns.relative(dst, address), asStored
	}
	if !nsaddr.IsFull(address) {
		return append(dst, address), asStored
	}
	dst, class := ns.ns.Classify(dst, address)
	switch class {
	case nsaddr.Inside:
		return dst, madeRelative
	case nsaddr.Mismatch:
		return dst, mismatch
	}
	return dst, outside
}

// relative appends a relative address and, on S3, the key lakeFS before
// v0.110 read its object at (nsaddr.CleanedRelative).
func (ns *namespace) relative(dst []string, address string) []string {
	dst = append(dst, address)
	if k, ok := ns.ns.CleanedRelative(address); ok {
		dst = append(dst, k)
	}
	return dst
}

// resolveFull resolves a full address as lakeFS's block package does: a
// request URI whose scheme names a storage type lakeFS knows, its host as
// the bucket (compared here in lower case: a host matches whatever its
// case) and its raw path, or else its path, as the key. It returns the
// storage type and "<host>/<key>". ok is nsaddr.AdapterFull's answer: the
// addresses it resolves are those package uncommitted exports as full.
func resolveFull(address string) (storage, loc string, ok bool) {
	if !nsaddr.AdapterFull(address) {
		return "", "", false
	}
	u, err := url.ParseRequestURI(address)
	if err != nil {
		return "", "", false // AdapterFull parsed it: never
	}
	storage = nsaddr.AdapterStorage(u.Scheme)
	path := u.RawPath
	if path == "" {
		path = u.Path
	}
	return storage, strings.ToLower(u.Host) + "/" + strings.TrimPrefix(path, "/"), true
}
