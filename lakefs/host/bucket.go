package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // https://<account>.blob.core.windows.net namespaces
	_ "gocloud.dev/blob/fileblob"  // local:// namespaces
	_ "gocloud.dev/blob/gcsblob"   // gs:// namespaces
	_ "gocloud.dev/blob/s3blob"    // s3:// namespaces

	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/namespace"
)

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
