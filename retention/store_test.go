package retention

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// buckets returns one bucket of each kind the store is tested on.
func buckets(t *testing.T) map[string]*blob.Bucket {
	t.Helper()
	file, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*blob.Bucket{"memblob": memblob.OpenBucket(nil), "fileblob": file}
	for _, b := range out {
		t.Cleanup(func() { b.Close() })
	}
	return out
}

func TestRulesStore(t *testing.T) {
	for name, bucket := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := NewRulesStore(bucket)
			if _, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get before Save: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx); err != nil {
				t.Fatalf("Delete of nothing: %v", err)
			}
			rules := &Rules{DefaultRetentionDays: 14, BranchRetentionDays: map[string]int32{"main": 60, "tmp": 0}}
			if err := s.Save(ctx, rules); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !rulesEqual(*got, *rules) {
				t.Errorf("Get = %+v, want %+v", got, rules)
			}
			stored, err := bucket.ReadAll(ctx, "_lakefs/retention/gc/rules/config.json")
			if err != nil {
				t.Fatalf("rules not at lakeFS's key: %v", err)
			}
			want, _ := rules.MarshalBinary()
			if string(stored) != string(want) {
				t.Errorf("stored % x, want % x", stored, want)
			}

			if err := s.Save(ctx, &Rules{DefaultRetentionDays: -1}); !errors.Is(err, ErrInvalidRules) {
				t.Errorf("Save of invalid rules: %v, want ErrInvalidRules", err)
			}
			if got, err := s.Get(ctx); err != nil || !rulesEqual(*got, *rules) {
				t.Errorf("invalid Save changed the rules: %+v, %v", got, err)
			}

			// The zero rules are no rules: lakeFS writes them as an empty
			// file and reads that as no rules.
			if err := s.Save(ctx, &Rules{}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Errorf("zero rules read back as %+v, %v; want ErrNotFound", got, err)
			}
			if stored, err := bucket.ReadAll(ctx, "_lakefs/retention/gc/rules/config.json"); err != nil || len(stored) != 0 {
				t.Errorf("zero rules stored as % x, %v; want an empty file", stored, err)
			}

			if err := s.Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after Delete: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx); err != nil {
				t.Errorf("second Delete: %v", err)
			}
		})
	}
}

func TestRulesStoreFileStates(t *testing.T) {
	for name, bucket := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			key := "repo1/_lakefs/retention/gc/rules/config.json"
			s := NewRulesStore(bucket, WithStoragePrefix("repo1/_lakefs/"))
			if err := bucket.WriteAll(ctx, key, nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Errorf("empty file: %v, want ErrNotFound", err)
			}
			if err := bucket.WriteAll(ctx, key, []byte{0x08}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx); !errors.Is(err, ErrInvalidRules) {
				t.Errorf("truncated file: %v, want ErrInvalidRules", err)
			}
			// The zero rules spelt out, as this package wrote them before it
			// wrote lakeFS's bytes: no rules, the reading that keeps more.
			if err := bucket.WriteAll(ctx, key, []byte{0x08, 0x00}, nil); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx); !errors.Is(err, ErrNotFound) {
				t.Errorf("file 08 00: %+v, %v; want ErrNotFound", got, err)
			}
			lakeFS := []byte{0x12, 0x08, 0x0a, 0x04, 'm', 'a', 'i', 'n', 0x10, 0x5a} // default 0 omitted
			if err := bucket.WriteAll(ctx, key, lakeFS, nil); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx)
			if err != nil || got.DefaultRetentionDays != 0 || !maps.Equal(got.BranchRetentionDays, map[string]int32{"main": 90}) {
				t.Errorf("lakeFS's file read as %+v, %v", got, err)
			}
		})
	}
}

func TestRulesStoreCanceled(t *testing.T) {
	for name, bucket := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			s := NewRulesStore(bucket, WithStoragePrefix(""))
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if err := s.Save(ctx, &Rules{DefaultRetentionDays: 3}); err == nil {
				t.Error("Save with a canceled context succeeded")
			}
			if ok, err := bucket.Exists(t.Context(), "_lakefs/retention/gc/rules/config.json"); err != nil || ok {
				t.Errorf("canceled Save left the rules file (exists %v, %v)", ok, err)
			}
			if _, err := s.Get(ctx); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("Get with a canceled context: %v, want the cancellation", err)
			}
		})
	}
}

// TestRulesStoreErrorText: an invalid rules file is an error that names
// the package and the file once.
func TestRulesStoreErrorText(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(t.Context(), "_lakefs/retention/gc/rules/config.json", []byte{0x08}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := NewRulesStore(bucket).Get(t.Context())
	if !errors.Is(err, ErrInvalidRules) || strings.Count(err.Error(), "retention:") != 1 ||
		!strings.HasPrefix(err.Error(), "retention: rules _lakefs/retention/gc/rules/config.json: invalid rules: ") {
		t.Fatalf("Get of a truncated rules file = %v", err)
	}
}
