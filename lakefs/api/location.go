package api

import (
	"fmt"
	"strings"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
)

// RelativeKey returns the key of location under the storage namespace: the
// full URIs lakeFS's API returns — report locations, and objects' physical
// addresses — with the namespace and the slash after it removed, e.g.
//
//	RelativeKey("s3://bucket/repo1", "s3://bucket/repo1/_lakefs/retention/gc/commits/run_id=x/commits.csv")
//	  == "_lakefs/retention/gc/commits/run_id=x/commits.csv"
//
// A folder's location keeps its trailing slash ("…/uncommitted/").
//
// A location outside the namespace (another scheme, bucket or prefix, or a
// prefix that only starts like it, "s3://bucket/repo10/…"), one naming the
// namespace itself, and one with an empty, "." or ".." path segment are
// ErrOutsideNamespace: such a key would name some other object.
func RelativeKey(namespace, location string) (string, error) {
	ns := strings.TrimRight(namespace, "/")
	if !nsaddr.HasScheme(ns) {
		return "", fmt.Errorf("%w: namespace %q is not a URI", ErrOutsideNamespace, namespace)
	}
	key, ok := strings.CutPrefix(location, ns+"/")
	if !ok {
		return "", fmt.Errorf("%w: %q is not under %q", ErrOutsideNamespace, location, namespace)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: %q has an empty, \".\" or \"..\" path segment", ErrOutsideNamespace, location)
		}
	}
	return key, nil
}

// ResolveNamespace returns the storage namespace spelled as the prefix of the
// full URIs lakeFS returns, derived from a prepare-commits result (the report
// sits at "<namespace>/<prefix>/retention/gc/commits/run_id=<run>/commits.csv",
// prefix being "_lakefs" unless lakeFS is configured otherwise):
//
//   - on an object store it is the namespace itself, "s3://bucket/repo1";
//   - on lakeFS's local blockstore, a namespace "local://repo1" lives in the
//     blockstore's folder and lakeFS spells every full address with that
//     folder's absolute path: "local:///var/lib/lakefs/data/repo1". Addresses
//     in that form are also what lakeFS stores for objects linked there, so
//     committed metadata must be made relative against this prefix, not
//     against "local://repo1".
//
// A report location that does not end in lakeFS's tail for the run, or whose
// root is not the namespace (for "local://" namespaces: an absolute
// "local:///…/<namespace path>"), is ErrOutsideNamespace.
func ResolveNamespace(namespace string, commits *PrepareCommitsResult) (string, error) {
	tail := "/" + layout.CommitsKey("", commits.RunID)
	rest, ok := strings.CutSuffix(commits.CommitsLocation, tail)
	i := strings.LastIndex(rest, "/")
	if !ok || commits.RunID == "" || strings.Contains(commits.RunID, "/") || i < 0 || i == len(rest)-1 {
		return "", fmt.Errorf("%w: commits report %q of run %q is not where lakeFS writes it",
			ErrOutsideNamespace, commits.CommitsLocation, commits.RunID)
	}
	root := rest[:i]
	ns := strings.TrimRight(namespace, "/")
	if root == ns && nsaddr.HasScheme(ns) || nsaddr.LocalSpelling(root, ns) {
		return root, nil
	}
	return "", fmt.Errorf("%w: commits report %q is not under namespace %q", ErrOutsideNamespace, commits.CommitsLocation, namespace)
}

// SameLocalNamespace reports whether root, where lakeFS says it wrote a file
// of a repository, is lakeFS's absolute spelling of the repository's local
// namespace ns: "local:///<a blockstore folder>/<ns's path>" for ns
// "local://<ns's path>". It says nothing of which blockstore folder: the
// same namespace under another folder (or the same folder through a
// symbolic link) is "the same" here, and a caller that expects one spelling
// compares root with it to tell a namespace spelled otherwise from another
// namespace. It is false for a namespace not on the local blockstore.
func SameLocalNamespace(root, ns string) bool {
	return nsaddr.LocalSpelling(root, ns)
}
