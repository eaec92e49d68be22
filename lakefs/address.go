package lakefs

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/lakegc/lakegc/namespace"
)

// AddressNamespace returns a repository's storage namespace as lakeFS's
// block adapter spells the full addresses it hands out, the value of
// lakegc.Config.Namespace: the namespace itself, without a trailing "/", on
// S3, GCS and Azure; on the local blockstore "local://" followed by the
// blockstore's folder (blockstore.local.path, "~" expanded, as lakeFS uses
// it: an absolute path, or lakeFS's addresses are relative too) joined with
// the namespace's path, as lakeFS's local adapter formats them:
//
//	AddressNamespace("local://repo1", "/var/lakefs") = "local:///var/lakefs/repo1"
//
// localPath is needed, and read, for a local namespace only. A namespace
// package namespace refuses is an error wrapping namespace.ErrInvalidInput; a
// local one without localPath wraps namespace.ErrNoLocalRoot.
func AddressNamespace(storageNamespace, localPath string) (string, error) {
	n, err := namespace.Parse(storageNamespace)
	if err != nil {
		return "", err
	}
	if n.Kind != namespace.Local {
		return strings.TrimRight(storageNamespace, "/"), nil
	}
	if localPath == "" {
		return "", fmt.Errorf("%w: %s", namespace.ErrNoLocalRoot, n)
	}
	return "local://" + path.Join(filepath.ToSlash(localPath), n.Path), nil
}
