package retention

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
)

// ErrNotFound is wrapped by the errors that say a repository has no rules:
// [RulesStore.Get] returns it when the rules file is missing or holds the
// zero rules (0 days and no branch rules, an empty file as lakeFS writes
// them), [Rules.UnmarshalBinary] for bytes that decode to the zero rules,
// and [ActiveCommits] for the zero rules. lakeFS answers no rules with 404
// and its GC then keeps every commit; a GC answers ErrNotFound the same way.
var ErrNotFound = errors.New("retention: no rules")

// DefaultStoragePrefix is the prefix of lakeFS's own objects inside a
// repository's storage namespace.
const DefaultStoragePrefix = layout.StoragePrefix // "_lakefs"

// A RulesStore reads and writes a repository's [Rules] in its bucket, at
// <prefix>/retention/gc/rules/config.json, in the protobuf form lakeFS uses.
// It is safe for concurrent use; concurrent Saves leave one of the rules.
type RulesStore struct {
	bucket *blob.Bucket
	key    string
}

// An Option configures a [RulesStore].
type Option func(*storeOptions)

type storeOptions struct {
	prefix string
}

// WithStoragePrefix sets the prefix under which the rules file lives, the
// place of lakeFS's objects in the storage namespace ([DefaultStoragePrefix]
// unless set). Trailing slashes are ignored; "" is [DefaultStoragePrefix].
func WithStoragePrefix(prefix string) Option {
	return func(o *storeOptions) { o.prefix = prefix }
}

// NewRulesStore returns a store of the rules in bucket. The caller keeps
// ownership of bucket and closes it.
func NewRulesStore(bucket *blob.Bucket, opts ...Option) *RulesStore {
	o := storeOptions{prefix: DefaultStoragePrefix}
	for _, opt := range opts {
		opt(&o)
	}
	return &RulesStore{bucket: bucket, key: layout.RulesKey(storagePrefixOr(o.prefix))}
}

// storagePrefixOr drops a prefix's trailing slashes (layout's paths join
// it with one, as lakeFS's "%s/retention/..." templates do); an empty
// prefix is DefaultStoragePrefix.
func storagePrefixOr(prefix string) string {
	prefix = strings.TrimRight(prefix, "/")
	if prefix == "" {
		prefix = DefaultStoragePrefix
	}
	return prefix
}

// Get reads the rules. A missing rules file, an empty one, and one holding
// the zero rules are an error wrapping [ErrNotFound] (no rules: a GC keeps
// every commit); a file that does not decode is an error wrapping
// [ErrInvalidRules].
func (s *RulesStore) Get(ctx context.Context) (*Rules, error) {
	b, err := s.bucket.ReadAll(ctx, s.key)
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Some buckets answer "not found" to a canceled read: that must not
		// read as a repository without rules.
		return nil, fmt.Errorf("retention: read rules %s: %w", s.key, ctxErr)
	}
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNotFound, s.key)
	}
	if err != nil {
		return nil, fmt.Errorf("retention: read rules %s: %w", s.key, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrNotFound, s.key)
	}
	var r Rules
	if err := r.UnmarshalBinary(b); errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %s holds 0 days and no branch rules", ErrNotFound, s.key)
	} else if err != nil {
		return nil, wrapOp("rules "+s.key, err)
	}
	return &r, nil
}

// Save validates r and replaces the stored rules with it. Invalid rules are
// an error wrapping [ErrInvalidRules] and leave the stored rules unchanged; a
// canceled write leaves them unchanged too. The zero rules are written, as
// lakeFS writes them, as an empty file: no rules.
func (s *RulesStore) Save(ctx context.Context, r *Rules) error {
	b, err := r.MarshalBinary() // validates
	if err != nil {
		return err
	}
	opts := &blob.WriterOptions{ContentType: "application/octet-stream"}
	if err := s.bucket.WriteAll(ctx, s.key, b, opts); err != nil {
		return fmt.Errorf("retention: write rules %s: %w", s.key, err)
	}
	return nil
}

// Delete removes the stored rules. Deleting rules that do not exist is not
// an error.
func (s *RulesStore) Delete(ctx context.Context) error {
	err := s.bucket.Delete(ctx, s.key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("retention: delete rules %s: %w", s.key, err)
	}
	return nil
}
