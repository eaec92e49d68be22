package sweep

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
)

// This file is the counted keep index: how a run records its committed keep
// set with each key's reference count, and how the next run starts from it,
// reading only what changed.

// The records of the keep index, beside state.json.
const (
	indexName  = recordDir + "index"
	stagedName = recordDir + "staged"
	partsName  = recordDir + "parts"
)

// Kinds of keep index, in the state.
const (
	kindParts    = "parts"    // counts of Inputs.Parts
	kindMultiset = "multiset" // a flat keep set (Inputs.Committed): how many times it gave each key
	// kindSet is a flat keep set's index of an older version, which
	// counted each key once however many times it was given: read, never
	// combined with Changes, never written.
	kindSet = "set"
)

// Where a run's committed keep set came from, in Summary.KeepSource; ""
// is Inputs.Committed, read in full.
const (
	// KeepChanges: the previous run's keep index and Inputs.Changes.
	KeepChanges = "changes"
	// KeepParts: every part of Inputs.Parts.
	KeepParts = "parts"
	// KeepPartsChanged: the previous run's keep index and the parts that
	// appeared or left since.
	KeepPartsChanged = "parts-changed"
)

// copyRecord copies the counted stream at key in the bucket to a spill file,
// verifying all of it on the way (keycount.CopyFile); it returns the file's
// name and the entries read.
func (m *marker) copyRecord(ctx context.Context, key string, f *keycount.Format) (string, int64, error) {
	r, err := m.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", 0, fmt.Errorf("sweep: read %s: %w", key, err)
	}
	defer r.Close()
	return keycount.CopyFile(ctx, m.spill, r, f)
}

// copyChecked copies the record at key in the bucket to a spill file,
// checking only its magic and checksum (keycount.CopyCheckedFile): a copy at
// the speed of the store and the disk. Its entries are checked as they are
// read; one that breaks the format then fails the run (only a faulty writer
// makes one whose checksum holds).
func (m *marker) copyChecked(ctx context.Context, key string, f *keycount.Format) (string, error) {
	r, err := m.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", fmt.Errorf("sweep: read %s: %w", key, err)
	}
	defer r.Close()
	name, err := keycount.CopyCheckedFile(ctx, m.spill, r, f)
	if err != nil && !errors.Is(err, f.Corrupt) {
		err = fmt.Errorf("sweep: read %s: %w", key, err)
	}
	return name, err
}

// committed is how this run counts its committed keep set: the spill files
// of counts made while the namespace was listed, the previous run's keep
// index when the counts are relative to it, and sorted flat keys.
type committed struct {
	source    string // Summary.KeepSource
	kind      string
	version   string          // Parts.Version
	files     []string        // spill files of counts (deltaFormat)
	index     bool            // the previous index's counts join
	flat      *extsort.Sorter // Committed's keys, repeats kept (+1 each)
	added     *extsort.Sorter // Changes.Added, repeats kept (+1 each)
	removed   *extsort.Sorter // Changes.Removed, repeats kept (−1 each)
	stats     []keycount.Stat // the parts read in full, or the parts added
	gone      map[string]bool // the parts that left the set
	partsRead int64
}

func removeAll(names []string) {
	for _, n := range names {
		os.Remove(n)
	}
}

// release removes what c holds that was not handed to a stream.
func (c *committed) release() {
	removeAll(c.files)
	for _, s := range []*extsort.Sorter{c.flat, c.added, c.removed} {
		if s != nil {
			s.Release()
		}
	}
}

// readParts reads the committed keep set given as parts: the parts that
// changed since the previous run, or all of them, into spill files. It uses
// no sorter of the inputs (see readAndList): readAndList runs it on a
// goroutine of its own while the uncommitted keys are read.
func (m *marker) readParts(ctx context.Context, p *Parts, prev *previous) (*committed, error) {
	c := &committed{kind: kindParts, version: p.Version}
	ids := partIDs(p)
	if prev != nil && prev.state.KeepKind == kindParts && prev.partsFile != "" && prev.state.PartsVersion != p.Version {
		m.log("sweep: counting every part", "why", "the parts' version changed", "previous", prev.state.PartsVersion, "version", p.Version)
	} else if prev != nil && prev.state.KeepKind == kindParts && prev.partsFile != "" {
		err := m.partsChanged(ctx, p, ids, prev, c)
		if err == nil {
			return c, nil
		}
		c.release()
		if !errors.Is(err, keycount.ErrChanged) {
			return nil, err
		}
		m.log("sweep: counting every part", "why", err.Error())
		c = &committed{kind: kindParts, version: p.Version}
	}
	c.source = KeepParts
	var err error
	c.files, c.stats, err = m.partSource(p, c).Count(ctx, m.spill, ids, 1, nil, m.budgets().fanIn)
	return c, err
}

// readCommitted reads a flat committed keep set (Inputs.Parts is nil), on
// the goroutine that read the uncommitted keys, after them: Changes' keys,
// or Committed's, into sorters. keep holds the uncommitted keys; their
// block moves to hold first, so that a sorter of committed keys has its
// memory. It returns the last sorter, whose block's unused share the pool
// gets.
func (m *marker) readCommitted(ctx context.Context, in Inputs, prev *previous, keep, hold *extsort.Sorter) (*committed, *extsort.Sorter, error) {
	sh := m.budgets()
	share := sh.keep - sh.young
	// A flat keep set, counted: each key by how many times it is given.
	// Changes when they are relative to the run this one starts from and
	// its index counted a flat keep set so; else Committed.
	if err := hold.Adopt(keep); err != nil {
		return nil, nil, err
	}
	c := &committed{kind: kindMultiset}
	why := m.changesUnusable(in.Changes, prev)
	if why == "" {
		ch := in.Changes
		c.source, c.index = KeepChanges, true
		added := extsort.NewRepeatSorter(m.spill, share, sh.fanIn)
		c.added = added
		if err := readKeep(ctx, ch.Added, added); err != nil {
			return c, hold, err
		}
		// Its block goes to a run, so that Removed has the memory.
		c.added = extsort.NewRepeatSorter(m.spill, 4096, sh.fanIn)
		if err := c.added.Adopt(added); err != nil {
			added.Release()
			return c, hold, err
		}
		c.removed = extsort.NewRepeatSorter(m.spill, share, sh.fanIn)
		if err := readKeep(ctx, ch.Removed, c.removed); err != nil {
			return c, hold, err
		}
		return c, c.removed, nil
	}
	if in.Changes != nil {
		m.log("sweep: committed keep set read in full", "changes_since", in.Changes.Since, "why", why)
	}
	c.flat = extsort.NewRepeatSorter(m.spill, share, sh.fanIn)
	if err := readKeep(ctx, in.Committed, c.flat); err != nil {
		return c, hold, err
	}
	return c, c.flat, nil
}

// changesUnusable says why Mark cannot count from ch, the changes of a flat
// keep set, and the previous run's index: "" when it can.
func (m *marker) changesUnusable(ch *Changes, prev *previous) string {
	switch {
	case ch == nil:
		return "no changes"
	case prev == nil:
		return "a clean run"
	case ch.Since != m.cfg.previous:
		return "the changes are since another run"
	case prev.state.KeepKind != kindMultiset:
		return fmt.Sprintf("the previous keep index is of kind %q, not %q", prev.state.KeepKind, kindMultiset)
	}
	return ""
}

// partSource is where the parts of p are read from: their keys checked as
// readKeep checks keep keys, the parts read to their end counted in c.
func (m *marker) partSource(p *Parts, c *committed) *keycount.Parts {
	check := func(k []byte) error { return keepKeyErr(unsafe.String(unsafe.SliceData(k), len(k))) }
	return &keycount.Parts{Open: p.Open, Check: check, Invalid: ErrInvalidInput, Read: &c.partsRead, ReadAhead: p.ReadAhead}
}

// partsChanged counts the parts added since the previous run (+1) and those
// that left the set (−1), relative to the previous run's keep index; an
// error wrapping keycount.ErrChanged says to count every part instead.
func (m *marker) partsChanged(ctx context.Context, p *Parts, ids []string, prev *previous, c *committed) error {
	c.source, c.index = KeepPartsChanged, true
	c.gone = map[string]bool{}
	var added []string
	want := map[string]keycount.Stat{}
	// Both lists ascend: one walk finds what changed.
	pr, err := keycount.OpenFile(prev.partsFile, partsFormat, m.spill.IOBuf())
	if err != nil {
		return err
	}
	var i int
	for {
		k, n, aux, ok, err := pr.Entry()
		if err != nil {
			pr.Close()
			return err
		}
		if !ok {
			break
		}
		for i < len(ids) && ids[i] < string(k) {
			added = append(added, ids[i])
			i++
		}
		if i < len(ids) && ids[i] == string(k) {
			i++
			continue
		}
		id := string(k)
		c.gone[id] = true
		want[id] = keycount.Stat{ID: id, Keys: n, Sum: uint32(aux)}
	}
	pr.Close() // the file stays: the new parts record is written from it
	added = append(added, ids[i:]...)
	removed := slices.Sorted(mapKeys(c.gone))
	src := m.partSource(p, c)
	c.files, c.stats, err = src.Count(ctx, m.spill, added, 1, nil, m.budgets().fanIn)
	if err != nil {
		return err
	}
	gone, _, err := src.Count(ctx, m.spill, removed, -1, want, m.budgets().fanIn)
	c.files = append(c.files, gone...)
	return err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// counts returns the committed keep set's counts, once the inputs are read:
// when the previous run's keep index holds the counts (c.index), their
// changes since, which the join adds to the index's.
func (m *marker) counts(c *committed) (keycount.Iter, error) {
	fanIn := m.budgets().fanIn
	var iters []keycount.Iter
	closeAll := func() {
		for _, it := range iters {
			it.Close()
		}
	}
	if len(c.files) > 0 {
		it, err := keycount.MergeSpills(m.spill, c.files, fanIn-3)
		c.files = nil
		if err != nil {
			return nil, err
		}
		iters = append(iters, it)
	}
	// A flat keep set's sorters keep repeats: each key counts w for every
	// time it was given.
	for _, side := range []struct {
		s    **extsort.Sorter
		w    int64
		what string
	}{{&c.flat, 1, "committed keep set"}, {&c.added, 1, "committed keep set's additions"}, {&c.removed, -1, "committed keep set's removals"}} {
		if *side.s == nil {
			continue
		}
		it, err := (*side.s).Finish()
		*side.s = nil
		if err != nil {
			closeAll()
			return nil, err
		}
		iters = append(iters, newRepeatCounts(it, side.w, side.what))
	}
	// Read ahead on a goroutine of its own, as the listing and the
	// uncommitted keys are: the merges run while the join compares and
	// writes.
	return keycount.Prefetch(keycount.NewMerge(iters)), nil
}

// indexStreams sets js's previous keep index: its committed and staged
// indexes, whose counts are this run's starting point when c.index; none
// when there is no index.
func (m *marker) indexStreams(js *joinStreams, c *committed, prev *previous) error {
	if prev == nil || prev.indexFile == "" {
		if c.index {
			return fmt.Errorf("%w: counts relative to a keep index the previous run did not leave", errBadIndex)
		}
		return nil
	}
	ci, err := openCindex(prev.indexFile, m.spill.IOBuf(), prev.state.IndexKeys)
	if err != nil {
		return err
	}
	f, err := keycount.OpenFile(prev.stagedFile, stagedFormat, m.spill.IOBuf())
	if err != nil {
		ci.Close()
		return fmt.Errorf("sweep: previous run's staged index: %w", err)
	}
	js.committed = ci
	js.stagedIdx = newIndexIter(&indexSource{f: f, want: prev.state.StagedKeys})
	js.base, js.carry = c.index, prev.carry
	if c.index && !prev.recheck && !m.cfg.sharded() && m.cfg.recognize == nil {
		js.copyable = m.copyable(prev)
	}
	return nil
}

// copyable returns whether a block of the previous run's committed index
// lies where this run decides nothing on its own account: every key of it
// in slices this run does not list (older than the previous run's boundary,
// not young), older than this run's cutoff, and under no wall. The block's
// first key is in its newest slice (slices' names descend with time), its
// last in its oldest, and every slice between them is between them in
// time.
func (m *marker) copyable(prev *previous) func(h *blockHeader) bool {
	data := m.cfg.dataPrefix + "/"
	young := slices.Sorted(mapKeys(prev.young))
	return func(h *blockHeader) bool {
		if h.flags != blockFlags {
			return false
		}
		first, t, ok := sliceOf(h.first, data)
		if !ok || !prev.skip(first, t) || !t.Before(m.sum.CutoffTime) {
			return false
		}
		// Names descend with time but where xid's seconds wrap: a last
		// slice newer than the first is across it.
		last, tl, ok := sliceOf(h.last, data)
		if !ok || tl.After(t) {
			return false
		}
		if i, _ := slices.BinarySearch(young, first); i < len(young) && young[i] <= last {
			return false
		}
		return !wallsMeet(m.walls, h.first, h.last)
	}
}

// wallsMeet reports whether a key under one of walls (sorted) can lie
// between first and last.
func wallsMeet(walls []string, first, last []byte) bool {
	for _, w := range walls {
		if w > string(last) {
			return false
		}
		if w >= string(first) || bytes.HasPrefix(first, []byte(w)) {
			return true
		}
	}
	return false
}

// indexWriter streams this run's keep index to the bucket; nothing is
// visible under its name unless close succeeds. The entries are encoded and
// written on a goroutine of its own, in batches, so that the join goes on
// while they are: add, close and abort are for one goroutine.
type indexWriter struct {
	bw     *blobio.Writer
	w      *bufio.Writer
	enc    entrySink
	key    string
	listed int64

	cur  *entryBatch
	full chan *entryBatch // batches to encode, in order; closed by close or abort
	free chan *entryBatch // batches encoded, to fill again
	done chan struct{}    // closed when the goroutine has returned
	err  error            // the goroutine's first error; read after done or failed
	// failed is set after err: the goroutine encodes no more.
	failed atomic.Bool
	ended  bool // full is closed
}

// entrySink is what an indexWriter encodes to: a keycount.Encoder, or a
// cindexEncoder, which takes whole blocks too (rawSink).
type entrySink interface {
	Add(key []byte, count int64, aux uint64) error
	Finish() error
	N() int64
	Sum() uint32 // the checksum Finish wrote
}

type rawSink interface {
	Raw(h *blockHeader, body []byte) error
}

// entryBatch is a run of consecutive entries: the i-th key ends at ends[i];
// or, with raw set, a block of a previous committed index, its header and
// its body (data).
type entryBatch struct {
	data   []byte
	ends   []uint32
	counts []int64
	aux    []uint64
	raw    bool
	hdr    blockHeader
}

// Batches of an indexWriter: at most about 3 × 128 KiB of keys.
const (
	entryBatchBytes = 128 << 10
	entryBatchKeys  = 4096
	entryBatches    = 3
)

func newIndexWriter(ctx context.Context, bucket *blob.Bucket, key string, f *keycount.Format, bufSize int) (*indexWriter, error) {
	return newSinkWriter(ctx, bucket, key, bufSize, func(w io.Writer) entrySink { return keycount.NewEncoder(w, f, bufSize) })
}

// newSinkWriter is newIndexWriter with the encoder sink returns.
func newSinkWriter(ctx context.Context, bucket *blob.Bucket, key string, bufSize int, sink func(io.Writer) entrySink) (*indexWriter, error) {
	bw, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	iw := &indexWriter{bw: bw, w: bufio.NewWriterSize(bw, bufSize), key: key,
		full: make(chan *entryBatch, entryBatches), free: make(chan *entryBatch, entryBatches), done: make(chan struct{})}
	iw.enc = sink(iw.w)
	for range entryBatches - 1 {
		iw.free <- &entryBatch{}
	}
	iw.cur = &entryBatch{}
	go iw.run()
	return iw, nil
}

// run encodes the batches until full closes; after an error it only hands
// them back.
func (iw *indexWriter) run() {
	defer close(iw.done)
	for b := range iw.full {
		if b.raw && iw.err == nil {
			if iw.err = iw.enc.(rawSink).Raw(&b.hdr, b.data); iw.err != nil {
				iw.failed.Store(true)
			}
		}
		for i := 0; iw.err == nil && !b.raw && i < len(b.ends); i++ {
			start := uint32(0)
			if i > 0 {
				start = b.ends[i-1]
			}
			if iw.err = iw.enc.Add(b.data[start:b.ends[i]], b.counts[i], b.aux[i]); iw.err != nil {
				iw.failed.Store(true)
			}
		}
		b.data, b.ends, b.counts, b.aux, b.raw = b.data[:0], b.ends[:0], b.counts[:0], b.aux[:0], false
		iw.free <- b // never blocks: free has room for every batch
	}
}

func (iw *indexWriter) add(key []byte, count int64, aux uint64) error {
	b := iw.cur
	b.data = append(b.data, key...)
	b.ends = append(b.ends, uint32(len(b.data)))
	b.counts = append(b.counts, count)
	b.aux = append(b.aux, aux)
	if aux&idxListed != 0 {
		iw.listed++
	}
	if len(b.data) >= entryBatchBytes || len(b.ends) >= entryBatchKeys {
		return iw.send()
	}
	return nil
}

// raw adds a block of a previous committed index, whole, after the entries
// added; the writer's sink must be a rawSink.
func (iw *indexWriter) raw(h *blockHeader, body []byte) error {
	if len(iw.cur.ends) > 0 {
		if err := iw.send(); err != nil {
			return err
		}
	}
	b := iw.cur
	b.raw = true
	b.data = append(b.data[:0], body...)
	b.hdr.first = append(b.hdr.first[:0], h.first...)
	b.hdr.last = append(b.hdr.last[:0], h.last...)
	b.hdr.n, b.hdr.listed, b.hdr.recognized, b.hdr.flags, b.hdr.size = h.n, h.listed, h.recognized, h.flags, h.size
	iw.listed += h.listed
	return iw.send()
}

// send hands the current batch to the goroutine and takes a free one.
func (iw *indexWriter) send() error {
	if iw.failed.Load() {
		return fmt.Errorf("sweep: write %s: %w", iw.key, iw.err)
	}
	iw.full <- iw.cur
	iw.cur = <-iw.free
	return nil
}

// finish hands over the last batch, closes full and waits for the
// goroutine: its error, if any.
func (iw *indexWriter) finish() error {
	if !iw.ended {
		iw.ended = true
		if iw.cur != nil && len(iw.cur.ends) > 0 {
			iw.full <- iw.cur // room: the goroutine hands each batch back
		}
		iw.cur = nil
		close(iw.full)
	}
	<-iw.done
	return iw.err
}

func (iw *indexWriter) close() error {
	err := iw.finish()
	if err == nil {
		err = iw.enc.Finish()
	}
	if err == nil {
		err = iw.w.Flush()
	}
	if err != nil {
		iw.bw.Abort()
		return fmt.Errorf("sweep: write %s: %w", iw.key, err)
	}
	if err := iw.bw.Close(); err != nil {
		return fmt.Errorf("sweep: write %s: %w", iw.key, err)
	}
	return nil
}

func (iw *indexWriter) abort() {
	iw.finish()
	iw.bw.Abort()
}

// writeParts writes this run's parts record: the previous record's parts
// less those gone, and the parts read (all of them, or those added).
func (m *marker) writeParts(ctx context.Context, c *committed, prev *previous) (int64, error) {
	iw, err := newIndexWriter(ctx, m.bucket, m.dir+partsName, partsFormat, m.spill.IOBuf())
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) { iw.abort(); return 0, err }
	stats := c.stats
	slices.SortFunc(stats, func(a, b keycount.Stat) int { return strings.Compare(a.ID, b.ID) })
	put := func(s keycount.Stat) error { return iw.add([]byte(s.ID), s.Keys, uint64(s.Sum)) }
	var n int64
	if c.source == KeepPartsChanged {
		pr, err := keycount.OpenFile(prev.partsFile, partsFormat, m.spill.IOBuf())
		if err != nil {
			return fail(err)
		}
		defer pr.Close()
		for {
			k, keys, aux, ok, err := pr.Entry()
			if err != nil {
				return fail(err)
			}
			if !ok {
				break
			}
			for len(stats) > 0 && stats[0].ID < string(k) {
				if err := put(stats[0]); err != nil {
					return fail(err)
				}
				stats, n = stats[1:], n+1
			}
			if c.gone[string(k)] {
				continue
			}
			if err := iw.add(k, keys, aux); err != nil {
				return fail(err)
			}
			n++
		}
	}
	for _, s := range stats {
		if err := put(s); err != nil {
			return fail(err)
		}
		n++
	}
	return n, iw.close()
}
