package faults

import (
	"context"
	"errors"
	"testing"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// The callers' Before hooks reach the inner bucket: one that fails stops
// the call there, as it would without the wrapper. The inner bucket is an
// s3sim store, which calls every hook (memblob does not call BeforeList).
func TestBeforeHooks(t *testing.T) {
	ctx := context.Background()
	store, err := s3sim.New(nil, s3sim.WithLatency(s3sim.NoLatency))
	if err != nil {
		t.Fatal(err)
	}
	inner := store.Bucket()
	defer inner.Close()
	if err := inner.WriteAll(ctx, "k/001", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	fb, err := faultblob.New(inner)
	if err != nil {
		t.Fatal(err)
	}
	b := fb.Bucket()
	stop := errors.New("stop")
	hook := func(func(any) bool) error { return stop }
	if err := b.WriteAll(ctx, "hooked", []byte("x"), &blob.WriterOptions{BeforeWrite: hook}); !errors.Is(err, stop) {
		t.Errorf("write with a failing BeforeWrite = %v", err)
	}
	if ok, _ := inner.Exists(ctx, "hooked"); ok {
		t.Error("a write whose BeforeWrite failed reached the inner bucket")
	}
	if _, err := b.NewRangeReader(ctx, "k/001", 0, -1, &blob.ReaderOptions{BeforeRead: hook}); !errors.Is(err, stop) {
		t.Errorf("read with a failing BeforeRead = %v", err)
	}
	if _, _, err := b.ListPage(ctx, blob.FirstPageToken, 10, &blob.ListOptions{BeforeList: hook}); !errors.Is(err, stop) {
		t.Errorf("list with a failing BeforeList = %v", err)
	}
	if err := b.Copy(ctx, "copied", "k/001", &blob.CopyOptions{BeforeCopy: hook}); !errors.Is(err, stop) {
		t.Errorf("copy with a failing BeforeCopy = %v", err)
	}
	if ok, _ := inner.Exists(ctx, "copied"); ok {
		t.Error("a copy whose BeforeCopy failed reached the inner bucket")
	}
}
