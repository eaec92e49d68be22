package sweep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
	"github.com/lakegc/lakegc/internal/layout"
)

// This file is the join: one walk, in key order, over every stream that
// says something of a key — the listing, the staged keys, the committed
// counts and the previous run's keep index (its committed index and its
// staged index) — that judges each key once.
//
// In an optimized run most keys are committed keys of slices the run does
// not list, unchanged since the previous run: the committed index holds
// them in blocks (cindex.go), and a block that no other stream changes is
// copied to this run's committed index as it is, undecoded, its header's
// numbers added to the counts. A block is decoded when the listing, a
// change of the counts or a walled folder reaches into it, when it lies in
// a slice the run lists or that is not older than the cutoff, or when a
// staged key in its range is not in the previous run's staged index (the
// block may hold its count and its listed flag). The staged index is read
// whole, as the staged keys are: a key that left staging is judged from it
// (its count, and its listed flag), without the committed index. So an
// optimized run costs O(staged keys + changes + listed keys + blocks), not
// O(committed keys).

// joinStreams are the join's inputs. Each must strictly ascend (each is
// checked: a key out of order fails the run, since the walk would skip a
// match).
type joinStreams struct {
	// list is the listed keys: the slices and folders this run lists, and
	// the keys carried from records other than the keep index (a version
	// 1 run's live record, a previous run's candidates).
	list extsort.Iter
	// staged is the keys kept whatever the committed counts say: the
	// uncommitted keys and the young listed ones.
	staged extsort.Iter
	// counts is the committed keys' counts, or when the previous run's
	// index holds the counts (base), their changes since; nil: none.
	counts keycount.Iter
	// committed and stagedIdx are the previous run's committed and staged
	// indexes; nil: none (both or neither).
	committed *cindexReader
	stagedIdx *indexIter
	// base says the indexes' counts are this run's starting point, counts
	// their changes; else only their listed flags are used.
	base bool
	// carry reports whether a listed key of the previous run's records is
	// in a slice this run does not list (and is recognized): it is judged
	// from them.
	carry func([]byte) bool
	// copyable reports whether a block of the committed index lies where
	// this run decides nothing on its own account (slices it does not
	// list, older than the cutoff, no wall); nil: no block is copied.
	copyable func(h *blockHeader) bool
}

// close closes every stream js holds.
func (js *joinStreams) close() error {
	var errs []error
	if js.list != nil {
		errs = append(errs, js.list.Close())
	}
	if js.staged != nil {
		errs = append(errs, js.staged.Close())
	}
	if js.counts != nil {
		errs = append(errs, js.counts.Close())
	}
	if js.committed != nil {
		errs = append(errs, js.committed.Close())
	}
	if js.stagedIdx != nil {
		errs = append(errs, js.stagedIdx.Close())
	}
	return errors.Join(errs...)
}

// indexSource is the previous run's staged index as the join reads it:
// each entry's count and listed flag packed after its key. An extsort.Iter,
// read ahead by an extsort.NewPrefetch.
type indexSource struct {
	f    *keycount.File
	want int64 // the entries the index must hold
	buf  []byte
}

func (s *indexSource) Next() ([]byte, bool, error) {
	k, c, aux, ok, err := s.f.Entry()
	if err != nil {
		return nil, false, fmt.Errorf("sweep: previous run's staged index: %w", err)
	}
	if !ok {
		if s.f.Count() != s.want {
			return nil, false, fmt.Errorf("%w: %d staged entries, its state says %d", errBadIndex, s.f.Count(), s.want)
		}
		return nil, false, nil
	}
	s.buf = binary.LittleEndian.AppendUint64(append(s.buf[:0], k...), uint64(c))
	s.buf = append(s.buf, byte(aux&idxListed))
	return s.buf, true, nil
}

func (s *indexSource) Close() error { return s.f.Close() }

// indexIter returns the entries of an indexSource, read ahead.
type indexIter struct{ p extsort.Iter }

func newIndexIter(s *indexSource) *indexIter { return &indexIter{p: extsort.NewPrefetch(s)} }

// Next returns the next entry's key (valid until the next call), count and
// listed flag.
func (it *indexIter) Next() ([]byte, int64, bool, bool, error) {
	b, ok, err := it.p.Next()
	if err != nil || !ok {
		return nil, 0, false, false, err
	}
	n := len(b) - 9
	return b[:n:n], int64(binary.LittleEndian.Uint64(b[n:])), b[n+8]&idxListed != 0, true, nil
}

func (it *indexIter) Close() error { return it.p.Close() }

// Bounds of what the walk reads ahead of a stream to decide whether a block
// is copied, at most (less with a small memory budget: 16 file buffers):
// past them, the block is decoded.
const (
	peekKeys  = 1 << 15
	peekBytes = 1 << 20
)

// peeked is a stream of keys, with a count and a flag each, that can be
// read ahead: Next returns its entries in order, each key valid until the
// next call of Next (a key read ahead stays in the queue until then, one
// not read ahead is copied); at reads ahead of the last one Next
// returned. Not safe for concurrent use.
type peeked struct {
	next func() ([]byte, int64, bool, bool, error)
	// maxKeys and maxBytes bound the read ahead (0: peekKeys, peekBytes).
	maxKeys, maxBytes int
	ended             bool
	cur               []byte
	q                 []peekEntry // read ahead, from qi on
	data              []byte
	qi                int
}

type peekEntry struct {
	end   int // of its key in data
	count int64
	flag  bool
}

func (p *peeked) read() ([]byte, int64, bool, bool, error) {
	if p.ended {
		return nil, 0, false, false, nil
	}
	k, c, f, ok, err := p.next()
	if err == nil && !ok {
		p.ended = true
	}
	return k, c, f, ok, err
}

func (p *peeked) key(i int) []byte {
	start := 0
	if i > 0 {
		start = p.q[i-1].end
	}
	return p.data[start:p.q[i].end:p.q[i].end]
}

// Next returns the next entry.
func (p *peeked) Next() ([]byte, int64, bool, bool, error) {
	// The key the last call returned, and those at returned, are no longer
	// used: the queue may move.
	if p.qi > 0 && p.qi == len(p.q) {
		p.q, p.data, p.qi = p.q[:0], p.data[:0], 0
	} else if p.qi >= 64 && 2*p.qi >= len(p.q) {
		// Half of the queue is behind Next: it leaves, so that the queue
		// holds at most twice its bounds.
		start := p.q[p.qi-1].end
		p.data = p.data[:copy(p.data, p.data[start:])]
		n := copy(p.q, p.q[p.qi:])
		p.q, p.qi = p.q[:n], 0
		for j := range p.q {
			p.q[j].end -= start
		}
	}
	if p.qi < len(p.q) {
		// The key stays in the queue until the next call: at only
		// appends to it.
		e := p.q[p.qi]
		k := p.key(p.qi)
		p.qi++
		return k, e.count, e.flag, true, nil
	}
	k, c, f, ok, err := p.read()
	if err != nil || !ok {
		return nil, 0, false, false, err
	}
	p.cur = append(p.cur[:0], k...)
	return p.cur, c, f, true, nil
}

// errPeekFull says a read ahead passed its bounds.
var errPeekFull = errors.New("sweep: read ahead full")

// at returns the key of the i-th entry after the last one Next returned
// (i ≥ 0), valid until the next call of Next; false past the end,
// errPeekFull when more than maxKeys entries or maxBytes bytes would be
// read ahead.
func (p *peeked) at(i int) ([]byte, bool, error) {
	for p.qi+i >= len(p.q) {
		// The bounds count what is ahead of Next (the entries it returned
		// leave the queue in Next).
		start := 0
		if p.qi > 0 {
			start = p.q[p.qi-1].end
		}
		if len(p.data)-start >= cmp.Or(p.maxBytes, peekBytes) || len(p.q)-p.qi >= cmp.Or(p.maxKeys, peekKeys) {
			return nil, false, errPeekFull
		}
		k, c, f, ok, err := p.read()
		if err != nil || !ok {
			return nil, false, err
		}
		p.data = append(p.data, k...)
		p.q = append(p.q, peekEntry{end: len(p.data), count: c, flag: f})
	}
	return p.key(p.qi + i), true, nil
}

// writeCandidates is joinCandidates, then the candidates' part closed: it
// returns the number of candidates.
func (m *marker) writeCandidates(ctx context.Context, js joinStreams) (int64, error) {
	w, err := m.joinCandidates(ctx, js)
	if err != nil {
		return 0, err
	}
	return m.closeCandidates(w)
}

// closeCandidates closes the candidates' part w and returns its rows; the
// summary gets its size.
func (m *marker) closeCandidates(w *partWriter[addressRow]) (int64, error) {
	if err := w.Close(); err != nil {
		return 0, err
	}
	m.sum.CandidatesBytes = w.Size()
	return w.Rows(), nil
}

// joinCandidates walks the join's streams and writes the listed keys that
// are not kept, nor under a wall, to deleted/, once the canary passed; with
// m.rec, it records every key of the keep set with its count and listed
// flag. A key is listed when the listing holds it or the index carries it;
// kept when it is staged or counted above 0. A count below 0 (the changes
// contradict the previous index) or a stream out of order fails the run.
// It returns the candidates' part with every row written and the canary
// passed, for the caller to close (or abort); on an error, the part is
// aborted.
func (m *marker) joinCandidates(ctx context.Context, js joinStreams) (*partWriter[addressRow], error) {
	js.list = extsort.Strict(js.list, "listing")
	js.staged = extsort.Strict(js.staged, "keep set")
	if js.counts == nil {
		js.counts = keycount.Nop{}
	}
	w, err := newPartWriter[addressRow](ctx, m.bucket, m.dir+layout.DeletedFolder+partName)
	if err != nil {
		return nil, err
	}
	j := &joiner{m: m, ctx: ctx, w: w, can: newCanaryCount(m.cfg, m.sum.CutoffTime), walls: layout.NewWallCursor(m.walls)}
	err = j.walk(&js)
	m.sum.IndexBlocksCopied, m.sum.IndexBlocksDecoded = j.copied, j.decoded
	if err != nil {
		w.Abort()
		return nil, err
	}
	if js.committed != nil {
		m.log("sweep: previous committed index read", "blocks_copied", j.copied, "blocks_decoded", j.decoded)
	}
	// Every entry of the keep index encoded before the candidates part is
	// closed: a run whose index failed to encode leaves no candidates
	// part. The indexes' uploads end beside the part's (in join), and a
	// run whose upload fails fails: no state names it, and its
	// candidates are never swept.
	if m.rec != nil {
		for _, iw := range []*indexWriter{m.rec.index, m.rec.staged} {
			if err := iw.finish(); err != nil {
				w.Abort()
				return nil, fmt.Errorf("sweep: write %s: %w", iw.key, err)
			}
		}
	}
	m.sum.NumWalledObjects = j.total.Walled
	// The canary judges the keep set: a key the check spared is one the
	// keep set did not hold, so it counts as marked there — or a check
	// that spares a few keys would hide a keep set that matches nothing
	// from rule B.
	if err := j.can.check(m.cfg.canary, m.cnt.snapshot().Young, j.total.Kept-j.spared, j.total.Walled, j.total.Marked+j.spared); err != nil {
		w.Abort()
		return nil, err
	}
	m.cnt.phase("write")
	return w, nil
}

// joiner judges the keys of the join one by one. Not safe for concurrent
// use.
type joiner struct {
	m     *marker
	ctx   context.Context
	w     *partWriter[addressRow]
	can   *canaryCount
	walls *layout.WallCursor
	arena strArena

	steps                int
	kept, marked, walled int64
	total                Progress
	// spared counts the candidates the check kept: in total.Kept for the
	// summary, but candidates of the keep set for the canary.
	spared int64
	// With WithCandidateCheck, candidates wait in pending until the
	// check has seen a batch of them.
	pending []string
	spare   []bool
	// copied counts the blocks of the committed index copied, and
	// decoded those decoded.
	copied, decoded int64
}

// walk judges every key of the streams, in order.
func (j *joiner) walk(js *joinStreams) error {
	var (
		lk, sk, dk, ck, uk      []byte
		lok, sok, dok, cok, uok bool
		dc, cc, uc              int64
		cl, ul                  bool
		err                     error
	)
	maxBytes := min(peekBytes, 16*j.m.budgets().ioBuf)
	maxKeys := max(maxBytes/16, 64)
	S := &peeked{next: func() ([]byte, int64, bool, bool, error) {
		k, ok, err := js.staged.Next()
		return k, 0, false, ok, err
	}, maxKeys: maxKeys, maxBytes: maxBytes}
	U := &peeked{ended: true, maxKeys: maxKeys, maxBytes: maxBytes}
	if js.stagedIdx != nil {
		U.ended, U.next = false, js.stagedIdx.Next
	}
	C := js.committed
	// hdr is the committed index's next block, neither decoded nor
	// copied yet; nil: none (a block is being decoded, or the index
	// ended).
	var hdr *blockHeader
	inBlock := false
	nextC := func() error {
		if inBlock {
			if ck, cc, cl, cok, err = C.entry(); err != nil || cok {
				return err
			}
			inBlock = false
		}
		var ok bool
		if hdr, ok, err = C.next(); err != nil {
			return err
		}
		if !ok {
			hdr = nil
		}
		return nil
	}
	if lk, lok, err = js.list.Next(); err != nil {
		return err
	}
	if sk, _, _, sok, err = S.Next(); err != nil {
		return err
	}
	if dk, dc, dok, err = js.counts.Next(); err != nil {
		return err
	}
	if uk, uc, ul, uok, err = U.Next(); err != nil {
		return err
	}
	if C != nil {
		if err := nextC(); err != nil {
			return err
		}
	}
	// shadow is the last key of the last block copied: the staged index's
	// committed keys up to it are in that block, counted there.
	var shadow []byte
	for {
		// The common case of an optimized run, judged without the general
		// path's comparisons: the least key is a staged key that the
		// previous staged index holds counted 0, and no other stream is at
		// it; key would judge it so (count 0, listed if carried). It stays
		// below the next block's first key: keys are judged in ascending
		// order (the walls' cursor depends on it), and a decoded block's
		// keys meet the staged index's counts.
		for sok && uok && uc == 0 && bytes.Equal(sk, uk) &&
			(!lok || bytes.Compare(sk, lk) < 0) && (!dok || bytes.Compare(sk, dk) < 0) &&
			(!cok || bytes.Compare(sk, ck) < 0) && (hdr == nil || bytes.Compare(sk, hdr.first) < 0) {
			if err := j.judge(sk, false, true, 0, ul && js.carry(sk)); err != nil {
				return err
			}
			if sk, _, _, sok, err = S.Next(); err != nil {
				return err
			}
			if uk, uc, ul, uok, err = U.Next(); err != nil {
				return err
			}
		}
		// other is the least head of the streams but the committed index.
		other, otherOK := lk, lok
		if sok && (!otherOK || bytes.Compare(sk, other) < 0) {
			other, otherOK = sk, true
		}
		if dok && (!otherOK || bytes.Compare(dk, other) < 0) {
			other, otherOK = dk, true
		}
		if uok && (!otherOK || bytes.Compare(uk, other) < 0) {
			other, otherOK = uk, true
		}
		if hdr != nil && (!otherOK || bytes.Compare(other, hdr.first) >= 0) {
			// Every key below the block is judged: copy it, or decode it.
			copied, err := j.copyBlock(js, hdr, S, U, lk, lok, sk, sok, dk, dok, uk, uok)
			if err != nil {
				return err
			}
			if copied {
				shadow = append(shadow[:0], hdr.last...)
				if err := nextC(); err != nil {
					return err
				}
				continue
			}
			j.decoded++
			if err := C.decode(); err != nil {
				return err
			}
			hdr, inBlock = nil, true
			if err := nextC(); err != nil {
				return err
			}
			if !cok {
				return fmt.Errorf("%w: an empty block", errBadIndex)
			}
		}
		k, ok := other, otherOK
		if cok && (!ok || bytes.Compare(ck, k) < 0) {
			k, ok = ck, true
		}
		if !ok {
			break
		}
		inL := lok && bytes.Equal(lk, k)
		inS := sok && bytes.Equal(sk, k)
		inD := dok && bytes.Equal(dk, k)
		inC := cok && bytes.Equal(ck, k)
		inU := uok && bytes.Equal(uk, k)
		if err := j.key(js, k, inL, inS, inD, inC, inU, dc, cc, uc, cl, ul, shadow); err != nil {
			return err
		}
		// k is the head of a stream that moves on now: it is not used
		// after.
		if inL {
			if lk, lok, err = js.list.Next(); err != nil {
				return err
			}
		}
		if inS {
			if sk, _, _, sok, err = S.Next(); err != nil {
				return err
			}
		}
		if inD {
			if dk, dc, dok, err = js.counts.Next(); err != nil {
				return err
			}
		}
		if inU {
			if uk, uc, ul, uok, err = U.Next(); err != nil {
				return err
			}
		}
		if inC {
			if err := nextC(); err != nil {
				return err
			}
		}
	}
	if err := j.flush(); err != nil {
		return err
	}
	j.report()
	return j.ctx.Err()
}

// key judges the key k, which the streams named hold (with the counts and
// flags given); shadow is the last key of the last block copied.
func (j *joiner) key(js *joinStreams, k []byte, inL, inS, inD, inC, inU bool, dc, cc, uc int64, cl, ul bool, shadow []byte) error {
	if shadow != nil && bytes.Compare(k, shadow) <= 0 {
		// In the range of a block copied: only staged keys of the staged
		// index come here (copyBlock checked it).
		if inL || inD || inC || inS && !inU {
			return fmt.Errorf("sweep: key %q in a block copied", k)
		}
		if inU && uc > 0 {
			// In the block copied, and counted there.
			if inS && j.m.rec != nil {
				return j.m.rec.entry(k, uc, ul, true, false)
			}
			return nil
		}
	}
	var base int64
	switch {
	case inC:
		base = cc
		if inU && uc != cc {
			return fmt.Errorf("%w: key %q counted %d in the staged index, %d in the committed one", errBadIndex, k, uc, cc)
		}
	case inU:
		base = uc
		if uc > 0 {
			return fmt.Errorf("%w: key %q counted %d in the staged index, not in the committed one", errBadIndex, k, uc)
		}
	}
	var count int64
	if inD {
		count = dc
	}
	if js.base {
		count += base
	}
	carried := (inC && cl || inU && ul) && js.carry(k)
	if !inL && !inS && !inD && !carried && count == 0 {
		return nil // an index's key this run neither counts nor carries
	}
	return j.judge(k, inL, inS, count, carried)
}

// copyBlock copies the block h of the committed index to this run's when
// nothing this run reads reaches into it: no listed key, no change of the
// counts, and no staged key that the staged index does not hold (S and U
// are read ahead to see). The heads of the streams are given.
func (j *joiner) copyBlock(js *joinStreams, h *blockHeader, S, U *peeked, lk []byte, lok bool, sk []byte, sok bool, dk []byte, dok bool, uk []byte, uok bool) (bool, error) {
	if !js.base || js.copyable == nil || j.m.rec == nil || !js.copyable(h) {
		return false, nil
	}
	if lok && bytes.Compare(lk, h.last) <= 0 || dok && bytes.Compare(dk, h.last) <= 0 {
		return false, nil
	}
	// Every staged key up to h.last must be in the staged index.
	s, sOK := sk, sok
	u, uOK := uk, uok
	si, ui := 0, 0
	var err error
	for sOK && bytes.Compare(s, h.last) <= 0 {
		for uOK && bytes.Compare(u, s) < 0 {
			if u, uOK, err = U.at(ui); err != nil {
				return false, ignoreFull(err)
			}
			ui++
		}
		if !uOK || !bytes.Equal(u, s) {
			return false, nil
		}
		if s, sOK, err = S.at(si); err != nil {
			return false, ignoreFull(err)
		}
		si++
		if u, uOK, err = U.at(ui); err != nil {
			return false, ignoreFull(err)
		}
		ui++
	}
	if err := j.m.rec.index.raw(h, js.committed.raw()); err != nil {
		return false, err
	}
	j.copied++
	j.can.keep += h.n
	j.can.inScope += h.recognized
	j.can.matched += h.listed
	j.kept += h.listed
	if j.kept+j.marked+j.walled >= 4096 {
		j.report()
	}
	return true, j.ctx.Err()
}

func ignoreFull(err error) error {
	if errors.Is(err, errPeekFull) {
		return nil
	}
	return err
}

// judge decides the key k: listed (by the listing, or carried by the
// index), staged, with count committed references.
func (j *joiner) judge(k []byte, listed, staged bool, count int64, carried bool) error {
	if count < 0 {
		return fmt.Errorf("%w: key %q counted %d times: the committed keep set's changes contradict the previous run's keep index", ErrInvalidInput, k, count)
	}
	if j.steps++; j.steps&4095 == 0 {
		if err := j.ctx.Err(); err != nil {
			return err
		}
	}
	listed = listed || carried
	kept := staged || count > 0
	rec := j.m.rec
	if kept {
		j.can.keepKey(k, carried)
	}
	if !listed {
		if kept && rec != nil {
			return rec.entry(k, count, false, staged, true)
		}
		return nil
	}
	var err error
	switch {
	case kept:
		j.can.matched++
		if j.walls.Walled(k) {
			// Another repository's: never a candidate, and not listed in
			// the records, so no later run judges it from them.
			j.walled++
			if rec != nil {
				err = rec.entry(k, count, false, staged, true)
			}
			break
		}
		j.kept++
		if rec != nil {
			err = rec.entry(k, count, true, staged, true)
		}
	case j.walls.Walled(k):
		j.walled++
	case j.m.cfg.check != nil:
		if j.pending = append(j.pending, j.arena.string(k)); len(j.pending) == checkBatch {
			err = j.flush()
		}
	default:
		j.marked++
		err = j.w.Write(addressRow{Address: j.arena.string(k)})
	}
	if j.kept+j.marked+j.walled >= 4096 {
		j.report()
		err = errors.Join(err, j.ctx.Err())
	}
	return err
}

func (j *joiner) report() {
	j.total.Kept, j.total.Marked, j.total.Walled = j.total.Kept+j.kept, j.total.Marked+j.marked, j.total.Walled+j.walled
	kept, marked, walled := j.kept, j.marked, j.walled
	j.m.cnt.update(func(p *Progress) { p.Kept += kept; p.Marked += marked; p.Walled += walled })
	j.kept, j.marked, j.walled = 0, 0, 0
}

// flush hands the pending candidates to the candidate check, and writes
// those it does not spare.
func (j *joiner) flush() error {
	if len(j.pending) == 0 {
		return nil
	}
	j.spare = slices.Grow(j.spare[:0], len(j.pending))[:len(j.pending)]
	clear(j.spare)
	if err := j.m.cfg.check(j.ctx, j.pending, j.spare); err != nil {
		return fmt.Errorf("sweep: candidate check: %w", err)
	}
	rec := j.m.rec
	for i, key := range j.pending {
		if !j.spare[i] {
			j.marked++
			if err := j.w.Write(addressRow{Address: key}); err != nil {
				return err
			}
			continue
		}
		j.kept++
		j.spared++
		// Kept for a reason the keep set does not hold: its slice is
		// listed again by the next optimized run, as a slice with young
		// objects is, so that it is checked again.
		if rec != nil && rec.young != nil {
			rec.young.addSliceOf(key, rec.data)
		}
	}
	j.pending = j.pending[:0]
	return nil
}
