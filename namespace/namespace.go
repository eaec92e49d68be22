package namespace

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Kind is the store a namespace lives on.
type Kind string

// The kinds of namespace lakeFS writes.
const (
	S3    Kind = "s3"    // s3://<bucket>/<path>
	GCS   Kind = "gs"    // gs://<bucket>/<path>
	Azure Kind = "azure" // https://<account>.<domain>/<container>/<path>
	Local Kind = "local" // local://<path>, under lakeFS's local blockstore root
)

// DefaultAzureDomain is the domain of Azure's public cloud blob endpoints.
const DefaultAzureDomain = "blob.core.windows.net"

// ErrInvalidInput is wrapped by every error of Parse, and by the errors of
// BucketURL, OpenBucket and LocalDeleter for a namespace they cannot take
// or an option given an invalid value.
var ErrInvalidInput = errors.New("namespace: invalid input")

// Namespace is a lakeFS storage namespace, parsed.
type Namespace struct {
	// Kind is the store.
	Kind Kind
	// Bucket is the S3 or GCS bucket, or the Azure container; empty for
	// Local.
	Bucket string
	// Account is the Azure storage account (the first label of the host);
	// empty for the other kinds.
	Account string
	// Domain is the rest of an Azure host, such as DefaultAzureDomain or
	// a sovereign cloud's "blob.core.chinacloudapi.cn"; empty for the
	// other kinds.
	Domain string
	// Path is the folder inside the bucket (for Local, under the
	// blockstore's root): "" or segments joined by "/", with no leading or
	// trailing "/". Object keys of the repository are relative to it.
	Path string
}

// Parse parses a storage namespace as lakeFS writes them: s3://bucket/path,
// gs://bucket/path, https://<account>.blob.core.windows.net/<container>/path
// (http too, as lakeFS accepts it, and any domain after the account) and
// local://path. Trailing slashes are dropped, and the path is
// percent-decoded except a local one, as lakeFS does. Parse does no I/O.
//
// It refuses, with an error wrapping ErrInvalidInput, what lakeFS would resolve
// differently from a plain prefix or what names no place to collect:
// another scheme (lakeFS's in-memory "mem://" included), a query, a
// fragment, a user or a port, a bucket, account or container name the store
// does not allow, an empty, "." or ".." path segment, a backslash or a
// control character, and a local namespace with no path.
func Parse(uri string) (Namespace, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return Namespace{}, invalid(uri, "not a URI")
	}
	if strings.ContainsAny(rest, "?#") {
		return Namespace{}, invalid(uri, "a query or a fragment")
	}
	if strings.EqualFold(scheme, "local") {
		// lakeFS joins what follows "local://" to its root as it is,
		// without decoding it.
		p, err := cleanPath(uri, rest)
		if err != nil {
			return Namespace{}, err
		}
		if p == "" {
			return Namespace{}, invalid(uri, "no path")
		}
		return Namespace{Kind: Local, Path: p}, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return Namespace{}, invalid(uri, "not a URI")
	}
	if u.User != nil || u.Port() != "" || u.Opaque != "" {
		return Namespace{}, invalid(uri, "a user, a port or an opaque URI")
	}
	switch strings.ToLower(scheme) {
	case "s3":
		return bucketNamespace(uri, S3, u)
	case "gs":
		return bucketNamespace(uri, GCS, u)
	case "https", "http":
		return azureNamespace(uri, u)
	}
	return Namespace{}, invalid(uri, fmt.Sprintf("unsupported scheme %q", scheme))
}

func bucketNamespace(uri string, kind Kind, u *url.URL) (Namespace, error) {
	if !bucketName(u.Host) {
		return Namespace{}, invalid(uri, fmt.Sprintf("bucket %q: letters, digits, '.', '-' and '_'", u.Host))
	}
	p, err := cleanPath(uri, u.Path)
	if err != nil {
		return Namespace{}, err
	}
	return Namespace{Kind: kind, Bucket: u.Host, Path: p}, nil
}

func azureNamespace(uri string, u *url.URL) (Namespace, error) {
	account, domain, ok := strings.Cut(strings.ToLower(u.Host), ".")
	if !ok || !bucketName(domain) || strings.Contains(domain, "..") || strings.HasSuffix(domain, ".") {
		return Namespace{}, invalid(uri, "the host is not <account>.<domain>")
	}
	if !azureAccount(account) {
		return Namespace{}, invalid(uri, fmt.Sprintf("storage account %q: 3 to 24 lowercase letters and digits", account))
	}
	p, err := cleanPath(uri, u.Path)
	if err != nil {
		return Namespace{}, err
	}
	container, p, _ := strings.Cut(p, "/")
	if !azureContainer(container) {
		return Namespace{}, invalid(uri, fmt.Sprintf("container %q: 3 to 63 lowercase letters, digits and '-'", container))
	}
	return Namespace{Kind: Azure, Account: account, Domain: domain, Bucket: container, Path: p}, nil
}

// bucketName reports whether s is a plausible S3 or GCS bucket name (or a
// domain): what the stores allow, legacy S3 names included.
func bucketName(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !alnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// azureAccount reports whether s is a valid storage account name.
func azureAccount(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for _, c := range s {
		if !alnum(c) || (c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// azureContainer reports whether s is a valid container name, or one of
// Azure's special containers.
func azureContainer(s string) bool {
	switch s {
	case "$root", "$web", "$logs":
		return true
	}
	if len(s) < 3 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range s {
		if (!alnum(c) || (c >= 'A' && c <= 'Z')) && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c rune) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// cleanPath trims the slashes around p and checks its segments.
func cleanPath(uri, p string) (string, error) {
	p = strings.Trim(p, "/")
	if !utf8.ValidString(p) {
		return "", invalid(uri, "not UTF-8")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "", invalid(uri, "a control character or a backslash")
		}
	}
	if p == "" {
		return "", nil
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return "", invalid(uri, "an empty path segment")
		case ".", "..":
			return "", invalid(uri, fmt.Sprintf("a %q path segment", seg))
		}
	}
	return p, nil
}

func invalid(uri, why string) error {
	return fmt.Errorf("%w: namespace %q: %s", ErrInvalidInput, uri, why)
}

// String returns the namespace's URI in lakeFS's form (https for Azure),
// without a trailing slash, its path escaped as a URI's (but a local one).
// Parse(n.String()) returns n.
func (n Namespace) String() string {
	u := url.URL{Scheme: string(n.Kind), Host: n.Bucket}
	p := n.Path
	switch n.Kind {
	case S3, GCS:
	case Azure:
		u.Scheme, u.Host, p = "https", n.Account+"."+n.Domain, n.Bucket+"/"+n.Path
		p = strings.TrimSuffix(p, "/")
	case Local:
		return "local://" + n.Path
	default:
		return ""
	}
	if p != "" {
		u.Path = "/" + p
	}
	return u.String()
}
