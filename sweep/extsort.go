package sweep

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// This file sorts keys in bounded memory: keys are gathered in a block of
// fixed size, each full block is sorted and written to a run file, and the
// runs are merged. A run file is a sequence of keys, each preceded by its
// length as a uvarint.

// keyIter is a stream of keys in ascending order. The key returned by next is
// valid until the following call.
type keyIter interface {
	next() (key []byte, ok bool, err error)
	close() error
}

// spillDir is the private directory of one Mark's temporary files.
type spillDir struct {
	dir   string
	lock  *os.File // held (flock) while the Mark runs; nil where locks are unsupported
	ioBuf int      // size of each file buffer
	seq   atomic.Int64
}

// A spill folder is named spillPrefix + pid + "-" + random and holds the
// file spillLock, which its Mark holds an exclusive lock on (flock) for as
// long as it runs. The kernel drops the lock when the process dies, however
// it dies, so a folder whose lock can be taken belongs to no live Mark: the
// next Mark removes it. The pid in the name is informative only (pids are
// reused); the lock decides.
const (
	spillPrefix = "lakegc-mark-"
	spillLock   = "lock"
)

// newSpillDir creates a locked spill folder in parent (os.TempDir() if
// empty).
func newSpillDir(parent string, ioBuf int) (*spillDir, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	pattern := fmt.Sprintf("%s%d-", spillPrefix, os.Getpid())
	if !spillLocks {
		dir, err := os.MkdirTemp(parent, pattern)
		if err != nil {
			return nil, fmt.Errorf("sweep: spill directory: %w", err)
		}
		return &spillDir{dir: dir, ioBuf: ioBuf}, nil
	}
	// The folder is made and locked under a name the sweep of stale
	// folders ignores, then renamed: no other Mark can see it unlocked.
	pending, err := os.MkdirTemp(parent, "."+pattern)
	if err != nil {
		return nil, fmt.Errorf("sweep: spill directory: %w", err)
	}
	lock, err := createLocked(filepath.Join(pending, spillLock))
	if err != nil {
		os.RemoveAll(pending)
		return nil, fmt.Errorf("sweep: spill directory: lock: %w", err)
	}
	dir := filepath.Join(parent, filepath.Base(pending)[1:])
	if err := os.Rename(pending, dir); err != nil {
		lock.Close()
		os.RemoveAll(pending)
		return nil, fmt.Errorf("sweep: spill directory: %w", err)
	}
	return &spillDir{dir: dir, lock: lock, ioBuf: ioBuf}, nil
}

// remove deletes the folder, then releases its lock.
func (d *spillDir) remove() error {
	err := os.RemoveAll(d.dir)
	if d.lock != nil {
		d.lock.Close()
	}
	return err
}

// isSpillName reports whether name is a spill folder's: spillPrefix, a pid
// in decimal, '-', and a non-empty suffix.
func isSpillName(name string) bool {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return false
	}
	pid, suffix, ok := strings.Cut(rest, "-")
	if !ok || pid == "" || suffix == "" {
		return false
	}
	for _, c := range []byte(pid) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeStaleSpills removes the spill folders of parent (os.TempDir() if
// empty) whose lock no live
// Mark holds, and returns their names. A folder without a lock file, with
// another name, or whose lock is held is left alone; so is any error, as a
// stale folder costs only disk space.
func removeStaleSpills(parent string) []string {
	if !spillLocks {
		return nil
	}
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !isSpillName(e.Name()) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		lock, ok := tryLockExisting(filepath.Join(dir, spillLock))
		if !ok {
			continue
		}
		// Removed while holding the lock, so no other Mark removes it too.
		if os.RemoveAll(dir) == nil {
			removed = append(removed, e.Name())
		}
		lock.Close()
	}
	return removed
}

// maxNameLen bounds the length of a run file's name.
func (d *spillDir) maxNameLen() int { return len(filepath.Join(d.dir, "run-")) + 20 }

// runWriter writes keys to a new run file, noting whether they came in
// strictly ascending order.
type runWriter struct {
	f       *os.File
	w       *bufio.Writer
	n       int64
	last    []byte
	ordered bool
	hdr     [binary.MaxVarintLen64]byte
}

func (d *spillDir) create() (*runWriter, error) {
	name := filepath.Join(d.dir, fmt.Sprintf("run-%06d", d.seq.Add(1)))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sweep: spill: %w", err)
	}
	return &runWriter{f: f, w: bufio.NewWriterSize(f, d.ioBuf), ordered: true}, nil
}

func (rw *runWriter) add(key []byte) error {
	if rw.n > 0 && bytes.Compare(key, rw.last) <= 0 {
		rw.ordered = false
	}
	rw.last = append(rw.last[:0], key...)
	rw.n++
	n := binary.PutUvarint(rw.hdr[:], uint64(len(key)))
	if _, err := rw.w.Write(rw.hdr[:n]); err != nil {
		return fmt.Errorf("sweep: spill: %w", err)
	}
	if _, err := rw.w.Write(key); err != nil {
		return fmt.Errorf("sweep: spill: %w", err)
	}
	return nil
}

// finish flushes the file and returns its name; the file stays on disk.
func (rw *runWriter) finish() (string, error) {
	name := rw.f.Name()
	err := rw.w.Flush()
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	rw.last = nil
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("sweep: spill: %w", err)
	}
	return name, nil
}

// abort closes and removes the file.
func (rw *runWriter) abort() {
	rw.f.Close()
	os.Remove(rw.f.Name())
}

// fileRun reads a run file; close removes it.
type fileRun struct {
	f   *os.File
	r   *bufio.Reader
	buf []byte
}

func openRun(name string, ioBuf int) (*fileRun, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sweep: spill: %w", err)
	}
	return &fileRun{f: f, r: bufio.NewReaderSize(f, ioBuf)}, nil
}

func (fr *fileRun) next() ([]byte, bool, error) {
	n, err := binary.ReadUvarint(fr.r)
	if err == io.EOF {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sweep: spill read: %w", err)
	}
	if n > maxKeyLen {
		return nil, false, fmt.Errorf("sweep: spill read: corrupt length %d", n)
	}
	if uint64(cap(fr.buf)) < n {
		fr.buf = make([]byte, n, max(n, 64))
	}
	fr.buf = fr.buf[:n]
	if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
		return nil, false, fmt.Errorf("sweep: spill read: %w", err)
	}
	return fr.buf, true, nil
}

func (fr *fileRun) close() error {
	err := fr.f.Close()
	if rerr := os.Remove(fr.f.Name()); err == nil {
		err = rerr
	}
	return err
}

// keyRef locates a key in a block's arena.
type keyRef struct{ off, n uint32 }

// maxBlock bounds a block so that keyRef's 32-bit offsets address all of it,
// whatever the memory budget; maxKeyLen bounds a key (object stores allow
// about 1 KiB).
const (
	maxBlock  = math.MaxInt32
	maxKeyLen = 1 << 30
)

// sorter gathers keys in a block of at most maxBytes (arena plus index),
// spilling each full block as a sorted run, and merges the runs in the end.
// Duplicates are dropped. Not safe for concurrent use.
type sorter struct {
	dir      *spillDir
	maxBytes int
	fanIn    int
	arena    []byte
	refs     []keyRef
	ordered  bool // the block's keys arrived in ascending order
	runs     []string
}

func newSorter(dir *spillDir, maxBytes, fanIn int) *sorter {
	return &sorter{dir: dir, maxBytes: min(maxBytes, maxBlock), fanIn: fanIn, ordered: true}
}

func (s *sorter) add(key []byte) error {
	if len(key) > maxKeyLen {
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidInput, len(key))
	}
	if !s.fits(len(key)) && !s.grow(len(key)) {
		if err := s.spill(); err != nil {
			return err
		}
		if !s.fits(len(key)) && !s.grow(len(key)) {
			// A key larger than the whole block gets a block of its own.
			s.arena = resize(s.arena, len(key))
			s.refs = resize(s.refs, 1)
		}
	}
	if n := len(s.refs); n > 0 && s.ordered && bytes.Compare(key, s.key(s.refs[n-1])) <= 0 {
		s.ordered = false
	}
	s.refs = append(s.refs, keyRef{off: uint32(len(s.arena)), n: uint32(len(key))})
	s.arena = append(s.arena, key...)
	return nil
}

func (s *sorter) fits(n int) bool {
	return len(s.arena)+n <= cap(s.arena) && len(s.refs) < cap(s.refs)
}

// grow makes room for a key of n bytes, doubling the arena or the index but
// keeping the block within maxBytes; false when the block is full.
func (s *sorter) grow(n int) bool {
	arena, refs := cap(s.arena), cap(s.refs)
	if len(s.arena)+n > arena {
		arena = max(2*arena, 1024, len(s.arena)+n)
	}
	if len(s.refs) == refs {
		refs = max(2*refs, 64)
	}
	if arena+8*refs > s.maxBytes {
		// Use what is left of the budget, at most a quarter of it for the
		// index.
		refs = max(cap(s.refs), min(refs, s.maxBytes/32))
		arena = max(cap(s.arena), min(arena, s.maxBytes-8*refs))
		if len(s.arena)+n > arena || len(s.refs) >= refs || arena+8*refs > s.maxBytes {
			return false
		}
	}
	s.arena = resize(s.arena, arena)
	s.refs = resize(s.refs, refs)
	return true
}

// resize returns s with capacity exactly c (append would round it up to a
// size class, beyond the budget).
func resize[T any](s []T, c int) []T {
	if cap(s) == c {
		return s
	}
	out := make([]T, len(s), c)
	copy(out, s)
	return out
}

// size is the memory the block holds.
func (s *sorter) size() int { return cap(s.arena) + 8*cap(s.refs) }

func (s *sorter) key(r keyRef) []byte { return s.arena[r.off : r.off+r.n] }

func (s *sorter) sortBlock() {
	if !s.ordered {
		slices.SortFunc(s.refs, func(a, b keyRef) int { return bytes.Compare(s.key(a), s.key(b)) })
		s.ordered = true
	}
}

// spill writes the block as a sorted run and empties it, keeping its memory.
func (s *sorter) spill() error {
	if len(s.refs) == 0 {
		return nil
	}
	s.sortBlock()
	rw, err := s.dir.create()
	if err != nil {
		return err
	}
	var prev []byte
	for i, r := range s.refs {
		k := s.key(r)
		if i > 0 && bytes.Equal(k, prev) {
			continue
		}
		prev = k
		if err := rw.add(k); err != nil {
			rw.abort()
			return err
		}
	}
	name, err := rw.finish()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	s.arena, s.refs = s.arena[:0], s.refs[:0]
	return nil
}

// finish returns the sorted, distinct keys added so far. Runs beyond the
// fan-in are merged into longer runs first, so at most fanIn files are open.
func (s *sorter) finish() (keyIter, error) {
	s.sortBlock()
	for len(s.runs) > s.fanIn {
		if err := s.mergeRuns(); err != nil {
			return nil, err
		}
	}
	iters, err := s.openRuns(s.runs, 1)
	if err != nil {
		return nil, err
	}
	s.runs = nil
	if len(s.refs) > 0 {
		iters = append(iters, &blockIter{s: s})
	}
	return newMerge(iters), nil
}

// openRuns opens the named runs, with room for extra more streams.
func (s *sorter) openRuns(names []string, extra int) ([]keyIter, error) {
	iters := make([]keyIter, 0, len(names)+extra)
	for _, name := range names {
		fr, err := openRun(name, s.dir.ioBuf)
		if err != nil {
			closeAll(iters)
			return nil, err
		}
		iters = append(iters, fr)
	}
	return iters, nil
}

// mergeRuns merges the first fanIn runs into one.
func (s *sorter) mergeRuns() error {
	iters, err := s.openRuns(s.runs[:s.fanIn], 0)
	if err != nil {
		return err
	}
	m := newMerge(iters)
	defer m.close()
	rw, err := s.dir.create()
	if err != nil {
		return err
	}
	for {
		k, ok, err := m.next()
		if err != nil {
			rw.abort()
			return err
		}
		if !ok {
			break
		}
		if err := rw.add(k); err != nil {
			rw.abort()
			return err
		}
	}
	name, err := rw.finish()
	if err != nil {
		return err
	}
	s.runs = append(s.runs[s.fanIn:], name)
	return nil
}

// release drops the block's memory and removes unmerged runs.
func (s *sorter) release() {
	for _, name := range s.runs {
		os.Remove(name)
	}
	s.runs, s.arena, s.refs = nil, nil, nil
}

// blockIter streams the sorted in-memory block of a sorter.
type blockIter struct {
	s *sorter
	i int
}

func (b *blockIter) next() ([]byte, bool, error) {
	if b.i >= len(b.s.refs) {
		return nil, false, nil
	}
	k := b.s.key(b.s.refs[b.i])
	b.i++
	return k, true, nil
}

func (b *blockIter) close() error {
	b.s.arena, b.s.refs = nil, nil
	return nil
}

// merge is a k-way merge of ascending streams that yields each key once.
type merge struct {
	heap []mergeItem
	out  []byte
	n    int64 // keys yielded
	err  error
	init bool
	all  []keyIter
}

type mergeItem struct {
	it  keyIter
	key []byte
}

func newMerge(iters []keyIter) *merge { return &merge{all: iters} }

func (m *merge) less(i, j int) bool { return bytes.Compare(m.heap[i].key, m.heap[j].key) < 0 }

func (m *merge) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(m.heap) {
			return
		}
		c := l
		if r := l + 1; r < len(m.heap) && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

func (m *merge) start() error {
	m.init = true
	for _, it := range m.all {
		k, ok, err := it.next()
		if err != nil {
			return err
		}
		if ok {
			m.heap = append(m.heap, mergeItem{it: it, key: k})
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return nil
}

// advance moves the smallest stream to its next key.
func (m *merge) advance() error {
	k, ok, err := m.heap[0].it.next()
	if err != nil {
		return err
	}
	if ok {
		m.heap[0].key = k
	} else {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return nil
}

func (m *merge) next() ([]byte, bool, error) {
	if m.err != nil {
		return nil, false, m.err
	}
	if !m.init {
		if m.err = m.start(); m.err != nil {
			return nil, false, m.err
		}
	}
	for len(m.heap) > 0 {
		k := m.heap[0].key
		dup := m.n > 0 && bytes.Equal(k, m.out)
		if !dup {
			m.out = append(m.out[:0], k...)
		}
		if m.err = m.advance(); m.err != nil {
			return nil, false, m.err
		}
		if !dup {
			m.n++
			return m.out, true, nil
		}
	}
	return nil, false, nil
}

func (m *merge) close() error {
	err := closeAll(m.all)
	m.all, m.heap = nil, nil
	return err
}

func closeAll(iters []keyIter) error {
	var errs []error
	for _, it := range iters {
		errs = append(errs, it.close())
	}
	return errors.Join(errs...)
}

// concat yields the streams one after the other; it is sorted when every
// stream is and each stream's keys sort before the next one's (the folders of
// a listing, taken in order). Streams are opened lazily and closed when done.
type concat struct {
	open []func() (keyIter, error)
	cur  keyIter
}

func (c *concat) next() ([]byte, bool, error) {
	for {
		if c.cur == nil {
			if len(c.open) == 0 {
				return nil, false, nil
			}
			it, err := c.open[0]()
			if err != nil {
				return nil, false, err
			}
			c.open = c.open[1:]
			c.cur = it
		}
		k, ok, err := c.cur.next()
		if err != nil || ok {
			return k, ok, err
		}
		err = c.cur.close()
		c.cur = nil
		if err != nil {
			return nil, false, err
		}
	}
}

func (c *concat) close() error {
	c.open = nil
	if c.cur != nil {
		err := c.cur.close()
		c.cur = nil
		return err
	}
	return nil
}

// strictIter passes on the keys of it and fails as soon as they do not
// strictly ascend. The merge-join trusts the order of both streams: a key
// out of order would make it skip a kept key and mark its object.
type strictIter struct {
	it   keyIter
	name string
	last []byte
	seen bool
}

func (s *strictIter) next() ([]byte, bool, error) {
	k, ok, err := s.it.next()
	if err != nil || !ok {
		return nil, false, err
	}
	if s.seen && bytes.Compare(k, s.last) <= 0 {
		return nil, false, fmt.Errorf("sweep: %s out of order: %q after %q", s.name, k, s.last)
	}
	s.last, s.seen = append(s.last[:0], k...), true
	return k, true, nil
}

func (s *strictIter) close() error { return s.it.close() }
