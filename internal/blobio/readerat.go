// Package blobio holds the module's ways of doing I/O on a
// gocloud.dev/blob object that the standard blob API leaves to its caller:
//
//   - [ReaderAt] reads an object at offsets, as an io.ReaderAt, for the
//     decoders that want one (Parquet's): package uncommitted's ReadRun and
//     package sweep's Candidates read the Parquet files of a bucket through
//     it.
//   - [Writer] writes an object that appears only when its Close succeeds:
//     Abort, or a failed write, leaves nothing under its name. Every report,
//     record and run file the module writes goes through one.
//
// Besides, small helpers: [ReadAll] reads an object whole within a limit,
// [WriteJSON] writes a line of JSON, [Remove] and [RemoveAll] delete an
// object, or those under a prefix, that may be gone already, as their
// caller reads the store's answers.
package blobio

import (
	"context"
	"fmt"
	"io"
	"sync"

	"gocloud.dev/blob"
)

// ReaderAt reads an object of a known size by range reads of at least a
// window's bytes, and serves reads within the last range read from memory:
// a decoder's many small reads of nearby bytes (Parquet's page headers and
// pages) cost one request a window. A read past the object's end returns
// what there is and io.EOF; an error of the bucket is returned as it is.
// Safe for concurrent use.
type ReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64
	window int64

	mu     sync.Mutex
	winOff int64
	win    []byte
}

// NewReaderAt returns a ReaderAt of the object key of size bytes in bucket, whose
// range reads are of at least window bytes (0: exactly what each read asks
// for), made with ctx.
func NewReaderAt(ctx context.Context, bucket *blob.Bucket, key string, size int64, window int) *ReaderAt {
	return &ReaderAt{ctx: ctx, bucket: bucket, key: key, size: size, window: int64(max(window, 0))}
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt says.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	want := min(int64(len(p)), r.size-off)
	if off < r.winOff || off+want > r.winOff+int64(len(r.win)) {
		if err := r.fill(off, want); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.win[off-r.winOff:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill reads the range from off of at least want and window bytes, within
// the object.
func (r *ReaderAt) fill(off, want int64) error {
	length := min(max(want, r.window), r.size-off)
	rr, err := r.bucket.NewRangeReader(r.ctx, r.key, off, length, nil)
	if err != nil {
		return err
	}
	defer rr.Close()
	if int64(cap(r.win)) < length {
		r.win = make([]byte, length)
	}
	r.win = r.win[:length]
	if _, err := io.ReadFull(rr, r.win); err != nil {
		r.win = r.win[:0]
		return err
	}
	r.winOff = off
	return nil
}
