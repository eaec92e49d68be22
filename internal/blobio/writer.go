package blobio

import (
	"context"
	"errors"

	"gocloud.dev/blob"
)

// Writer writes one object, which appears under its name only when Close
// succeeds: Abort, or cancelling the context it was made with, aborts the
// upload (gocloud defines a blob.Writer whose context ends before Close as
// aborted). Not safe for concurrent use.
type Writer struct {
	cancel context.CancelFunc
	w      *blob.Writer
	n      int64 // the bytes written
}

// NewWriter starts writing the object key of bucket with ctx and opts (as
// blob.Bucket.NewWriter's).
func NewWriter(ctx context.Context, bucket *blob.Bucket, key string, opts *blob.WriterOptions) (*Writer, error) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := bucket.NewWriter(ctx, key, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return &Writer{cancel: cancel, w: w}, nil
}

// Write writes p to the object.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}

// Written counts the bytes written: the object's size once Close
// succeeded.
func (w *Writer) Written() int64 { return w.n }

// Close finishes the object; the object exists if and only if it returns
// nil.
func (w *Writer) Close() error {
	defer w.cancel()
	return w.w.Close()
}

// Abort gives the object up: nothing appears under its name. It returns an
// error of the writer other than the cancellation that aborts it (which
// most callers ignore). Abort after Close does nothing to the object.
func (w *Writer) Abort() error {
	w.cancel()
	if err := w.w.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
