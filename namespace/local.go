package namespace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"gocloud.dev/gcerrors"
)

// LocalDeleter deletes objects of a local namespace exactly: the one file
// of each key, and nothing else. gocloud's fileblob, which OpenBucket uses
// for local namespaces, also removes "<key>.attrs" when it deletes a key —
// on lakeFS's local blockstore, which writes no such side files, that is
// another object, possibly live. fileblob never lists an object whose name
// ends in ".attrs", so no mark names one: such objects are kept, never
// deleted.
//
// A key that fileblob would store under another file name (one with a
// control character, "//", a "../" or "./" element, a trailing '/', or
// its escape sequence "__0x") fails with an error whose code is
// FailedPrecondition: its object is kept. A missing file is NotFound.
// DeleteBatch has the signature of sweep.BatchDeleter: pass it as
// lakegc.Config.BatchDeleter or with sweep.WithBatchDeleter. It is safe for
// concurrent use.
type LocalDeleter struct {
	dir string
}

// LocalDeleter returns the deleter of a local namespace's folder, under
// the root given with WithLocalRoot (ErrNoLocalRoot without it); any other
// kind of namespace is an error wrapping ErrInvalidInput.
func (n Namespace) LocalDeleter(opts ...Option) (*LocalDeleter, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if n.Kind != Local {
		return nil, fmt.Errorf("%w: %s is not a local namespace", ErrInvalidInput, n)
	}
	u, err := n.bucketURL(cfg)
	if err != nil {
		return nil, err
	}
	return &LocalDeleter{dir: filepath.FromSlash(u.Path)}, nil
}

// Dir returns the namespace's folder, the folder of the bucket OpenBucket
// opens for it: what sweep.WithLocalListing reads.
func (d *LocalDeleter) Dir() string { return d.dir }

// localError is an error of LocalDeleter with a gocloud code, which package
// sweep reads.
type localError struct {
	code gcerrors.ErrorCode
	err  error
}

func (e *localError) Error() string                 { return e.err.Error() }
func (e *localError) Unwrap() error                 { return e.err }
func (e *localError) ErrorCode() gcerrors.ErrorCode { return e.code }

// ErrUnsafeKey is wrapped by LocalDeleter's error for a key it does not
// delete: its file name is not the key as it is.
var ErrUnsafeKey = errors.New("namespace: key not deleted: its file name is not the key")

// DeleteBatch removes the file of each key, and only it. failed holds the
// keys not deleted, with their errors; err is ctx's, if it ends.
func (d *LocalDeleter) DeleteBatch(ctx context.Context, keys []string) (failed map[string]error, err error) {
	fail := func(k string, e error) {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[k] = e
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !plainKey(k) {
			fail(k, &localError{gcerrors.FailedPrecondition, fmt.Errorf("%w: %q", ErrUnsafeKey, k)})
			continue
		}
		p := filepath.Join(d.dir, filepath.FromSlash(k))
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			fail(k, &localError{gcerrors.FailedPrecondition, fmt.Errorf("namespace: %s is a folder", p)})
			continue
		}
		switch err := os.Remove(p); {
		case err == nil:
		case errors.Is(err, os.ErrNotExist):
			fail(k, &localError{gcerrors.NotFound, err})
		case errors.Is(err, os.ErrPermission):
			fail(k, &localError{gcerrors.PermissionDenied, err})
		default:
			fail(k, err)
		}
	}
	return failed, nil
}

// plainKey reports whether fileblob stores key at the file named by the
// key itself: valid UTF-8, no control character, no backslash, no empty,
// "." or ".." element (so no leading, trailing or doubled '/'), none of
// fileblob's escape sequences, and not a ".attrs" side file.
func plainKey(key string) bool {
	if key == "" || !utf8.ValidString(key) || strings.Contains(key, "__0x") || strings.Contains(key, "../") || strings.HasSuffix(key, ".attrs") {
		return false
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
