package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
)

// An ExtendedStore reads and writes a repository's [Extended] rules in its
// bucket, at <prefix>/retention/gc/rules/lakegc.json, beside lakeFS's rules
// file, in the JSON form of [Extended.MarshalJSON]. lakeFS never reads it.
// It is safe for concurrent use; concurrent Saves leave one of the rules.
type ExtendedStore struct {
	bucket *blob.Bucket
	key    string
}

// NewExtendedStore returns a store of the extended rules in bucket; it
// takes [WithStoragePrefix]. The caller keeps ownership of bucket and
// closes it.
func NewExtendedStore(bucket *blob.Bucket, opts ...Option) *ExtendedStore {
	o := storeOptions{prefix: DefaultStoragePrefix}
	for _, opt := range opts {
		opt(&o)
	}
	return &ExtendedStore{bucket: bucket, key: layout.ExtendedRulesKey(o.prefix)}
}

// Key returns the key of the rules file in the bucket.
func (s *ExtendedStore) Key() string { return s.key }

// Get reads the extended rules. A missing file is an error wrapping
// [ErrNotFound]; a file larger than [MaxExtendedSize] or one that does not
// decode is an error wrapping [ErrInvalidRules]. It reads at most
// MaxExtendedSize+1 bytes whatever the file's size.
func (s *ExtendedStore) Get(ctx context.Context) (*Extended, error) {
	r, err := s.bucket.NewReader(ctx, s.key, nil)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("retention: read extended rules %s: %w", s.key, ctxErr)
	}
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNotFound, s.key)
	}
	if err != nil {
		return nil, fmt.Errorf("retention: read extended rules %s: %w", s.key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, MaxExtendedSize+1))
	if err != nil {
		return nil, fmt.Errorf("retention: read extended rules %s: %w", s.key, err)
	}
	var e Extended
	if err := e.UnmarshalJSON(b); err != nil {
		return nil, wrapOp(s.key, err)
	}
	return &e, nil
}

// Save validates e and replaces the stored extended rules with it. Invalid
// rules are an error wrapping [ErrInvalidRules] and leave the stored rules
// unchanged.
func (s *ExtendedStore) Save(ctx context.Context, e *Extended) error {
	if e == nil {
		return fmt.Errorf("%w: nil extended rules", ErrInvalidRules)
	}
	b, err := json.MarshalIndent(e, "", "  ") // validates
	if err != nil {
		return err
	}
	opts := &blob.WriterOptions{ContentType: "application/json"}
	if err := s.bucket.WriteAll(ctx, s.key, append(b, '\n'), opts); err != nil {
		return fmt.Errorf("retention: write extended rules %s: %w", s.key, err)
	}
	return nil
}

// Delete removes the stored extended rules. Deleting rules that do not
// exist is not an error.
func (s *ExtendedStore) Delete(ctx context.Context) error {
	err := s.bucket.Delete(ctx, s.key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("retention: delete extended rules %s: %w", s.key, err)
	}
	return nil
}
