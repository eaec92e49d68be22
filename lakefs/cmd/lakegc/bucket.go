package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// namespaces
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob" // gs:// namespaces
	_ "gocloud.dev/blob/s3blob"  // s3:// namespaces
)

// errNamespace is a storage namespace the command cannot open.
var errNamespace = errors.New("storage namespace")

// openNamespace opens the bucket of a repository's storage namespace,
// rooted at it, and returns the namespace as lakeFS spells full addresses
// in it (a local one with the blockstore's absolute path). Credentials are
// the cloud SDKs' own, from the environment.
func openNamespace(ctx context.Context, ns, blockstorePath string) (string, *blob.Bucket, error) {
	ns = strings.TrimRight(ns, "/")
	if p, ok := strings.CutPrefix(ns, "local://"); ok {
		if blockstorePath == "" {
			return "", nil, fmt.Errorf("%w %s is on lakeFS's local blockstore: give its folder (blockstore.local.path) with --blockstore-path or %s", errNamespace, ns, envBlockstorePath)
		}
		root, err := filepath.Abs(blockstorePath)
		if err != nil {
			return "", nil, err
		}
		p = strings.Trim(p, "/")
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return "", nil, fmt.Errorf("%w %q has an empty, \".\" or \"..\" element", errNamespace, ns)
			}
		}
		dir := filepath.Join(root, filepath.FromSlash(p))
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			return "", nil, fmt.Errorf("%w %s: %w", errNamespace, ns, err)
		}
		return "local://" + filepath.ToSlash(dir), b, nil
	}
	u, err := bucketURL(ns)
	if err != nil {
		return "", nil, err
	}
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		return "", nil, fmt.Errorf("%w %s: %w", errNamespace, ns, err)
	}
	return ns, b, nil
}

// bucketURL is the gocloud URL of an object store namespace: s3://bucket/path,
// gs://bucket/path, https://<account>.blob.core.windows.net/<container>/path.
func bucketURL(ns string) (string, error) {
	u, err := url.Parse(ns)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%w %q is not a URI lakegc can open", errNamespace, ns)
	}
	path := strings.Trim(u.Path, "/")
	q := url.Values{}
	var scheme, bucket string
	switch u.Scheme {
	case "s3", "gs":
		scheme, bucket = u.Scheme, u.Host
	case "https", "http":
		account, ok := strings.CutSuffix(u.Host, ".blob.core.windows.net")
		container, rest, _ := strings.Cut(path, "/")
		if !ok || account == "" || container == "" {
			return "", fmt.Errorf("%w %q: an https namespace must be https://<account>.blob.core.windows.net/<container>/<path>", errNamespace, ns)
		}
		scheme, bucket, path = "azblob", container, rest
		q.Set("storage_account", account)
	default:
		return "", fmt.Errorf("%w %q: scheme %q is not s3, gs, https (Azure) or local", errNamespace, ns, u.Scheme)
	}
	if path != "" {
		q.Set("prefix", path+"/")
	}
	out := scheme + "://" + bucket
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	return out, nil
}
