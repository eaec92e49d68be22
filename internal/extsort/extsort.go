package sweep

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
)

// This file sorts keys in bounded memory: keys are gathered in a block of
// fixed size, each full block is sorted and written to a run file, and the
// runs are merged. A run file is a sequence of keys, each written as one
// more than the length of the prefix it shares with the key before it, the
// length of the rest (both uvarints), and the rest: the keys of a run are
// sorted, and share most of their bytes with their neighbours. A zero and
// the number of keys (a uvarint) end the file, so that a file cut short,
// even between two keys, reads as an error rather than as a shorter run.

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
	hdr     [2 * binary.MaxVarintLen64]byte
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
	shared := 0
	if rw.n > 0 {
		shared = commonPrefix(key, rw.last)
		if shared == len(key) || shared < len(rw.last) && key[shared] < rw.last[shared] {
			rw.ordered = false
		}
	}
	// The first shared bytes of last are key's already.
	rw.last = append(rw.last[:shared], key[shared:]...)
	return rw.put(key, shared)
}

// put writes key, which shares its first shared bytes with the key before
// it. It neither checks nor records the order: a caller that uses put for
// every key of the file knows the previous key itself (spill, whose keys
// stay in the block).
func (rw *runWriter) put(key []byte, shared int) error {
	rw.n++
	// One write of the entry, built where the buffer would copy it to.
	b := binary.AppendUvarint(rw.w.AvailableBuffer(), uint64(shared)+1)
	b = binary.AppendUvarint(b, uint64(len(key)-shared))
	b = append(b, key[shared:]...)
	if _, err := rw.w.Write(b); err != nil {
		return fmt.Errorf("sweep: spill: %w", err)
	}
	return nil
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// finish writes the file's end, flushes it and returns its name; the file
// stays on disk.
func (rw *runWriter) finish() (string, error) {
	name := rw.f.Name()
	end := binary.AppendUvarint(append(rw.hdr[:0], 0), uint64(rw.n))
	_, err := rw.w.Write(end)
	if err == nil {
		err = rw.w.Flush()
	}
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
	f    *os.File
	r    *bufio.Reader
	buf  []byte
	n    uint64 // keys read
	done bool   // the end was read
}

func openRun(name string, ioBuf int) (*fileRun, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sweep: spill: %w", err)
	}
	return &fileRun{f: f, r: bufio.NewReaderSize(f, ioBuf)}, nil
}

func (fr *fileRun) next() ([]byte, bool, error) {
	if fr.done {
		return nil, false, nil
	}
	if k, ok := fr.nextBuffered(); ok {
		return k, true, nil
	}
	shared, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, fmt.Errorf("sweep: spill read: %w", noEOF(err))
	}
	if shared == 0 {
		return nil, false, fr.end()
	}
	shared--
	rest, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, fmt.Errorf("sweep: spill read: %w", noEOF(err))
	}
	if shared > uint64(len(fr.buf)) || rest > maxKeyLen-shared {
		return nil, false, fmt.Errorf("sweep: spill read: corrupt lengths %d, %d", shared, rest)
	}
	fr.resizeKey(shared, rest)
	if _, err := io.ReadFull(fr.r, fr.buf[shared:]); err != nil {
		return nil, false, fmt.Errorf("sweep: spill read: %w", noEOF(err))
	}
	fr.n++
	return fr.buf, true, nil
}

// nextBuffered decodes the next key when the whole of it is in the read
// buffer and its lengths are valid, as most keys are, without a call per
// byte; it reports false, having read nothing, for anything else (the end, a
// key across the buffer's end, any error), which next then reads the slow
// way.
func (fr *fileRun) nextBuffered() ([]byte, bool) {
	b, _ := fr.r.Peek(fr.r.Buffered())
	shared, n1 := binary.Uvarint(b)
	if n1 <= 0 || shared == 0 {
		return nil, false
	}
	shared--
	rest, n2 := binary.Uvarint(b[n1:])
	if n2 <= 0 || shared > uint64(len(fr.buf)) || rest > maxKeyLen-shared || rest > uint64(len(b)-n1-n2) {
		return nil, false
	}
	fr.resizeKey(shared, rest)
	copy(fr.buf[shared:], b[n1+n2:])
	fr.r.Discard(n1 + n2 + int(rest))
	fr.n++
	return fr.buf, true
}

// resizeKey makes fr.buf the length of the next key, shared bytes of the
// previous key (kept) and rest bytes the caller fills in. next and
// nextBuffered both call it, having checked the lengths.
func (fr *fileRun) resizeKey(shared, rest uint64) {
	n := int(shared + rest)
	if cap(fr.buf) < n {
		buf := make([]byte, n, max(n, 64))
		copy(buf, fr.buf[:shared])
		fr.buf = buf
	}
	fr.buf = fr.buf[:n]
}

// end reads the file's end: the number of keys, as many as were read, and
// nothing after it.
func (fr *fileRun) end() error {
	n, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return fmt.Errorf("sweep: spill read: end: %w", noEOF(err))
	}
	if n != fr.n {
		return fmt.Errorf("sweep: spill read: %d keys, the end says %d", fr.n, n)
	}
	switch _, err := fr.r.ReadByte(); {
	case err == nil:
		return errors.New("sweep: spill read: bytes after the end")
	case err != io.EOF:
		return fmt.Errorf("sweep: spill read: %w", err)
	}
	fr.done = true
	return nil
}

// noEOF turns an end of file within a key into an unexpected one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (fr *fileRun) close() error {
	err := fr.f.Close()
	if rerr := os.Remove(fr.f.Name()); err == nil {
		err = rerr
	}
	return err
}

// keyRef locates a key in an arena.
type keyRef struct{ off, n uint32 }

// maxBlock bounds a block so that 32-bit offsets address all of it, whatever
// the memory budget; maxKeyLen bounds a key (object stores allow about
// 1 KiB).
const (
	maxBlock  = math.MaxInt32
	maxKeyLen = 1 << 30
)

// slot locates a key in a sorter's block; pfx is scratch for the sort.
type slot struct {
	pfx    uint64
	off, n uint32
}

const (
	slotSize = int(unsafe.Sizeof(slot{}))
	pageSize = 4096
)

// sorter gathers keys in a block of at most maxBytes, spilling each full
// block as a sorted run, and merges the runs in the end. Duplicates are
// dropped. Not safe for concurrent use.
//
// The block is one slab, taken at the first key and reused after every
// spill: keys are appended from its start, their slots from its end
// downwards, so that no fixed share of it goes to either. Only the pages
// touched count (a mapped slab's others cost nothing), and the block keeps
// those within maxBytes: where keys of another length than before would
// touch more, the pages between the two ends are given back first.
type sorter struct {
	dir      *spillDir
	maxBytes int
	fanIn    int
	mem      *slab // nil until the first key, and once released
	alen     int   // bytes of keys in the block
	nslots   int   // keys in the block; their slots end the slab, newest first
	hwA, hwR int   // the bytes of keys and of slots touched since the pages were last given back
	ordered  bool  // the block's keys arrived in ascending order
	sorted   bool  // the slots are in ascending order of their keys
	runs     []string
}

func newSorter(dir *spillDir, maxBytes, fanIn int) *sorter {
	return &sorter{dir: dir, maxBytes: min(maxBytes, maxBlock), fanIn: fanIn, ordered: true}
}

// roundPage rounds n up to whole pages when the slab is mapped, where a
// touched page counts in full.
func (s *sorter) roundPage(n int) int {
	if s.mem == nil || !s.mem.mapped {
		return n
	}
	return (n + pageSize - 1) &^ (pageSize - 1)
}

// room reports whether a key of n bytes fits the block, giving back the
// pages between its two ends when that makes it fit. Where they cannot be
// given back (a system without madvise), the pages stay counted.
func (s *sorter) room(n int) bool {
	a, r := s.alen+n, slotSize*(s.nslots+1)
	if a+r > min(s.maxBytes, len(s.mem.b)) {
		return false
	}
	if !s.mem.mapped {
		return true // size is the whole slab
	}
	hwA, hwR := max(s.hwA, a), max(s.hwR, r)
	if s.roundPage(hwA)+s.roundPage(hwR) > s.maxBytes {
		if s.roundPage(a)+s.roundPage(r) > s.maxBytes || !s.mem.discard(s.alen, len(s.mem.b)-slotSize*s.nslots-s.alen) {
			return false
		}
		hwA, hwR = a, r
	}
	s.hwA, s.hwR = hwA, hwR
	return true
}

func (s *sorter) add(key []byte) error {
	if len(key) > maxKeyLen {
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidInput, len(key))
	}
	if s.mem == nil {
		n := s.maxBytes &^ (slotSize - 1)
		if n >= minMapped {
			n &^= pageSize - 1 // the slots, counted from the end, end a page
		}
		s.mem = newSlab(n)
	}
	if !s.room(len(key)) {
		if err := s.spill(); err != nil {
			return err
		}
		if !s.room(len(key)) {
			// A key larger than the whole block is a run of its own.
			return s.spillOne(key)
		}
	}
	if s.nslots > 0 && s.ordered && bytes.Compare(key, s.key(*s.slotAt(s.nslots))) <= 0 {
		s.ordered = false
	}
	copy(s.mem.b[s.alen:], key)
	*s.slotAt(s.nslots + 1) = slot{off: uint32(s.alen), n: uint32(len(key))}
	s.alen += len(key)
	s.nslots++
	s.sorted = false
	return nil
}

// slotAt returns the slot of the i-th key added to the block, from 1.
func (s *sorter) slotAt(i int) *slot {
	return (*slot)(unsafe.Pointer(&s.mem.b[len(s.mem.b)-slotSize*i]))
}

// slots returns the block's slots: newest first until sortBlock, then in
// ascending order of their keys.
func (s *sorter) slots() []slot {
	if s.nslots == 0 {
		return nil
	}
	return unsafe.Slice(s.slotAt(s.nslots), s.nslots)
}

// size is the memory the block holds.
func (s *sorter) size() int {
	if s.mem == nil {
		return 0
	}
	if !s.mem.mapped {
		return len(s.mem.b)
	}
	return s.roundPage(s.hwA) + s.roundPage(s.hwR)
}

func (s *sorter) key(r slot) []byte { return s.mem.b[r.off : r.off+r.n : r.off+r.n] }

func (s *sorter) sortBlock() {
	if s.sorted || s.nslots == 0 {
		return
	}
	sl := s.slots()
	if s.ordered {
		slices.Reverse(sl)
	} else {
		sortSlots(sl, s.mem.b, 0)
	}
	s.sorted = true
}

// spill writes the block as a sorted run and empties it, keeping its memory.
func (s *sorter) spill() error {
	if s.nslots == 0 {
		return nil
	}
	s.sortBlock()
	rw, err := s.dir.create()
	if err != nil {
		return err
	}
	// The keys stay in the block while they are written, so the previous
	// one needs no copy, and the prefix it shares with the next one also
	// says whether they are equal: a repeat is dropped.
	var prev []byte
	for i, r := range s.slots() {
		k := s.key(r)
		shared := 0
		if i > 0 {
			if shared = commonPrefix(k, prev); shared == len(k) && shared == len(prev) {
				continue
			}
		}
		prev = k
		if err := rw.put(k, shared); err != nil {
			rw.abort()
			return err
		}
	}
	name, err := rw.finish()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	s.alen, s.nslots, s.ordered, s.sorted = 0, 0, true, false
	return nil
}

// spillOne writes key as a run of its own.
func (s *sorter) spillOne(key []byte) error {
	rw, err := s.dir.create()
	if err != nil {
		return err
	}
	if err := rw.add(key); err != nil {
		rw.abort()
		return err
	}
	name, err := rw.finish()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	return nil
}

// finish returns the sorted, distinct keys added so far. Runs beyond the
// fan-in are merged into longer runs first, so at most fanIn files are open.
func (s *sorter) finish() (keyIter, error) {
	s.sortBlock()
	for len(s.runs) > s.fanIn {
		if err := s.mergeRuns(); err != nil {
			s.release()
			return nil, err
		}
	}
	iters, err := s.openRuns(s.runs, 1)
	if err != nil {
		s.release()
		return nil, err
	}
	s.runs = nil
	if s.nslots > 0 {
		iters = append(iters, &blockIter{s: s})
	} else {
		s.freeBlock()
	}
	return newMerge(iters), nil
}

// adopt takes o's keys into s's runs, spilling o's block first, and frees
// o's block.
func (s *sorter) adopt(o *sorter) error {
	if err := o.spill(); err != nil {
		return err
	}
	s.runs = append(s.runs, o.runs...)
	o.runs = nil
	o.freeBlock()
	return nil
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

// freeBlock gives the block's memory back; no key of it may be used after.
func (s *sorter) freeBlock() {
	s.mem.free()
	s.mem, s.alen, s.nslots, s.hwA, s.hwR = nil, 0, 0, 0, 0
}

// release drops the block's memory and removes unmerged runs.
func (s *sorter) release() {
	for _, name := range s.runs {
		os.Remove(name)
	}
	s.runs = nil
	s.freeBlock()
}

// blockIter streams the sorted in-memory block of a sorter; close frees it.
type blockIter struct {
	s *sorter
	i int
}

func (b *blockIter) next() ([]byte, bool, error) {
	if b.s.mem == nil || b.i >= b.s.nslots {
		return nil, false, nil
	}
	k := b.s.key(b.s.slots()[b.i])
	b.i++
	return k, true, nil
}

func (b *blockIter) close() error {
	b.s.freeBlock()
	return nil
}

// refIter streams keys held in an arena, in the order of their refs.
type refIter struct {
	arena []byte
	refs  []keyRef
}

func (r *refIter) next() ([]byte, bool, error) {
	if len(r.refs) == 0 {
		return nil, false, nil
	}
	k := r.arena[r.refs[0].off : r.refs[0].off+r.refs[0].n]
	r.refs = r.refs[1:]
	return k, true, nil
}

func (r *refIter) close() error {
	r.arena, r.refs = nil, nil
	return nil
}

// merge is a k-way merge of ascending streams that yields each key once.
// It fails when a stream's keys descend, so its output strictly ascends.
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
		// One comparison with the key last yielded both drops a repeat and
		// checks the order: the smallest head below it means a stream
		// went back, and its keys can no longer be merged in order.
		k := m.heap[0].key
		dup := false
		if m.n > 0 {
			c := bytes.Compare(k, m.out)
			if c < 0 {
				m.err = fmt.Errorf("sweep: merge: key out of order: %q after %q", k, m.out)
				return nil, false, m.err
			}
			dup = c == 0
		}
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

// strict returns it, failing as soon as its keys do not strictly ascend. A
// prefetchIter checks them itself, on the batches it hands out, with no copy
// of the previous key; any other stream is wrapped in a strictIter.
func strict(it keyIter, name string) keyIter {
	if p, ok := it.(*prefetchIter); ok {
		p.strict(name)
		return p
	}
	return &strictIter{it: it, name: name}
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
	if s.seen {
		if err := ascends(s.name, k, s.last); err != nil {
			return nil, false, err
		}
	}
	s.last, s.seen = append(s.last[:0], k...), true
	return k, true, nil
}

func (s *strictIter) close() error { return s.it.close() }

// ascends is the order check of strictIter and of a strict prefetchIter: an
// error naming the stream name unless k comes after prev.
func ascends(name string, k, prev []byte) error {
	if bytes.Compare(k, prev) <= 0 {
		return fmt.Errorf("sweep: %s out of order: %q after %q", name, k, prev)
	}
	return nil
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
