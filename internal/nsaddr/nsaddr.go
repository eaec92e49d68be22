// Package nsaddr is the module's one rule for the addresses a host stores
// and a repository's storage namespace: which addresses are full (URIs),
// which full addresses are under the namespace and at which keys their
// objects may be stored, and which name the namespace in another spelling.
// Package lakegc's Collect, package uncommitted's export and lakeFS's
// metarange reader all keep what this package says, so no input can drop an
// address that another keeps.
//
// # Classes of a full address
//
//   - Inside: the address starts with the namespace as spelled (its scheme
//     and authority compared regardless of ASCII case, as a URI's are), or
//     names an Azure blob of the namespace's container through any endpoint
//     domain of the same storage account, as lakeFS's Azure adapter reaches
//     it. Its keys are every key some lakeFS version or adapter could have
//     stored the object at: the rest of the address as written; the rest of
//     lakeFS's resolution of it since PR #9464 (September 2025: the URI's
//     raw path, when Go keeps one); the rest of the decoded path, as lakeFS
//     before that PR resolved it; and for Azure the decoded blob name with
//     the slashes around it trimmed (ResolveBlobURLInfoFromURL); for S3,
//     also the path cleaned as aws-sdk-go v1 cleaned a request's (doubled
//     slashes, "." and ".." elements), which lakeFS before v0.110
//     (September 2023) read and wrote S3 through; for file and local
//     paths, also the cleaned, decoded path. Keeping a spelling that names
//     no object costs nothing; dropping one deletes it.
//   - Mismatch: not Inside, but the same place in another spelling: a
//     scheme alias of S3 (s3, s3a, s3n), a file URI's forms (file:/x,
//     file:///x, file://localhost/x) and local:// with an absolute path,
//     userinfo before the host (s3://user@bucket/x, which lakeFS reads
//     from the bucket), "." and ".." segments, doubled or trailing slashes,
//     percent-escapes, and for file paths a symbolic link in either path.
//     For a local namespace relative to lakeFS's blockstore folder
//     (local://repo1), whose folder this package does not know, any
//     absolute path with the namespace's path as whole elements before more
//     (local:///var/lakefs/repo1/x) may name it, and is a Mismatch too:
//     spell such a namespace with its absolute path. The namespace as
//     configured is not the one the host writes: the caller must stop.
//   - Outside: another place. An import is legitimately outside. Its key
//     Tail, when the path ends with a key shape lakeFS writes
//     (layout.Tail), is kept too: if the namespace holds that key, the
//     address named our object in a spelling this package does not know
//     (the xids and UUIDs of those shapes are unique), and the caller's
//     Prober turns that into a mismatch.
//
// # lakeFS's own readings
//
// AdapterFull says which addresses of an entry without a type lakeFS's
// block adapters read as full (package uncommitted's export and lakeFS's
// metarange reader both ask it), and LocalSpelling recognizes lakeFS's
// absolute spelling of a local namespace in the locations its API returns.
package nsaddr

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
)

// ErrMismatch is wrapped by Check's error and the Prober's. Callers wrap it
// with their package's own sentinel.
var ErrMismatch = errors.New("nsaddr: an address names the namespace in another spelling")

// HasScheme reports whether s starts with "<scheme>://", scheme being
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) as in RFC 3986.
func HasScheme(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && validScheme(s[:i])
}

// isSchemeChar reports whether c may be in a scheme (RFC 3986: ALPHA,
// DIGIT, "+", "-", ".").
func isSchemeChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

func validScheme(s string) bool {
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// IsFull reports whether an address carries no type of its own but is a
// full address: it starts with "<scheme>://", or is a file or local URI
// with a single slash ("file:/srv/lake/x"). Anything else is a key relative
// to the namespace.
func IsFull(s string) bool {
	// Either way the address starts with a scheme and its first ':': an
	// address whose run of leading scheme characters is not followed by
	// ':' (or is all of it) is relative, found without a scan of the
	// whole key (the keep set's keys are checked one by one).
	j := 0
	for j < len(s) && isSchemeChar(s[j]) {
		j++
	}
	if j == len(s) || s[j] != ':' {
		return false
	}
	if HasScheme(s) {
		return true
	}
	scheme, rest, ok := strings.Cut(s, ":")
	return ok && strings.HasPrefix(rest, "/") && (strings.EqualFold(scheme, "file") || strings.EqualFold(scheme, "local"))
}

// AdapterStorage maps a URI scheme, in lower case, to the storage type of
// the lakeFS block adapter that reads addresses of that scheme ("s3", "gs",
// "azure" for http and https, "local", "mem" for mem and memory), or "".
func AdapterStorage(scheme string) string {
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

// AdapterFull reports whether lakeFS's block adapters resolve address as a
// full address when its entry has no type of its own (lakeFS's
// BY_PREFIX_DEPRECATED): an absolute URI (Go's url.ParseRequestURI) of a
// scheme of AdapterStorage, in any case. Any other address is relative to
// the namespace. It allocates nothing for an address without such a
// scheme.
func AdapterFull(address string) bool {
	colon := strings.IndexByte(address, ':')
	if colon <= 0 || AdapterStorage(strings.ToLower(address[:colon])) == "" {
		return false
	}
	u, err := url.ParseRequestURI(address)
	return err == nil && AdapterStorage(u.Scheme) != ""
}

// LocalSpelling reports whether root, a full address, is how lakeFS spells
// the local namespace ns ("local://repo1", relative to its blockstore
// folder, which this package does not know) in the addresses its API
// returns: "local:///<an absolute folder>/<ns's path>", with ns's path as
// whole elements at its end. Both are compared as lakeFS writes them, the
// scheme in lower case; ns's trailing and root's leading slashes after
// "local://" are ignored.
func LocalSpelling(root, ns string) bool {
	nsPath, ok := strings.CutPrefix(strings.TrimRight(ns, "/"), "local://")
	nsPath = strings.TrimLeft(nsPath, "/")
	return ok && nsPath != "" && strings.HasPrefix(root, "local:///") && strings.HasSuffix(root, "/"+nsPath)
}

// Class is what a full address is to a namespace.
type Class int

// The classes of a full address; see the package documentation.
const (
	Inside Class = iota + 1
	Mismatch
	Outside
)

// String names the class.
func (c Class) String() string {
	switch c {
	case Inside:
		return "inside"
	case Mismatch:
		return "mismatch"
	case Outside:
		return "outside"
	}
	return "unknown class"
}

// place is a canonical location: the store, the bucket (for Azure the
// account and the container) and the cleaned, decoded path.
type place struct {
	store string // "s3", "gs", "azure", "file" (absolute), "local" (under an unknown root), "mem", or another scheme
	host  string // bucket, "<account>/<container>" for Azure, "" for file
	path  string // decoded, cleaned, without leading or trailing '/'
}

func (p place) under(ns place) bool {
	if p.store != ns.store || p.host != ns.host {
		return false
	}
	if ns.path == "" {
		return p.path != ""
	}
	return strings.HasPrefix(p.path, ns.path+"/")
}

// Namespace is a storage namespace parsed for Classify. It is safe for
// concurrent use.
type Namespace struct {
	spelled string // without trailing '/'
	data    string
	place   place
	ok      bool     // place was resolved
	plain   bool     // an object store's namespace spelled without escapes
	rawPath []string // the namespace's path after its bucket as lakeFS resolves it, raw and decoded, each with a trailing '/' unless empty

	once     sync.Once
	realRoot string // the namespace's folder with symbolic links resolved, for file places

	mu   sync.Mutex
	dirs map[string]string // folders of file addresses, resolved
}

// New parses namespace, a URI. data is the host's data folder, for Tail.
func New(namespace, data string) (*Namespace, error) {
	ns := strings.TrimRight(namespace, "/")
	if !IsFull(ns) {
		return nil, fmt.Errorf("nsaddr: namespace %q is not a URI", namespace)
	}
	n := &Namespace{spelled: ns, data: data}
	n.place, n.ok = resolve(ns)
	switch n.place.store {
	case "s3", "gs", "mem":
		n.plain = n.ok && !strings.ContainsAny(ns, "%?#")
	}
	if u, err := url.ParseRequestURI(ns); err == nil {
		raw := u.RawPath
		if raw == "" {
			raw = u.Path
		}
		for _, p := range []string{raw, u.Path} {
			if p = strings.Trim(p, "/"); p != "" {
				p += "/"
			}
			n.rawPath = appendNew(n.rawPath, p)
		}
		if n.place.store == "azure" {
			// lakeFS's Azure adapter resolves the container and the blob
			// folder from the decoded path.
			_, container, _ := strings.Cut(n.place.host, "/")
			folder := container + "/"
			if n.place.path != "" {
				folder += n.place.path + "/"
			}
			n.rawPath = appendNew(n.rawPath, folder)
		}
	}
	return n, nil
}

// String returns the namespace as given, without trailing '/'.
func (n *Namespace) String() string { return n.spelled }

// SameSpelling reports whether other spells the namespace as n does: the
// same URI but for trailing slashes and the case of the scheme and the
// authority.
func (n *Namespace) SameSpelling(other string) bool {
	o := strings.TrimRight(other, "/")
	rest, ok := n.cutLiteral(o + "/x")
	return ok && rest == "x" && len(o) == len(n.spelled)
}

// Classify appends to dst the keys, relative to the namespace, that keep
// the object of address, a full address, and returns its class. For an
// Outside address the one key appended, if any, is its tail (a key of a
// shape lakeFS writes, see the package documentation); for a Mismatch
// none. Classify does no I/O but, for a file address whose spelling
// differs from the namespace's, resolving symbolic links (cached per
// folder).
func (n *Namespace) Classify(dst []string, address string) (keys []string, class Class) {
	start := len(dst)
	if rest, ok := n.cutLiteral(address); ok {
		if rest != "" {
			dst = append(dst, rest)
			if n.plain && !strings.ContainsAny(rest, "%?#") && (n.place.store != "s3" || !unclean(rest)) {
				// No escape, query or fragment (and for S3 nothing
				// aws-sdk-go v1 cleans): every resolution is the rest
				// itself.
				return dst, Inside
			}
		}
		if dst = n.resolvedKeys(dst, start, address); len(dst) > start {
			return dst, Inside
		}
		return dst, Outside // the namespace's folder itself: no object
	}
	p, ok := resolve(address)
	if ok && n.ok && p.store == "azure" && p.under(n.place) {
		// Another endpoint domain of the same account: lakeFS's adapter
		// reaches the same blob.
		if dst = n.resolvedKeys(dst, start, address); len(dst) > start {
			return dst, Inside
		}
		return dst, Mismatch
	}
	if ok && n.ok && n.sameFilePlace(p) {
		return dst, Mismatch
	}
	if ok && n.ok && p.under(n.place) {
		return dst, Mismatch
	}
	if ok && n.ok && n.underUnknownRoot(p) {
		return dst, Mismatch
	}
	if tail, ok := n.tail(address); ok {
		dst = append(dst, tail)
	}
	return dst, Outside
}

// Check classifies address and turns a Mismatch into an error wrapping
// ErrMismatch that names both spellings.
func (n *Namespace) Check(dst []string, address string) ([]string, Class, error) {
	keys, class := n.Classify(dst, address)
	if class == Mismatch {
		return keys, class, fmt.Errorf("%w: %q names the place of namespace %q; configure the namespace as the host spells its addresses", ErrMismatch, address, n.spelled)
	}
	return keys, class, nil
}

// tail returns the recognized key at the end of address's path.
func (n *Namespace) tail(address string) (string, bool) {
	p := address
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if k, ok := layout.Tail(p, n.data); ok {
		return k, true
	}
	if d, err := url.PathUnescape(p); err == nil && d != p {
		return layout.Tail(d, n.data)
	}
	return "", false
}

func (n *Namespace) cutLiteral(address string) (string, bool) {
	return CutLiteral(n.spelled, address)
}

// CutLiteral returns the rest of address after ns (a namespace without a
// trailing '/') and one '/', the scheme and authority compared regardless
// of ASCII case and the path exactly; a namespace without a scheme is
// matched exactly, and an empty one matches nothing. It allocates nothing.
func CutLiteral(ns, address string) (string, bool) {
	if ns == "" || len(address) <= len(ns) || address[len(ns)] != '/' {
		return "", false
	}
	end := 0 // the end of the scheme and authority
	if HasScheme(ns) {
		// HasScheme, not any "://": in "file:/srv/a://b" or "bucket/x://y"
		// it is part of the path, which is compared exactly.
		i := strings.Index(ns, "://") + len("://")
		end = len(ns)
		if j := strings.IndexByte(ns[i:], '/'); j >= 0 {
			end = i + j
		}
	} else if IsFull(ns) {
		end = strings.IndexByte(ns, ':') + 1 // "file:/x": the scheme
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

// resolvedKeys appends the keys lakeFS's resolutions of address give, after
// the namespace's path, that dst[start:] does not hold yet.
func (n *Namespace) resolvedKeys(dst []string, start int, address string) []string {
	u, err := url.ParseRequestURI(address)
	if err != nil || u.Opaque != "" {
		return dst
	}
	raw := u.RawPath
	if raw == "" {
		raw = u.Path
	}
	paths := []string{strings.TrimPrefix(raw, "/"), strings.TrimPrefix(u.Path, "/")}
	if n.place.store == "azure" {
		// The container is the first element of the path, then the blob
		// name, decoded, with the slashes around it trimmed.
		paths = append(paths, strings.Trim(u.Path, "/"))
	}
	if n.place.store == "s3" {
		// lakeFS before v0.110 (September 2023) read and wrote S3 through
		// aws-sdk-go v1, which cleans a request's path unless told not to.
		for _, p := range paths[:2] {
			if unclean(p) {
				paths = append(paths, sdkV1Clean(p))
			}
		}
	}
	if n.place.store == "file" || n.place.store == "local" {
		// A file path names the file of its cleaned, decoded form.
		if p, ok := resolve(address); ok && p.under(n.place) {
			k := p.path
			if n.place.path != "" {
				k = p.path[len(n.place.path)+1:]
			}
			if !contains(dst[start:], k) {
				dst = append(dst, k)
			}
		}
	}
	for _, p := range paths {
		for _, pre := range n.rawPath {
			if !strings.HasPrefix(p, pre) || len(p) == len(pre) {
				continue
			}
			k := p[len(pre):]
			if n.place.store == "azure" {
				k = strings.Trim(k, "/")
			}
			if k != "" && !contains(dst[start:], k) {
				dst = append(dst, k)
			}
		}
	}
	return dst
}

// CleanedRelative returns, for an S3 namespace, the key lakeFS before
// v0.110 (September 2023) read and wrote the object of a relative address
// at: aws-sdk-go v1 cleaned the request's path (path.Clean, a trailing '/'
// kept), so "data//x" named the object data/x. ok is false when that is the
// key itself, the cleaned key leaves the namespace, or the namespace is not
// S3. A relative address lakeFS writes itself is clean: the check is a scan
// for "//", "/." and a leading '.' or '/', without allocating.
func (n *Namespace) CleanedRelative(key string) (string, bool) {
	if n.place.store != "s3" || len(n.rawPath) == 0 || !MayClean(key) {
		return "", false
	}
	pre := n.rawPath[0] // the namespace's path as lakeFS resolves a relative address
	c, ok := strings.CutPrefix(sdkV1Clean(pre+key), pre)
	if !ok || c == "" || c == key {
		return "", false
	}
	return c, true
}

// MayClean reports whether aws-sdk-go v1 may clean a path ending in key:
// key holds "//" or "/.", or starts with '.' or '/'. It allocates nothing.
func MayClean[S ~string | ~[]byte](key S) bool {
	if len(key) == 0 {
		return false
	}
	if key[0] == '.' || key[0] == '/' {
		return true
	}
	for i := 1; i < len(key); i++ {
		if key[i-1] == '/' && (key[i] == '/' || key[i] == '.') {
			return true
		}
	}
	return false
}

// unclean reports whether aws-sdk-go v1 cleans p, a path without its
// leading '/': a leading or doubled slash, or a "." or ".." element.
func unclean(p string) bool {
	return sdkV1Clean(p) != p
}

// sdkV1Clean cleans p, a path without its leading '/', as aws-sdk-go v1's
// REST protocol cleans a request's path: path.Clean, a trailing '/' kept.
func sdkV1Clean(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(c, "/") {
		c += "/"
	}
	return strings.TrimPrefix(c, "/")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func appendNew(s []string, v string) []string {
	if contains(s, v) {
		return s
	}
	return append(s, v)
}

// resolve returns the canonical place of a full address.
func resolve(address string) (place, bool) {
	if i := strings.IndexAny(address, "?#"); i >= 0 {
		address = address[:i]
	}
	colon := strings.IndexByte(address, ':')
	if colon <= 0 || !validScheme(address[:colon]) {
		return place{}, false
	}
	scheme, rest := strings.ToLower(address[:colon]), address[colon+1:]
	var host, p string
	if r, ok := strings.CutPrefix(rest, "//"); ok {
		host, p, _ = strings.Cut(r, "/")
		p = "/" + p
		// Userinfo is not part of the host: lakeFS takes the URL's Host,
		// without it, as the bucket or the account.
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
	} else {
		p = rest
	}
	decoded := func(s string) string {
		if d, err := url.PathUnescape(s); err == nil {
			return d
		}
		return s
	}
	clean := func(s string) string { return strings.Trim(path.Clean("/"+s), "/") }
	host = strings.ToLower(decoded(host))
	switch scheme {
	case "s3", "s3a", "s3n":
		return place{store: "s3", host: host, path: clean(decoded(p))}, host != ""
	case "gs":
		return place{store: "gs", host: host, path: clean(decoded(p))}, host != ""
	case "mem", "memory":
		return place{store: "mem", host: host, path: clean(decoded(p))}, true
	case "http", "https":
		account, _, ok := strings.Cut(host, ".")
		if !ok || account == "" {
			return place{}, false
		}
		if i := strings.LastIndexByte(account, ':'); i >= 0 {
			account = account[:i]
		}
		full := clean(decoded(p))
		container, blobPath, _ := strings.Cut(full, "/")
		return place{store: "azure", host: account + "/" + container, path: blobPath}, container != ""
	case "file":
		if host != "" && host != "localhost" {
			return place{store: "file//" + host, path: clean(decoded(p))}, true
		}
		return place{store: "file", path: clean(decoded(p))}, true
	case "local":
		// lakeFS's local adapter takes what follows "local://" as it is: an
		// absolute path, or a path under its root.
		if strings.HasPrefix(rest, "///") || !strings.HasPrefix(rest, "//") {
			return place{store: "file", path: clean(strings.TrimPrefix(rest, "//"))}, true
		}
		return place{store: "local", path: clean(strings.TrimPrefix(rest, "//"))}, true
	}
	return place{store: scheme, host: host, path: clean(decoded(p))}, true
}

// underUnknownRoot reports whether p, an absolute file place, may be under
// a local namespace relative to a root this package does not know
// (local://repo1 under lakeFS's blockstore folder): the namespace's path
// is a run of whole elements of p's path, with more after it.
// lakeFS's local adapter reads local:///<root>/repo1/x, the folder's
// absolute path, as the namespace's object x.
func (n *Namespace) underUnknownRoot(p place) bool {
	return n.place.store == "local" && p.store == "file" && n.place.path != "" &&
		strings.Contains("/"+p.path, "/"+n.place.path+"/")
}

// sameFilePlace reports whether p, a file place, is under the namespace's
// file place once symbolic links are resolved in both.
func (n *Namespace) sameFilePlace(p place) bool {
	if p.store != "file" || n.place.store != "file" {
		return false
	}
	n.once.Do(func() {
		if r, err := filepath.EvalSymlinks(filepath.FromSlash("/" + n.place.path)); err == nil {
			n.realRoot = strings.Trim(filepath.ToSlash(r), "/")
		}
	})
	root := n.realRoot
	if root == "" {
		root = n.place.path
	}
	real := n.realDir(p.path)
	return real == root || strings.HasPrefix(real, root+"/") || root == ""
}

// maxDirs bounds the cache of resolved folders.
const maxDirs = 4096

// realDir resolves the symbolic links of the deepest existing folder of
// path p, keeping the rest as it is.
func (n *Namespace) realDir(p string) string {
	dir, file := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	n.mu.Lock()
	r, ok := n.dirs[dir]
	n.mu.Unlock()
	if !ok {
		r = dir
		for d, rest := dir, ""; ; {
			if real, err := filepath.EvalSymlinks(filepath.FromSlash("/" + d)); err == nil {
				r = strings.Trim(filepath.ToSlash(real)+rest, "/")
				break
			}
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d, rest = d[:i], d[i:]+rest
		}
		n.mu.Lock()
		if n.dirs == nil || len(n.dirs) >= maxDirs {
			n.dirs = map[string]string{}
		}
		n.dirs[dir] = r
		n.mu.Unlock()
	}
	if r == "" {
		return file
	}
	return r + "/" + file
}

// DefaultProbes is how many distinct tails a Prober checks.
const DefaultProbes = 64

// Prober checks a bounded sample of the tails of Outside addresses against
// the bucket: a tail the bucket holds means the address named the
// namespace's object in another spelling. It is safe for concurrent use.
type Prober struct {
	bucket *blob.Bucket
	ns     string
	limit  int

	mu   sync.Mutex
	seen map[string]bool
}

// NewProber checks up to limit distinct tails (DefaultProbes if limit <= 0)
// in bucket, the namespace named ns.
func NewProber(bucket *blob.Bucket, ns string, limit int) *Prober {
	if limit <= 0 {
		limit = DefaultProbes
	}
	return &Prober{bucket: bucket, ns: ns, limit: limit, seen: map[string]bool{}}
}

// Probe checks tail, the Tail of address, unless the sample is full or
// holds it: an error wrapping ErrMismatch if the bucket holds it, or the
// bucket's error, or ctx's (a probe that could not look is never taken for
// an absent tail).
func (p *Prober) Probe(ctx context.Context, address, tail string) error {
	if p == nil || p.bucket == nil {
		return nil
	}
	p.mu.Lock()
	if p.seen[tail] || len(p.seen) >= p.limit {
		p.mu.Unlock()
		return nil
	}
	p.seen[tail] = true
	p.mu.Unlock()
	ok, err := p.bucket.Exists(ctx, tail)
	if err == nil && !ok {
		// Some drivers (memblob, fileblob) answer "not found" whatever
		// the context: a cancelled probe looked at nothing.
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("nsaddr: probe %q: %w", tail, err)
	}
	if ok {
		return fmt.Errorf("%w: %q is outside namespace %q, but its tail %q is an object of it: the host spells the namespace differently", ErrMismatch, address, p.ns, tail)
	}
	return nil
}
