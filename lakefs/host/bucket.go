package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // https://<account>.blob.core.windows.net namespaces
	_ "gocloud.dev/blob/fileblob"  // local:// namespaces
	_ "gocloud.dev/blob/gcsblob"   // gs:// namespaces
	_ "gocloud.dev/blob/s3blob"    // s3:// namespaces

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

// openNamespace opens the bucket of a repository's storage namespace, rooted
// at it (namespace.OpenBucket, with opts), and returns the namespace as
// lakeFS spells full addresses in it (resolveNamespace). Credentials are the
// cloud SDKs' own, from the environment, unless store (lakeFS's
// configuration) is given: then an object store's namespace opens with
// store.OpenBucket. A local namespace without blockstorePath is
// namespace.ErrNoLocalRoot.
func openNamespace(ctx context.Context, ns, blockstorePath string, store *blockstore.Config, opts ...namespace.Option) (string, *blob.Bucket, error) {
	n, err := namespace.Parse(ns)
	if err != nil {
		return "", nil, err
	}
	resolved := strings.TrimRight(ns, "/")
	if store != nil && (n.Kind != namespace.Local || store.Type != blockstore.TypeLocal) {
		b, err := store.OpenBucket(ctx, ns)
		if err != nil {
			return "", nil, err
		}
		return resolved, b, nil
	}
	if n.Kind == namespace.Local && blockstorePath != "" {
		if resolved, err = resolveNamespace(ns, blockstorePath); err != nil {
			return "", nil, err
		}
		root, _ := filepath.Abs(blockstorePath) // resolveNamespace checked it
		opts = append(opts, namespace.WithLocalRoot(root))
	}
	b, err := namespace.OpenBucket(ctx, ns, opts...)
	if errors.Is(err, namespace.ErrNoLocalRoot) {
		err = noLocalRoot(err)
	}
	if err != nil {
		return "", nil, err
	}
	return resolved, b, nil
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

// localDeleter returns, for a local namespace, the deleter that removes
// exactly a key's file (namespace.LocalDeleter): fileblob's own Delete
// also removes "<key>.attrs", another object of lakeFS's local blockstore.
// It returns nil for the other kinds.
func localDeleter(ns, blockstorePath string) (*namespace.LocalDeleter, error) {
	n, err := namespace.Parse(ns)
	if err != nil || n.Kind != namespace.Local {
		return nil, err
	}
	return n.LocalDeleter(namespace.WithLocalRoot(blockstorePath))
}
