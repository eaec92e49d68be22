package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

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
// never saw. A probe file written into the folder must read back through
// the bucket. The probe is written into the folder, never through the
// bucket: a bucket rooted elsewhere (a parent folder, another
// repository's) gets nothing written into it, as the marker check
// promises before the bucket is known to be the repository's. The probe
// goes under the storage prefix with a random name of no shape lakeFS
// writes (a concurrent run sees an unrecognized, young object), is created
// only if absent, and is removed whatever the outcome, the context's end
// included — and so is the storage prefix's folder if the probe made it
// and it is still empty. Other namespaces need no check: the sweep deletes
// through the bucket itself.
func sameLocalFolder(ctx context.Context, bucket *blob.Bucket, ns, blockstorePath string) (err error) {
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
	folder := filepath.FromSlash(dir.Path)
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := storagePrefix + "/lakegc-probe-" + hex.EncodeToString(nonce[:])
	name := filepath.Join(folder, filepath.FromSlash(key))
	made, err := writeProbe(name, nonce[:])
	if err != nil {
		return fmt.Errorf("host: probe of the namespace's folder %s: %w", folder, err)
	}
	defer func() {
		if rmErr := os.Remove(name); rmErr != nil && err == nil {
			err = fmt.Errorf("host: probe of the namespace's folder %s: %w", folder, rmErr)
		}
		if made {
			_ = os.Remove(filepath.Dir(name)) // only if still empty
		}
	}()
	r, err := bucket.NewReader(ctx, key, nil)
	var got []byte
	if err == nil {
		got, err = io.ReadAll(io.LimitReader(r, int64(len(nonce))+1))
		r.Close()
	}
	if gcerrors.Code(err) == gcerrors.NotFound && ctx.Err() == nil || err == nil && !bytes.Equal(got, nonce[:]) {
		return fmt.Errorf("%w: the bucket given for %s is not the folder %s, where the sweep deletes (a file written there does not read back through it): pass the bucket OpenNamespace opens, or none", ErrInvalidInput, ns, folder)
	}
	if err != nil {
		return fmt.Errorf("host: probe of the given bucket: %w", err)
	}
	return nil
}

// writeProbe creates the file name, which must not exist, holding b. It
// makes the folder the file is in (the namespace's storage prefix) if
// absent, and says so; on an error it leaves neither behind.
func writeProbe(name string, b []byte) (madeDir bool, err error) {
	if err := os.Mkdir(filepath.Dir(name), 0o755); err == nil {
		madeDir = true
	} else if !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(name)
		}
	}
	if err != nil && madeDir {
		_ = os.Remove(filepath.Dir(name))
	}
	return madeDir, err
}
