// Package blobio holds the module's ways of doing I/O on a
// gocloud.dev/blob object that the standard blob API leaves to its caller:
//
//   - [ReaderAt] reads an object at offsets, as an io.ReaderAt, for the
//     decoders that want one (Parquet's): package uncommitted's ReadRun and
//     package sweep's Candidates read the Parquet files of a bucket through
//     it. With [WithReadAhead] it fetches the windows after a sequential
//     read concurrently, before they are asked for.
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
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"
)

// ErrClosed is ReaderAt.ReadAt's error after Close.
var ErrClosed = errors.New("blobio: read of a closed ReaderAt")

// ReaderAt reads an object of a known size by range reads of at least a
// window's bytes, and serves reads within the last window read from memory:
// a decoder's many small reads of nearby bytes (Parquet's page headers and
// pages) cost one request a window. A read past the object's end returns
// what there is and io.EOF; an error of the bucket is returned as it is,
// and a range read that returns fewer bytes than asked is an error
// (io.ErrUnexpectedEOF), never a short window. Safe for concurrent use.
//
// # Read-ahead
//
// With WithReadAhead(n), a ReaderAt serves one sequential reader without
// waiting a request's latency for each window: when a read misses the
// window in memory for the first time, at offset 0, or where the window
// in memory ends, the ReaderAt starts a stream of windows from there (up
// to the object's end), one window after the
// other, each fetched by its own goroutine, n at most at once; every
// window read from the stream starts the fetch of the next. A read that
// falls inside the stream, even past a few windows (a decoder skipping a
// column), is served from it, and the windows it skipped are cancelled;
// any other miss (a jump back or far ahead: random access) cancels the
// stream and reads what it needs as without read-ahead, windows of its
// own, fetched together when the read spans several. Reads are served in
// order, each from the window that holds its bytes, so what a ReaderAt
// returns does not depend on read-ahead.
//
// Memory is at most n+1 windows: n being fetched, waiting to be read, or
// cancelled and not yet ended (a window holds its place among the n until
// it left the stream and its fetch ended), and the window being read. A window's error (the
// bucket's, its context's, a short range read) is returned by the read
// that needs it, and cancels the stream: the next read fetches again.
// Close cancels the stream and waits for its goroutines; a ReaderAt with
// read-ahead must be closed (or its context cancelled) when no longer
// read, or its fetches run to their end unread.
type ReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64
	window int64
	ahead  int

	mu      sync.Mutex
	winOff  int64
	win     []byte
	closed  bool
	fetched bool // by the read-ahead, once

	// The read-ahead: queue holds windows being fetched or fetched, in
	// order and contiguous, from queue[0].off to queueEnd; stream says
	// whether reading from it fetches the next windows. A window holds one
	// of the slots from its launch until it has left the queue and its
	// fetch has ended; wg counts the fetches.
	queue    []*pending
	queueEnd int64
	stream   bool
	slots    chan struct{}
	wg       sync.WaitGroup
}

// pending is a window of the read-ahead: its fetch sets data and err and
// then closes done. refs counts the queue and the fetch: the last to let
// go of it frees its slot.
type pending struct {
	off    int64
	data   []byte
	err    error
	done   chan struct{}
	cancel context.CancelFunc
	refs   atomic.Int32
}

// ReaderOption configures NewReaderAt.
type ReaderOption func(*ReaderAt)

// WithReadAhead makes a ReaderAt fetch up to n windows ahead of a
// sequential reader, concurrently: see ReaderAt, "Read-ahead". n <= 0, or
// a window of 0, means no read-ahead.
func WithReadAhead(n int) ReaderOption {
	return func(r *ReaderAt) { r.ahead = max(n, 0) }
}

// NewReaderAt returns a ReaderAt of the object key of size bytes in bucket, whose
// range reads are of at least window bytes (0: exactly what each read asks
// for), made with ctx.
func NewReaderAt(ctx context.Context, bucket *blob.Bucket, key string, size int64, window int, opts ...ReaderOption) *ReaderAt {
	r := &ReaderAt{ctx: ctx, bucket: bucket, key: key, size: size, window: int64(max(window, 0))}
	for _, opt := range opts {
		opt(r)
	}
	if r.window == 0 {
		r.ahead = 0
	}
	if r.ahead > 0 {
		r.slots = make(chan struct{}, r.ahead)
	}
	return r
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt says.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	switch {
	case off >= r.winOff && off+want <= r.winOff+int64(len(r.win)):
		copy(p, r.win[off-r.winOff:])
	case r.ahead > 0:
		if err := r.readAhead(p[:want], off); err != nil {
			return 0, err
		}
	default:
		if err := r.fill(off, want); err != nil {
			return 0, err
		}
		copy(p, r.win[off-r.winOff:])
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}

// Close cancels the read-ahead's fetches and waits for them to end. Reads
// after Close fail with ErrClosed. It returns nil.
func (r *ReaderAt) Close() error {
	r.mu.Lock()
	r.closed = true
	r.drop()
	r.win = nil
	r.mu.Unlock()
	r.wg.Wait()
	return nil
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

// readAhead reads p at off, window by window, from the stream of windows;
// it holds r.mu.
func (r *ReaderAt) readAhead(p []byte, off int64) error {
	pos, end := off, off+int64(len(p))
	for pos < end {
		if pos >= r.winOff && pos < r.winOff+int64(len(r.win)) {
			pos += int64(copy(p[pos-off:], r.win[pos-r.winOff:]))
			continue
		}
		if len(r.queue) == 0 || pos < r.queue[0].off || pos >= r.queueEnd {
			// The first miss, a miss at the start or where the window
			// ends starts a stream; any other reads its own windows.
			sequential := !r.fetched || pos == 0 || (len(r.win) > 0 && pos == r.winOff+int64(len(r.win)))
			r.fetched = true
			r.drop()
			r.stream = sequential
			r.queueEnd = pos
			need := int((end - pos + r.window - 1) / r.window)
			if sequential {
				need = r.ahead
			}
			for range min(need, r.ahead) {
				r.launch()
			}
		}
		// Skip the windows before pos, and read the one holding it.
		for r.queue[0].off+int64(len(r.queue[0].data)) <= pos {
			r.leave(r.queue[0])
			r.queue = r.queue[1:]
		}
		w := r.queue[0]
		<-w.done
		r.leave(w)
		r.queue = r.queue[1:]
		if w.err != nil {
			r.drop()
			r.win = r.win[:0]
			return w.err
		}
		r.win, r.winOff = w.data, w.off
		if r.stream {
			for len(r.queue) < r.ahead && r.queueEnd < r.size {
				r.launch()
			}
		}
	}
	return nil
}

// launch starts the fetch of the window at queueEnd, once fewer than
// r.ahead fetches run; it holds r.mu.
func (r *ReaderAt) launch() {
	if r.queueEnd >= r.size {
		return
	}
	r.slots <- struct{}{}
	ctx, cancel := context.WithCancel(r.ctx)
	w := &pending{off: r.queueEnd, data: make([]byte, min(r.window, r.size-r.queueEnd)), done: make(chan struct{}), cancel: cancel}
	w.refs.Store(2)
	r.queue = append(r.queue, w)
	r.queueEnd += int64(len(w.data))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		w.err = fetch(ctx, r.bucket, r.key, w.off, w.data)
		close(w.done)
		r.release(w)
	}()
}

// fetch reads len(dst) bytes of key at off into dst.
func fetch(ctx context.Context, bucket *blob.Bucket, key string, off int64, dst []byte) error {
	rr, err := bucket.NewRangeReader(ctx, key, off, int64(len(dst)), nil)
	if err != nil {
		return err
	}
	defer rr.Close()
	_, err = io.ReadFull(rr, dst)
	return err
}

// leave takes w out of the queue (the caller removes it): its fetch is
// cancelled if it still runs; it holds r.mu.
func (r *ReaderAt) leave(w *pending) {
	w.cancel()
	r.release(w)
}

// release lets go of w, for the queue or for its fetch, and frees its slot
// when both have.
func (r *ReaderAt) release(w *pending) {
	if w.refs.Add(-1) == 0 {
		<-r.slots
	}
}

// drop cancels the windows of the read-ahead; it holds r.mu.
func (r *ReaderAt) drop() {
	for _, w := range r.queue {
		r.leave(w)
	}
	r.queue = r.queue[:0]
	r.stream = false
}
