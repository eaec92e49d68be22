package lakegc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/uncommitted"
)

// ErrNamespaceMismatch is wrapped by the error of a cycle whose Bucket,
// Namespace and the addresses the host stores do not name the same place in
// the same spelling: a full address that names the namespace's place in
// another spelling (another scheme for S3 such as s3a, a file URI's other
// forms, local:// with the folder's absolute path, ".." or doubled
// slashes, percent-escapes, a symbolic link to the folder), a full address
// outside the namespace whose tail is an object of the bucket, or
// lakegc's marker naming another namespace. Nothing is marked: set
// Config.Namespace as the host spells its addresses.
var ErrNamespaceMismatch = errors.New("lakegc: the namespace is not spelled as the host's addresses")

// ErrNoNamespaceMarker is wrapped by the error of a cycle whose Bucket holds
// no repository marker: neither lakeFS's (<StoragePrefix>/dummy, or dummy at
// the top level with lakeFS's words for lakeFS before v0.108) nor lakegc's
// (<StoragePrefix>/lakegc.json, written by InitNamespace). Such a bucket is
// likely rooted at the wrong folder — a shared bucket's root, the parent of
// the repository's folder — where the mark would take other tenants'
// objects for garbage. Nothing is read or written.
var ErrNoNamespaceMarker = errors.New("lakegc: no repository marker in the bucket")

// markerName is lakegc's marker, under the storage prefix.
const markerName = "lakegc.json"

// maxMarkerSize bounds what the marker check reads.
const maxMarkerSize = 64 << 10

// namespaceMarker is the content of lakegc's marker.
type namespaceMarker struct {
	// Namespace is the namespace's URI, as the host spells its addresses.
	Namespace string `json:"namespace"`
}

// InitNamespace writes lakegc's marker of cfg.Namespace into cfg.Bucket,
// at <StoragePrefix>/lakegc.json: a host calls it when it creates a
// repository, as lakeFS writes its own marker, so that Collect can tell a
// bucket rooted at the repository's folder from one rooted elsewhere. Only
// Bucket, Namespace, StoragePrefix and DataPrefix of cfg are used.
//
// A marker of the same namespace (the same spelling, scheme and authority
// regardless of case) is left as it is; one of another namespace is not
// overwritten, and the error wraps ErrNamespaceMismatch. The marker is
// written only if absent where the bucket's driver supports it (a
// conditional write: S3, GCS, Azure, memblob), so two hosts racing to mark
// one folder cannot both succeed with different namespaces. fileblob's
// conditional write checks, then renames, and a driver without one (or an
// S3-compatible server that ignores If-None-Match) overwrites: two racing
// writes may then both succeed, and the loser's Collect fails with
// ErrNamespaceMismatch. A lakeFS repository created bare (for a refs
// restore) has no marker of lakeFS's: after checking that the bucket is
// rooted at its folder, write lakegc's with InitNamespace.
func InitNamespace(ctx context.Context, cfg Config) error {
	if cfg.Bucket == nil {
		return fmt.Errorf("%w: no Bucket", ErrInvalidInput)
	}
	if cfg.StoragePrefix == "" {
		cfg.StoragePrefix = DefaultStoragePrefix
	}
	ns, err := nsaddr.New(cfg.Namespace, DefaultDataPrefix)
	if err != nil {
		return fmt.Errorf("%w: Namespace %q is not a URI such as s3://bucket/repo", ErrInvalidInput, cfg.Namespace)
	}
	if cfg.DataPrefix == "" {
		cfg.DataPrefix = DefaultDataPrefix
	}
	if err := validPrefixes(cfg.StoragePrefix, cfg.DataPrefix); err != nil {
		return err
	}
	key := cfg.StoragePrefix + "/" + markerName
	b, err := json.Marshal(namespaceMarker{Namespace: ns.String()})
	if err != nil {
		return err
	}
	for range 2 {
		have, found, err := readMarker(ctx, cfg.Bucket, key)
		if err != nil {
			return fmt.Errorf("lakegc: init namespace: %w", err)
		}
		if found {
			if !ns.SameSpelling(have) {
				return fmt.Errorf("%w: %s marks namespace %q, not %q", ErrNamespaceMismatch, key, have, ns)
			}
			return nil
		}
		err = cfg.Bucket.WriteAll(ctx, key, append(b, '\n'), &blob.WriterOptions{ContentType: "application/json", IfNotExist: true})
		switch gcerrors.Code(err) {
		case gcerrors.OK:
			return nil
		case gcerrors.FailedPrecondition:
			continue // written meanwhile: read it
		case gcerrors.Unimplemented:
			// The driver has no conditional write: the read above found none.
			err = cfg.Bucket.WriteAll(ctx, key, append(b, '\n'), &blob.WriterOptions{ContentType: "application/json"})
		}
		if err != nil {
			return fmt.Errorf("lakegc: init namespace: %w", err)
		}
		return nil
	}
	return fmt.Errorf("lakegc: init namespace: %s keeps changing", key)
}

// readMarker reads lakegc's marker at key: found is false when there is
// none.
func readMarker(ctx context.Context, bucket *blob.Bucket, key string) (namespace string, found bool, err error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound && ctx.Err() == nil {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxMarkerSize+1))
	if err != nil {
		return "", false, err
	}
	var m namespaceMarker
	if len(b) > maxMarkerSize {
		return "", false, fmt.Errorf("%w: %s is not lakegc's marker: over %d bytes", ErrNamespaceMismatch, key, maxMarkerSize)
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return "", false, fmt.Errorf("%w: %s is not lakegc's marker: %v", ErrNamespaceMismatch, key, err)
	}
	if m.Namespace == "" {
		return "", false, fmt.Errorf("%w: %s is not lakegc's marker: no namespace", ErrNamespaceMismatch, key)
	}
	return m.Namespace, true, nil
}

// checkMarker proves, before anything is read or written, that the bucket
// is rooted at a repository's folder: it holds lakegc's marker of this
// namespace, or lakeFS's marker.
func (c *cycle) checkMarker(ctx context.Context) error {
	key := c.cfg.StoragePrefix + "/" + markerName
	have, found, err := readMarker(ctx, c.cfg.Bucket, key)
	if err != nil {
		return fmt.Errorf("lakegc: namespace marker: %w", err)
	}
	if found {
		if !c.ns.SameSpelling(have) {
			return fmt.Errorf("%w: the bucket's marker %s names namespace %q, Config.Namespace is %q", ErrNamespaceMismatch, key, have, c.cfg.Namespace)
		}
		return nil
	}
	ok, err := c.cfg.Bucket.Exists(ctx, c.cfg.StoragePrefix+"/"+layout.MarkerName)
	if err == nil && !ok {
		ok, err = legacyMarker(ctx, c.cfg.Bucket)
	}
	if err != nil {
		return fmt.Errorf("lakegc: namespace marker: %w", err)
	}
	if ok {
		return nil
	}
	return fmt.Errorf("%w: neither lakeFS's %s/%s (or %s with lakeFS's words, before v0.108) nor lakegc's %s: is Bucket rooted at the repository's folder, not a parent? "+
		"A host writes lakegc's marker with InitNamespace when it creates a repository; a lakeFS repository created bare has none (lakegc gc --init-namespace writes one)",
		ErrNoNamespaceMarker, c.cfg.StoragePrefix, layout.MarkerName, layout.MarkerName, key)
}

// legacyDummy is what lakeFS before v0.108 wrote in its marker at the
// namespace's top level (up to v0.3x with a trailing space). lakeFS since
// writes other words at _lakefs/dummy.
const legacyDummy = "this is dummy data - created by lakeFS in order to check accessibility"

// legacyMarker reports whether the bucket's top level holds the marker of
// lakeFS before v0.108: "dummy" with lakeFS's words. A "dummy" of other
// content is not: a bucket rooted at a repository's _lakefs folder has
// lakeFS's current marker there, and a shared bucket may hold any file of
// that name.
func legacyMarker(ctx context.Context, bucket *blob.Bucket) (bool, error) {
	r, err := bucket.NewReader(ctx, layout.MarkerName, nil)
	if gcerrors.Code(err) == gcerrors.NotFound && ctx.Err() == nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, int64(2*len(legacyDummy))))
	if err != nil {
		return false, err
	}
	return strings.TrimRight(string(b), " ") == legacyDummy, nil
}

// maxForeignSample is how many foreign addresses the report names.
const maxForeignSample = 10

// foreign counts the full addresses outside the namespace: imports, which
// are legitimately outside. add is safe for concurrent use (the mark may
// read several committed parts at once: sweep.Parts.ReadAhead); count and
// sample are read once the mark is done.
type foreign struct {
	mu     sync.Mutex
	count  int64
	sample []string
}

func (f *foreign) add(address string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	if len(f.sample) < maxForeignSample {
		f.sample = append(f.sample, redactUserinfo(address))
	}
}

// redactUserinfo hides the userinfo of a URI ("s3://key:secret@bucket/x"
// becomes "s3://REDACTED@bucket/x"), so a report or a log never carries a
// credential an address held.
func redactUserinfo(address string) string {
	i := strings.Index(address, "://")
	if i < 0 {
		return address
	}
	rest := address[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return address
	}
	return address[:i+3] + "REDACTED" + rest[at:]
}

// mismatch wraps an error of another package that says the namespace is
// spelled differently with ErrNamespaceMismatch.
func mismatch(err error) error {
	if err != nil && !errors.Is(err, ErrNamespaceMismatch) &&
		(errors.Is(err, nsaddr.ErrMismatch) || errors.Is(err, uncommitted.ErrNamespaceMismatch)) {
		return fmt.Errorf("%w: %w", ErrNamespaceMismatch, err)
	}
	return err
}

// relativeAddresses makes the host's addresses keys of the namespace,
// by the one rule of package nsaddr: a relative address is passed as it
// is (one the mark cannot match fails it), and on S3 also as lakeFS before
// v0.110 cleaned it (nsaddr.CleanedRelative); a full one under the namespace
// gives every key its object may be stored at; one that names the
// namespace in another spelling fails the mark (ErrNamespaceMismatch); one
// outside it (an import) is counted, and its tail, when it ends with a key
// shape lakeFS writes, is kept — and probed, for the first distinct tails:
// an object of the bucket there means the host spells the namespace
// differently. what names the input in errors.
func (c *cycle) relativeAddresses(ctx context.Context, what string, seq iter.Seq2[string, error]) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if seq == nil {
			yield("", fmt.Errorf("%s addresses: the host returned a nil iterator", what))
			return
		}
		var keys []string
		// Each input probes its own first tails.
		prober := nsaddr.NewProber(c.cfg.Bucket, c.ns.String(), nsaddr.DefaultProbes)
		for a, err := range seq {
			if err != nil {
				yield("", fmt.Errorf("%s addresses: %w", what, err))
				return
			}
			if !nsaddr.IsFull(a) {
				if !yield(a, nil) {
					return
				}
				if k, ok := c.ns.CleanedRelative(a); ok && !yield(k, nil) {
					return
				}
				continue
			}
			var class nsaddr.Class
			keys, class, err = c.ns.Check(keys[:0], a)
			if err == nil && class == nsaddr.Outside {
				c.foreign.add(a)
				if len(keys) > 0 {
					err = prober.Probe(ctx, a, keys[0])
				}
			}
			if err != nil {
				yield("", mismatch(fmt.Errorf("%s addresses: %w", what, err)))
				return
			}
			for _, k := range keys {
				if !yield(k, nil) {
					return
				}
			}
		}
	}
}
