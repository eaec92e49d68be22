package blobio

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// TestSmallObjects: ReadAll refuses one byte over its limit, WriteJSON
// writes a line, Remove deletes what is there and takes a missing object
// (as its caller reads the store's answer) for removed, RemoveAll deletes
// what is under its prefix only.
func TestSmallObjects(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := WriteJSON(ctx, b, "k", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(ctx, b, "k", 8)
	if err != nil || string(got) != "{\"a\":1}\n" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	if _, err := ReadAll(ctx, b, "k", 7); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAll over its limit: %v", err)
	}
	if _, err := ReadAll(ctx, b, "none", 7); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("ReadAll of a missing object: %v", err)
	}
	notFound := func(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }
	for range 2 {
		if err := Remove(ctx, b, "k", notFound); err != nil {
			t.Fatal(err)
		}
		if ok, _ := b.Exists(ctx, "k"); ok {
			t.Fatal("Remove left the object")
		}
	}
	for _, k := range []string{"d/a", "d/b/c", "e"} {
		if err := WriteJSON(ctx, b, k, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveAll(ctx, b, "d/", notFound); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{"d/a": false, "d/b/c": false, "e": true} {
		if ok, _ := b.Exists(ctx, k); ok != want {
			t.Errorf("after RemoveAll(d/), %s there: %v", k, ok)
		}
	}
	// An answer the caller does not read as not found is an error.
	if err := Remove(ctx, b, "k", func(error) bool { return false }); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Remove with a not found the caller refuses: %v", err)
	}
}
