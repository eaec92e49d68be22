package sweep

import (
	"bytes"
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
// counts and the previous run's keep index — that judges each key once.
//
// In an optimized run most keys come from the previous run's keep index
// alone: a committed key of a slice the run does not list, unchanged since.
// The walk takes such a key with one comparison (against the least head of
// the other streams), so the index costs its decoding, on a goroutine of
// its own, and that comparison; the other streams cost what they hold.

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
	// index holds the counts, their changes since; nil: none.
	counts keycount.Iter
	// index is the previous run's keep index; nil: none.
	index *indexIter
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
	if js.index != nil {
		errs = append(errs, js.index.Close())
	}
	return errors.Join(errs...)
}

// Flags of an index entry as the join reads it.
const (
	entryCarried = 1 // listed and kept by the previous run, in a slice this run does not list
)

// indexSource is the previous run's keep index as the join reads it: each
// entry that says something to this run, its count (when the index's counts
// join this run's) and its carried flag packed after its key. An
// extsort.Iter, read ahead by an extsort.NewPrefetch.
type indexSource struct {
	f *keycount.File
	// counts says the entries' counts join the committed counts (the run
	// counts changes since the previous run); else only the carried
	// entries matter, with no count.
	counts bool
	want   int64 // with counts, the entries the index must hold
	// carry reports whether a listed key is in a slice this run does not
	// list (and is recognized): it is judged from the index.
	carry func([]byte) bool
	buf   []byte
}

func (s *indexSource) Next() ([]byte, bool, error) {
	for {
		k, c, aux, ok, err := s.f.Entry()
		if err != nil {
			return nil, false, fmt.Errorf("sweep: previous run's keep index: %w", err)
		}
		if !ok {
			if s.counts && s.f.Count() != s.want {
				return nil, false, fmt.Errorf("%w: %d entries, its state says %d", errBadIndex, s.f.Count(), s.want)
			}
			return nil, false, nil
		}
		var flags byte
		if aux&idxListed != 0 && s.carry(k) {
			flags = entryCarried
		}
		if !s.counts {
			c = 0
		}
		if c == 0 && flags == 0 {
			continue // nothing this run judges or counts
		}
		s.buf = binary.LittleEndian.AppendUint64(append(s.buf[:0], k...), uint64(c))
		s.buf = append(s.buf, flags)
		return s.buf, true, nil
	}
}

func (s *indexSource) Close() error { return s.f.Close() }

// indexIter returns the entries of an indexSource, read ahead.
type indexIter struct{ p extsort.Iter }

func newIndexIter(s *indexSource) *indexIter { return &indexIter{p: extsort.NewPrefetch(s)} }

// Next returns the next entry's key (valid until the next call), count and
// carried flag.
func (it *indexIter) Next() ([]byte, int64, bool, bool, error) {
	b, ok, err := it.p.Next()
	if err != nil || !ok {
		return nil, 0, false, false, err
	}
	n := len(b) - 9
	if n < 0 {
		return nil, 0, false, false, fmt.Errorf("%w: an entry without its count", errBadIndex)
	}
	return b[:n:n], int64(binary.LittleEndian.Uint64(b[n:])), b[n+8]&entryCarried != 0, true, nil
}

func (it *indexIter) Close() error { return it.p.Close() }

// writeCandidates walks the join's streams and writes the listed keys that
// are not kept, nor under a wall, to deleted/, once the canary passed; with
// m.rec, it records every key of the keep set with its count and listed
// flag. A key is listed when the listing holds it or the index carries it;
// kept when it is staged or counted above 0. A count below 0 (the changes
// contradict the previous index) or a stream out of order fails the run.
func (m *marker) writeCandidates(ctx context.Context, js joinStreams) (int64, error) {
	list := extsort.Strict(js.list, "listing")
	staged := extsort.Strict(js.staged, "keep set")
	counts := js.counts
	if counts == nil {
		counts = keycount.Nop{}
	}
	w, err := newPartWriter[addressRow](ctx, m.bucket, m.dir+layout.DeletedFolder+partName)
	if err != nil {
		return 0, err
	}
	j := &joiner{m: m, ctx: ctx, w: w, can: newCanaryCount(m.cfg, m.sum.CutoffTime), walls: layout.NewWallCursor(m.walls)}
	if err := j.walk(list, staged, counts, js.index); err != nil {
		w.Abort()
		return 0, err
	}
	// Every entry of the keep index encoded before the candidates part is
	// closed: a run whose index failed to encode leaves no candidates
	// part. The index's upload ends after it (index.close, in join), and a
	// run whose upload fails fails: no state names it, and its candidates
	// are never swept.
	if m.rec != nil {
		if err := m.rec.index.finish(); err != nil {
			w.Abort()
			return 0, fmt.Errorf("sweep: write %s: %w", m.rec.index.key, err)
		}
	}
	m.sum.NumWalledObjects = j.total.Walled
	// The canary judges the keep set: a key the check spared is one the
	// keep set did not hold, so it counts as marked there — or a check
	// that spares a few keys would hide a keep set that matches nothing
	// from rule B.
	if err := j.can.check(m.cfg.canary, m.cnt.snapshot().Young, j.total.Kept-j.spared, j.total.Walled, j.total.Marked+j.spared); err != nil {
		w.Abort()
		return 0, err
	}
	m.cnt.phase("write")
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Rows(), nil
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
}

// walk judges every key of the streams, in order.
func (j *joiner) walk(list, staged extsort.Iter, counts keycount.Iter, index *indexIter) error {
	var (
		lk, sk, dk, ik     []byte
		lok, sok, dok, iok bool
		dc, ic             int64
		icar               bool
		err                error
	)
	if lk, lok, err = list.Next(); err != nil {
		return err
	}
	if sk, sok, err = staged.Next(); err != nil {
		return err
	}
	if dk, dc, dok, err = counts.Next(); err != nil {
		return err
	}
	if index != nil {
		if ik, ic, icar, iok, err = index.Next(); err != nil {
			return err
		}
	}
	// other is the least head of the listing, the staged keys and the
	// counts: the index's keys below it are the index's alone.
	var other []byte
	var otherOK bool
	least := func() {
		other, otherOK = nil, false
		if lok {
			other, otherOK = lk, true
		}
		if sok && (!otherOK || bytes.Compare(sk, other) < 0) {
			other, otherOK = sk, true
		}
		if dok && (!otherOK || bytes.Compare(dk, other) < 0) {
			other, otherOK = dk, true
		}
	}
	least()
	for {
		// The index's own keys: a committed key no other stream names,
		// or a carried one the listing cannot hold.
		for iok && (!otherOK || bytes.Compare(ik, other) < 0) {
			if err := j.judge(ik, false, false, ic, icar); err != nil {
				return err
			}
			if ik, ic, icar, iok, err = index.Next(); err != nil {
				return err
			}
		}
		if !otherOK {
			break // and the index has ended too
		}
		k := other
		inL := lok && bytes.Equal(lk, k)
		inS := sok && bytes.Equal(sk, k)
		inD := dok && bytes.Equal(dk, k)
		inI := iok && bytes.Equal(ik, k)
		var count int64
		carried := false
		if inD {
			count = dc
		}
		if inI {
			count += ic
			carried = icar
		}
		if err := j.judge(k, inL, inS, count, carried); err != nil {
			return err
		}
		// k is the head of a stream that moves on now: it is not used
		// after.
		if inL {
			if lk, lok, err = list.Next(); err != nil {
				return err
			}
		}
		if inS {
			if sk, sok, err = staged.Next(); err != nil {
				return err
			}
		}
		if inD {
			if dk, dc, dok, err = counts.Next(); err != nil {
				return err
			}
		}
		if inI {
			if ik, ic, icar, iok, err = index.Next(); err != nil {
				return err
			}
		}
		least()
	}
	if err := j.flush(); err != nil {
		return err
	}
	j.report()
	return j.ctx.Err()
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
			return rec.entry(k, count, false)
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
				err = rec.entry(k, count, false)
			}
			break
		}
		j.kept++
		if rec != nil {
			err = rec.entry(k, count, true)
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
