package retention

import (
	"errors"
	"strings"
	"testing"
)

func TestExtendedStore(t *testing.T) {
	for name, bucket := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := NewExtendedStore(bucket, WithStoragePrefix("meta/"))
			if s.Key() != "meta/retention/gc/rules/lakegc.json" {
				t.Errorf("key %q", s.Key())
			}
			if _, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get before Save: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx); err != nil {
				t.Fatalf("Delete of nothing: %v", err)
			}
			days := int32(3)
			e := &Extended{KeepTags: true, StaleBranchDays: 9, Branches: []BranchRule{{Pattern: "tmp-.*", RetentionDays: &days}, {Branch: "main", KeepLast: 4}}}
			if err := s.Save(ctx, e); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != e.String() {
				t.Errorf("Get = %s, want %s", got, e)
			}
			for _, bad := range []*Extended{nil, {StaleBranchDays: -1}, {Branches: []BranchRule{{Pattern: "[", KeepLast: 1}}}} {
				if err := s.Save(ctx, bad); !errors.Is(err, ErrInvalidRules) {
					t.Errorf("Save(%+v): %v, want ErrInvalidRules", bad, err)
				}
			}
			if got, err := s.Get(ctx); err != nil || got.String() != e.String() {
				t.Errorf("a refused Save changed the rules: %v, %v", got, err)
			}
			// A hostile file: too large, or not the form.
			for _, content := range []string{strings.Repeat(" ", MaxExtendedSize+10) + `{"version":1}`, `{"version":1,"x":1}`, ``} {
				if err := bucket.WriteAll(ctx, s.Key(), []byte(content), nil); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Get(ctx); !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), s.Key()) {
					t.Errorf("Get of %.20q: %v, want ErrInvalidRules naming the key", content, err)
				}
			}
			if err := s.Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after Delete: %v", err)
			}
		})
	}
}
