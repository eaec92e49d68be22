package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/lakefs"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/namespace"
)

// OpenNamespace opens the bucket of a repository's storage namespace
// (lakeFS's repository's storage_namespace), rooted at it, as Collect does
// when given no bucket: with store's settings (lakeFS's configuration,
// package lakefs/blockstore) when given, else with the cloud SDKs' own
// credentials from the environment (namespace.OpenBucket). A namespace on
// lakeFS's local blockstore opens in the folder blockstorePath (lakeFS's
// blockstore.local.path); without it the error wraps
// namespace.ErrNoLocalRoot.
func OpenNamespace(ctx context.Context, storageNamespace, blockstorePath string, store *blockstore.Config) (*blob.Bucket, error) {
	_, b, err := openNamespace(ctx, storageNamespace, blockstorePath, store)
	return b, err
}

// noLocalRoot is the error of a local namespace without the blockstore's
// folder.
func noLocalRoot(err error) error {
	return fmt.Errorf("%w: give lakeFS's blockstore folder (blockstore.local.path) as BlockstorePath (the command's --blockstore-path)", err)
}

// resolveNamespace returns the namespace ns as lakeFS spells full
// addresses in it: a local one with the blockstore's absolute path
// (lakefs.AddressNamespace; namespace.ErrNoLocalRoot without
// blockstorePath), any other as it is.
func resolveNamespace(ns, blockstorePath string) (string, error) {
	n, err := namespace.Parse(ns)
	if err != nil {
		return "", err
	}
	if n.Kind != namespace.Local {
		return strings.TrimRight(ns, "/"), nil
	}
	if blockstorePath == "" {
		return "", noLocalRoot(fmt.Errorf("%w: %s", namespace.ErrNoLocalRoot, ns))
	}
	root, err := filepath.Abs(blockstorePath)
	if err != nil {
		return "", fmt.Errorf("%w: BlockstorePath %q: %w", ErrInvalidOptions, blockstorePath, err)
	}
	return lakefs.AddressNamespace(ns, root)
}
