package extsort

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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

// Iter is a stream of keys, in ascending order unless its maker says
// otherwise. Next returns the next key, or ok false at the end; the key is
// valid until the following call. Close releases the stream (and removes
// what it reads from, for a run file); it may be called before the end.
type Iter interface {
	Next() (key []byte, ok bool, err error)
	Close() error
}

// ErrKeyTooLong is returned (wrapped) by [Sorter.Add] for a key longer than
// 1 GiB. Object stores allow keys of about 1 KiB, so only outside input
// can hold one; the caller says how that input is bad.
var ErrKeyTooLong = errors.New("extsort: key too long")

// SpillDir is the private folder of one user's temporary files: the run
// files of its sorters and any run file it writes itself. Its methods are
// safe for concurrent use; Remove must come after every other use.
type SpillDir struct {
	dir   string
	lock  *os.File // held (flock) until Remove; nil where locks are unsupported
	ioBuf int      // size of each file buffer
	seq   atomic.Int64
}

// A spill folder is named spillPrefix + pid + "-" + random and holds the
// file spillLock, which its user holds an exclusive lock on (flock) until
// it removes the folder. The kernel drops the lock when the process dies,
// however it dies, so a folder whose lock can be taken belongs to no live
// user: [RemoveStaleSpills] removes it. The pid in the name is informative
// only (pids are reused); the lock decides.
const (
	spillPrefix = "lakegc-mark-"
	spillLock   = "lock"
)

// NewSpillDir creates a locked spill folder in parent (os.TempDir() if
// empty), whose files are read and written through buffers of ioBuf bytes.
func NewSpillDir(parent string, ioBuf int) (*SpillDir, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	pattern := fmt.Sprintf("%s%d-", spillPrefix, os.Getpid())
	if !spillLocks {
		dir, err := os.MkdirTemp(parent, pattern)
		if err != nil {
			return nil, fmt.Errorf("extsort: spill directory: %w", err)
		}
		return &SpillDir{dir: dir, ioBuf: ioBuf}, nil
	}
	// The folder is made and locked under a name RemoveStaleSpills
	// ignores, then renamed: no other process can see it unlocked.
	pending, err := os.MkdirTemp(parent, "."+pattern)
	if err != nil {
		return nil, fmt.Errorf("extsort: spill directory: %w", err)
	}
	lock, err := createLocked(filepath.Join(pending, spillLock))
	if err != nil {
		os.RemoveAll(pending)
		return nil, fmt.Errorf("extsort: spill directory: lock: %w", err)
	}
	dir := filepath.Join(parent, filepath.Base(pending)[1:])
	if err := os.Rename(pending, dir); err != nil {
		lock.Close()
		os.RemoveAll(pending)
		return nil, fmt.Errorf("extsort: spill directory: %w", err)
	}
	return &SpillDir{dir: dir, lock: lock, ioBuf: ioBuf}, nil
}

// Remove deletes the folder and every file left in it, then releases its
// lock.
func (d *SpillDir) Remove() error {
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

// RemoveStaleSpills removes the spill folders of parent (os.TempDir() if
// empty) whose lock no live process holds (left behind by one that was
// killed), and returns their names. A folder without a lock file, with
// another name, or whose lock is held is left alone; so is any error, as a
// stale folder costs only disk space. Where file locks are not at hand it
// removes nothing, as a live folder cannot be told from a stale one.
func RemoveStaleSpills(parent string) []string {
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
		// Removed while holding the lock, so no other process removes it too.
		if os.RemoveAll(dir) == nil {
			removed = append(removed, e.Name())
		}
		lock.Close()
	}
	return removed
}

// MaxNameLen bounds the length of the name of a run file of d, for a
// caller that counts the memory of the names it keeps.
func (d *SpillDir) MaxNameLen() int { return len(filepath.Join(d.dir, "run-")) + 20 }

// IOBuf is the size of the buffer each file of d is read or written
// through: what [OpenRun] takes for a run file of d.
func (d *SpillDir) IOBuf() int { return d.ioBuf }

// runFormat is the key stream of run files: any keys, in any order (a
// run file of unsorted keys is how package sweep sorts a listing that may
// already be sorted).
var runFormat = KeyFormat{Corrupt: errors.New("corrupt run")}

// RunWriter writes keys to a new run file, noting whether they came in
// strictly ascending order. Not safe for concurrent use.
type RunWriter struct {
	f   *os.File
	enc *KeyEncoder
}

// Create starts a new run file in d. The caller must end it with Finish or
// Abort.
func (d *SpillDir) Create() (*RunWriter, error) {
	name := filepath.Join(d.dir, fmt.Sprintf("run-%06d", d.seq.Add(1)))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("extsort: spill: %w", err)
	}
	enc, err := NewKeyEncoder(f, runFormat, d.ioBuf) // no magic: nothing written yet
	return &RunWriter{f: f, enc: enc}, err
}

// Add appends key to the file, in any order.
func (rw *RunWriter) Add(key []byte) error {
	if err := rw.enc.Add(key); err != nil {
		return fmt.Errorf("extsort: spill: %w", err)
	}
	return nil
}

// put writes key, which shares its first shared bytes with the key before
// it, without checking or recording the order (see KeyEncoder.put).
func (rw *RunWriter) put(key []byte, shared int) error {
	if err := rw.enc.put(key, shared); err != nil {
		return fmt.Errorf("extsort: spill: %w", err)
	}
	return nil
}

// CommonPrefix returns the length of the longest common prefix of a and b.
func CommonPrefix(a, b []byte) int {
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

// Ordered reports whether the keys added so far strictly ascend.
func (rw *RunWriter) Ordered() bool { return rw.enc.Ordered() }

// Finish writes the file's end, flushes it and returns its name, for
// [OpenRun]; the file stays on disk. On an error the file is removed.
func (rw *RunWriter) Finish() (string, error) {
	name := rw.f.Name()
	err := rw.enc.Finish()
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("extsort: spill: %w", err)
	}
	return name, nil
}

// Abort closes and removes the file.
func (rw *RunWriter) Abort() {
	rw.f.Close()
	os.Remove(rw.f.Name())
}

// FileRun reads a run file as an [Iter]: the keys in the order they were
// written. A file cut short, altered or followed by other bytes fails Next
// rather than read as a shorter run. Close removes the file.
type FileRun struct {
	f   *os.File
	dec *KeyDecoder
}

// OpenRun opens the run file name, read through a buffer of ioBuf bytes.
func OpenRun(name string, ioBuf int) (*FileRun, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("extsort: spill: %w", err)
	}
	dec, err := NewKeyDecoder(f, runFormat, ioBuf) // no magic: nothing read yet
	return &FileRun{f: f, dec: dec}, err
}

// Next returns the next key of the file.
func (fr *FileRun) Next() ([]byte, bool, error) {
	k, ok, err := fr.dec.Next()
	if err != nil {
		return nil, false, fmt.Errorf("extsort: spill read: %w", err)
	}
	return k, ok, nil
}

// Close closes and removes the file.
func (fr *FileRun) Close() error {
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

// Sorter gathers keys in a block of at most maxBytes, spilling each full
// block as a sorted run to its SpillDir, and merges the runs in the end.
// Duplicates are dropped (kept by one of NewRepeatSorter). Not safe for
// concurrent use.
//
// The block is one slab, taken at the first key and reused after every
// spill: keys are appended from its start, their slots from its end
// downwards, so that no fixed share of it goes to either. Only the pages
// touched count (a mapped slab's others cost nothing), and the block keeps
// those within maxBytes: where keys of another length than before would
// touch more, the pages between the two ends are given back first.
type Sorter struct {
	dir      *SpillDir
	maxBytes int
	fanIn    int
	mem      *slab // nil until the first key, and once released
	alen     int   // bytes of keys in the block
	nslots   int   // keys in the block; their slots end the slab, newest first
	hwA, hwR int   // the bytes of keys and of slots touched since the pages were last given back
	ordered  bool  // the block's keys arrived in ascending order
	sorted   bool  // the slots are in ascending order of their keys
	repeats  bool  // a repeat is kept (NewRepeatSorter)
	runs     []string
	sink     byte // what touch read, never used: stored so that the compiler keeps its loads
}

// touchBatch is how many keys of a sorted block touch reads at once.
const touchBatch = 16

// touch reads the first and last byte of the keys of sl, and returns
// them ORed, so that their memory is on its way before they are used. In
// sorted order a block's keys lie anywhere in it: read one by one, each
// waits for memory in turn; the reads of a batch wait for it together.
func (s *Sorter) touch(sl []slot) byte {
	var b byte
	for _, r := range sl {
		if r.n > 0 {
			b |= s.mem.b[r.off] | s.mem.b[r.off+r.n-1]
		}
	}
	return b
}

// NewSorter returns a sorter whose block holds at most maxBytes (and at
// most 2 GiB), whose runs go to dir, and which merges at most fanIn runs
// at once. It takes no memory before the first key.
func NewSorter(dir *SpillDir, maxBytes, fanIn int) *Sorter {
	return &Sorter{dir: dir, maxBytes: min(maxBytes, maxBlock), fanIn: fanIn, ordered: true}
}

// NewRepeatSorter returns a sorter as NewSorter does, that keeps repeats:
// Finish yields each key as many times as it was added (a repeat costs its
// runs the varint of its length and a zero: two bytes for a key under 127
// bytes, three under 16 KiB), in ascending order, so that a caller can
// count them.
// A sorter that drops repeats has dropped them from the runs another
// adopts (Adopt).
func NewRepeatSorter(dir *SpillDir, maxBytes, fanIn int) *Sorter {
	s := NewSorter(dir, maxBytes, fanIn)
	s.repeats = true
	return s
}

// roundPage rounds n up to whole pages when the slab is mapped, where a
// touched page counts in full.
func (s *Sorter) roundPage(n int) int {
	if s.mem == nil || !s.mem.mapped {
		return n
	}
	return (n + pageSize - 1) &^ (pageSize - 1)
}

// room reports whether a key of n bytes fits the block, giving back the
// pages between its two ends when that makes it fit. Where they cannot be
// given back (a system without madvise), the pages stay counted.
func (s *Sorter) room(n int) bool {
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

// Add adds a copy of key; the sorter never writes to key's bytes. A key
// longer than 1 GiB is an error wrapping [ErrKeyTooLong].
func (s *Sorter) Add(key []byte) error {
	if len(key) > maxKeyLen {
		return fmt.Errorf("%w: %d bytes", ErrKeyTooLong, len(key))
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
func (s *Sorter) slotAt(i int) *slot {
	return (*slot)(unsafe.Pointer(&s.mem.b[len(s.mem.b)-slotSize*i]))
}

// slots returns the block's slots: newest first until sortBlock, then in
// ascending order of their keys.
func (s *Sorter) slots() []slot {
	if s.nslots == 0 {
		return nil
	}
	return unsafe.Slice(s.slotAt(s.nslots), s.nslots)
}

// MaxBytes is the most memory the block may hold: maxBytes of NewSorter,
// at most 2 GiB.
func (s *Sorter) MaxBytes() int { return s.maxBytes }

// Size is the memory the block holds: the pages it touched since they were
// last given back when it is mapped outside the Go heap, else its whole
// slice. It is at most MaxBytes.
func (s *Sorter) Size() int {
	if s.mem == nil {
		return 0
	}
	if !s.mem.mapped {
		return len(s.mem.b)
	}
	return s.roundPage(s.hwA) + s.roundPage(s.hwR)
}

func (s *Sorter) key(r slot) []byte { return s.mem.b[r.off : r.off+r.n : r.off+r.n] }

func (s *Sorter) sortBlock() {
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
func (s *Sorter) spill() error {
	if s.nslots == 0 {
		return nil
	}
	s.sortBlock()
	name, err := s.writeRun(func(rw *RunWriter) error {
		// The keys stay in the block while they are written, so the
		// previous one needs no copy, and the prefix it shares with the
		// next one also says whether they are equal: a repeat is dropped.
		var prev []byte
		sl := s.slots()
		var ahead byte
		for i, r := range sl {
			if i%touchBatch == 0 {
				ahead |= s.touch(sl[min(i+touchBatch, len(sl)):min(i+2*touchBatch, len(sl))])
			}
			k := s.key(r)
			shared := 0
			if i > 0 {
				if shared = CommonPrefix(k, prev); shared == len(k) && shared == len(prev) && !s.repeats {
					continue
				}
			}
			prev = k
			if err := rw.put(k, shared); err != nil {
				return err
			}
		}
		s.sink = ahead
		return nil
	})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	s.alen, s.nslots, s.ordered, s.sorted = 0, 0, true, false
	return nil
}

// spillOne writes key as a run of its own.
func (s *Sorter) spillOne(key []byte) error {
	name, err := s.writeRun(func(rw *RunWriter) error { return rw.Add(key) })
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	return nil
}

// writeRun writes a new run file with fill and returns its name; on an
// error the file is removed.
func (s *Sorter) writeRun(fill func(*RunWriter) error) (string, error) {
	rw, err := s.dir.Create()
	if err != nil {
		return "", err
	}
	if err := fill(rw); err != nil {
		rw.Abort()
		return "", err
	}
	return rw.Finish()
}

// Finish returns the sorted, distinct keys added so far (every key added,
// repeats included, for a sorter of NewRepeatSorter). Runs beyond the
// fan-in are merged into longer runs first, so at most fanIn files are open.
// The block is freed when the stream is closed; on an error, at once. No key
// may be added after.
func (s *Sorter) Finish() (Iter, error) {
	s.sortBlock()
	for len(s.runs) > s.fanIn {
		if err := s.mergeRuns(); err != nil {
			s.Release()
			return nil, err
		}
	}
	iters, err := s.openRuns(s.runs, 1)
	if err != nil {
		s.Release()
		return nil, err
	}
	s.runs = nil
	if s.nslots > 0 {
		iters = append(iters, &blockIter{s: s})
	} else {
		s.freeBlock()
	}
	return s.merge(iters), nil
}

// merge is NewMerge, keeping repeats for a sorter that keeps them.
func (s *Sorter) merge(iters []Iter) Iter { return &merge{all: iters, repeats: s.repeats} }

// Adopt takes o's keys into s's runs, spilling o's block first, and frees
// o's block. o must share s's SpillDir and takes no more keys.
func (s *Sorter) Adopt(o *Sorter) error {
	if err := o.spill(); err != nil {
		return err
	}
	s.runs = append(s.runs, o.runs...)
	o.runs = nil
	o.freeBlock()
	return nil
}

// openRuns opens the named runs, with room for extra more streams.
func (s *Sorter) openRuns(names []string, extra int) ([]Iter, error) {
	iters := make([]Iter, 0, len(names)+extra)
	for _, name := range names {
		fr, err := OpenRun(name, s.dir.ioBuf)
		if err != nil {
			CloseAll(iters)
			return nil, err
		}
		iters = append(iters, fr)
	}
	return iters, nil
}

// mergeRuns merges the first fanIn runs into one.
func (s *Sorter) mergeRuns() error {
	iters, err := s.openRuns(s.runs[:s.fanIn], 0)
	if err != nil {
		return err
	}
	m := s.merge(iters)
	defer m.Close()
	name, err := s.writeRun(func(rw *RunWriter) error {
		for {
			k, ok, err := m.Next()
			if err != nil || !ok {
				return err
			}
			if err := rw.Add(k); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return err
	}
	s.runs = append(s.runs[s.fanIn:], name)
	return nil
}

// freeBlock gives the block's memory back; no key of it may be used after.
func (s *Sorter) freeBlock() {
	s.mem.free()
	s.mem, s.alen, s.nslots, s.hwA, s.hwR = nil, 0, 0, 0, 0
}

// Release drops the block's memory and removes the runs not yet handed to
// a stream. It may be called more than once, and after Finish.
func (s *Sorter) Release() {
	for _, name := range s.runs {
		os.Remove(name)
	}
	s.runs = nil
	s.freeBlock()
}

// blockIter streams the sorted in-memory block of a sorter; close frees it.
type blockIter struct {
	s *Sorter
	i int
}

func (b *blockIter) Next() ([]byte, bool, error) {
	if b.s.mem == nil || b.i >= b.s.nslots {
		return nil, false, nil
	}
	sl := b.s.slots()
	if b.i%touchBatch == 0 {
		b.s.sink |= b.s.touch(sl[min(b.i+touchBatch, len(sl)):min(b.i+2*touchBatch, len(sl))])
	}
	k := b.s.key(sl[b.i])
	b.i++
	return k, true, nil
}

func (b *blockIter) Close() error {
	b.s.freeBlock()
	return nil
}

// refIter streams keys held in an arena, in the order of their refs.
type refIter struct {
	arena []byte
	refs  []keyRef
}

func (r *refIter) Next() ([]byte, bool, error) {
	if len(r.refs) == 0 {
		return nil, false, nil
	}
	k := r.arena[r.refs[0].off : r.refs[0].off+r.refs[0].n]
	r.refs = r.refs[1:]
	return k, true, nil
}

func (r *refIter) Close() error {
	r.arena, r.refs = nil, nil
	return nil
}

// merge is a k-way merge of ascending streams that yields each key once
// (every key, with repeats). It fails when a stream's keys descend, so its
// output strictly ascends (ascends, with repeats).
type merge struct {
	heap    []mergeItem
	out     []byte
	n       int64 // keys yielded
	err     error
	init    bool
	repeats bool
	all     []Iter
	// second is the index (1 or 2) of the smaller child of the top, the
	// smallest head but the top's, while the children stay; 0: unknown.
	second int
}

type mergeItem struct {
	it  Iter
	key []byte
}

// NewMerge returns the k-way merge of the ascending streams iters, which
// yields each key once and fails as soon as a stream's keys descend. Close
// closes every stream. A stream that is itself a merge not read yet gives
// its streams to this one (the result is the same, and each key is
// compared and copied once instead of once per level): it must not be used
// after.
func NewMerge(iters []Iter) Iter {
	all := make([]Iter, 0, len(iters))
	for _, it := range iters {
		if in, ok := it.(*merge); ok && !in.init && in.err == nil {
			all = append(all, in.all...)
			in.all = nil
			continue
		}
		all = append(all, it)
	}
	return &merge{all: all}
}

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
		k, ok, err := it.Next()
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

// advance moves the smallest stream to its next key. While that key stays
// below every other head (a long run of one stream), the heap holds as it
// is: one comparison with the smallest other head, which stays the same
// until the heap changes.
func (m *merge) advance() error {
	k, ok, err := m.heap[0].it.Next()
	if err != nil {
		return err
	}
	if ok {
		m.heap[0].key = k
		if len(m.heap) == 1 {
			return nil
		}
		if m.second == 0 {
			m.second = 1
			if len(m.heap) > 2 && m.less(2, 1) {
				m.second = 2
			}
		}
		if bytes.Compare(k, m.heap[m.second].key) < 0 {
			return nil
		}
	} else {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	m.second = 0
	if len(m.heap) > 0 {
		m.down(0)
	}
	return nil
}

func (m *merge) Next() ([]byte, bool, error) {
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
				m.err = fmt.Errorf("extsort: merge: key out of order: %q after %q", k, m.out)
				return nil, false, m.err
			}
			dup = c == 0
		}
		if m.repeats {
			dup = false
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

func (m *merge) Close() error {
	err := CloseAll(m.all)
	m.all, m.heap = nil, nil
	return err
}

// CloseAll closes every stream of iters and joins their errors.
func CloseAll(iters []Iter) error {
	var errs []error
	for _, it := range iters {
		errs = append(errs, it.Close())
	}
	return errors.Join(errs...)
}

// NewConcat returns the streams that open returns, one after the other; it
// is sorted when every stream is and each stream's keys sort before the
// next one's (the folders of a listing, taken in order). Each stream is
// opened when the one before it ends, and closed when done.
func NewConcat(open []func() (Iter, error)) Iter { return &concat{open: open} }

// concat is the stream of NewConcat.
type concat struct {
	open []func() (Iter, error)
	cur  Iter
}

func (c *concat) Next() ([]byte, bool, error) {
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
		k, ok, err := c.cur.Next()
		if err != nil || ok {
			return k, ok, err
		}
		err = c.cur.Close()
		c.cur = nil
		if err != nil {
			return nil, false, err
		}
	}
}

func (c *concat) Close() error {
	c.open = nil
	if c.cur != nil {
		err := c.cur.Close()
		c.cur = nil
		return err
	}
	return nil
}

// Strict returns it, failing as soon as its keys do not strictly ascend,
// with an error that names the stream name. A stream of [NewPrefetch]
// checks them itself, on the batches it hands out, with no copy of the
// previous key (Strict must then come before its first Next); any other
// stream is wrapped.
func Strict(it Iter, name string) Iter {
	if p, ok := it.(*prefetchIter); ok {
		p.strict(name)
		return p
	}
	return &strictIter{it: it, name: name}
}

// strictIter passes on the keys of it and fails as soon as they do not
// strictly ascend: a merge-join trusts the order of both its streams, and a
// key out of order would make it skip a match.
type strictIter struct {
	it   Iter
	name string
	last []byte
	seen bool
}

func (s *strictIter) Next() ([]byte, bool, error) {
	k, ok, err := s.it.Next()
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

func (s *strictIter) Close() error { return s.it.Close() }

// ascends is the order check of strictIter and of a strict prefetchIter: an
// error naming the stream name unless k comes after prev.
func ascends(name string, k, prev []byte) error {
	if bytes.Compare(k, prev) <= 0 {
		return fmt.Errorf("extsort: %s out of order: %q after %q", name, k, prev)
	}
	return nil
}
