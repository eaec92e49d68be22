package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
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
		return "", fmt.Errorf("%w: BlockstorePath %q: %w", ErrInvalidInput, blockstorePath, err)
	}
	return lakefs.AddressNamespace(ns, root)
}

// sameLocalFolder checks that a bucket given for a namespace on the local
// blockstore is the namespace's folder under blockstorePath: the sweep
// deletes files in that folder (localDeleter), by the keys the mark listed
// through the bucket, so another folder's listing would delete files it
// never saw. A file written through the bucket must read back from the
// folder. Other namespaces need no check: the sweep deletes through the
// bucket itself.
func sameLocalFolder(ctx context.Context, bucket *blob.Bucket, ns, blockstorePath string) error {
	n, err := namespace.Parse(ns)
	if err != nil || n.Kind != namespace.Local {
		return err
	}
	root, err := filepath.Abs(blockstorePath)
	if err != nil {
		return fmt.Errorf("%w: BlockstorePath %q: %w", ErrInvalidInput, blockstorePath, err)
	}
	u, err := n.BucketURL(namespace.WithLocalRoot(root))
	if err != nil {
		return err
	}
	dir, err := url.Parse(u)
	if err != nil {
		return err
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := storagePrefix + "/lakegc-probe-" + hex.EncodeToString(nonce[:])
	if err := bucket.WriteAll(ctx, key, nonce[:], nil); err != nil {
		return fmt.Errorf("host: probe of the given bucket: %w", err)
	}
	got, readErr := os.ReadFile(filepath.Join(filepath.FromSlash(dir.Path), filepath.FromSlash(key)))
	if err := bucket.Delete(ctx, key); err != nil {
		return fmt.Errorf("host: probe of the given bucket: %w", err)
	}
	if readErr != nil || !bytes.Equal(got, nonce[:]) {
		return fmt.Errorf("%w: the bucket given for %s is not the folder %s, where the sweep deletes (a file written through it is not there): pass the bucket OpenNamespace opens, or none", ErrInvalidInput, ns, dir.Path)
	}
	return nil
}
