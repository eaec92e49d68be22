package extsort

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Pool is a memory budget shared by many small listings (MemRun) and by
// whatever else its user counts against it (Take): it holds the listings of
// small folders from the listing to the join, so that they need no run
// file. Safe for concurrent use. The zero Pool holds nothing; Give fills it.
//
// A run is listed into a stage, a slab of fixed size that the next run
// reuses; once listed, its keys are copied, exactly, to the end of a chunk
// shared by many runs. Stages and chunks are slabs (slab.go), freed by Free
// at the end: a key costs no allocation, and small runs no page each.
type Pool struct {
	left atomic.Int64

	mu        sync.Mutex
	stageSize int     // set at the first stage
	stages    []*slab // stages not in use
	slabs     []*slab // every stage and chunk, for Free
	chunk     *slab   // where listings are copied to
	chunkOff  int
}

// Give adds n bytes to the pool's budget.
func (p *Pool) Give(n int64) { p.left.Add(n) }

// Left is what is left of the pool's budget; never below zero.
func (p *Pool) Left() int64 { return p.left.Load() }

// Take takes n bytes from the budget, and reports whether there were that
// many left; if not, it takes nothing.
func (p *Pool) Take(n int) bool {
	if p.left.Add(-int64(n)) >= 0 {
		return true
	}
	p.left.Add(int64(n))
	return false
}

// Bounds of a stage, and the smallest chunk.
const (
	minStage  = 4 << 10
	maxStage  = 4 << 20
	minChunk  = 1 << 20
	stageFrac = 32 // a stage is this fraction of the pool
)

// getStage returns a free stage, or a new one taken from the pool; nil when
// the pool has no room for one.
func (p *Pool) getStage() *slab {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.stages); n > 0 {
		s := p.stages[n-1]
		p.stages = p.stages[:n-1]
		return s
	}
	if p.stageSize == 0 {
		p.stageSize = min(max(int(p.left.Load())/stageFrac, minStage), maxStage) &^ 7
	}
	if !p.Take(p.stageSize) {
		return nil
	}
	s := newSlab(p.stageSize)
	p.slabs = append(p.slabs, s)
	return s
}

func (p *Pool) putStage(s *slab) {
	p.mu.Lock()
	p.stages = append(p.stages, s)
	p.mu.Unlock()
}

// alloc returns n bytes (n a multiple of 8) cut from a chunk; its caller took
// them from the pool.
func (p *Pool) alloc(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chunk == nil || p.chunkOff+n > len(p.chunk.b) {
		p.chunk, p.chunkOff = newSlab(max(n, minChunk)), 0
		p.slabs = append(p.slabs, p.chunk)
	}
	b := p.chunk.b[p.chunkOff : p.chunkOff+n : p.chunkOff+n]
	p.chunkOff += n
	return b
}

// Free releases every stage and chunk; no run held in them may be used
// after.
func (p *Pool) Free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slabs {
		s.free()
	}
	p.slabs, p.stages, p.chunk = nil, nil, nil
}

// MemRun is a listing in memory: while listed, in a stage of a Pool (keys
// from its start, refs from its end); once trimmed, in a chunk. refs hold
// the newest key first until Iter. The zero MemRun is empty. Not safe for
// concurrent use.
type MemRun struct {
	stage     *slab
	arena     []byte
	refs      []keyRef
	alen      int
	unordered bool // the keys did not come in strictly ascending order
	taken     int
}

// Add appends a copy of key to the run's stage; false when the stage is
// full, the pool has none, or the run was trimmed: the caller then lists
// the rest elsewhere (a run file, say) and releases the run.
func (r *MemRun) Add(key []byte, pool *Pool) bool {
	if r.stage == nil {
		if r.arena != nil {
			return false // trimmed
		}
		if r.stage = pool.getStage(); r.stage == nil {
			return false
		}
		r.arena = r.stage.b
	}
	n := len(r.refs)
	if r.alen+len(key)+8*(n+1) > len(r.stage.b) {
		return false
	}
	if n > 0 && !r.unordered && bytes.Compare(key, r.Key(n-1)) <= 0 {
		r.unordered = true
	}
	copy(r.stage.b[r.alen:], key)
	end := len(r.stage.b) - 8*(n+1)
	r.refs = unsafe.Slice((*keyRef)(unsafe.Pointer(&r.stage.b[end])), n+1)
	r.refs[0] = keyRef{off: uint32(r.alen), n: uint32(len(key))}
	r.alen += len(key)
	return true
}

// Len is the number of keys added.
func (r *MemRun) Len() int { return len(r.refs) }

// Key returns the i-th key added, from 0.
func (r *MemRun) Key(i int) []byte {
	ref := r.refs[len(r.refs)-1-i]
	return r.arena[ref.off : ref.off+ref.n]
}

// Trim moves the run from its stage to a chunk of pool, taking exactly what
// its keys hold from the budget; if the pool has no room, the run keeps its
// stage.
func (r *MemRun) Trim(pool *Pool) {
	if r.stage == nil {
		return
	}
	a := (r.alen + 7) &^ 7
	n := a + 8*len(r.refs)
	if n == 0 || !pool.Take(n) {
		return
	}
	b := pool.alloc(n)
	copy(b, r.stage.b[:r.alen])
	refs := unsafe.Slice((*keyRef)(unsafe.Pointer(&b[a:][0])), len(r.refs))
	copy(refs, r.refs)
	pool.putStage(r.stage)
	r.stage, r.arena, r.refs, r.taken = nil, b[:r.alen], refs, n
}

// Release gives the run's memory back to pool and empties the run.
func (r *MemRun) Release(pool *Pool) {
	if r.stage != nil {
		pool.putStage(r.stage)
	}
	pool.left.Add(int64(r.taken))
	r.stage, r.arena, r.refs, r.alen, r.taken = nil, nil, nil, 0, 0
}

// Iter returns the run's keys in ascending order (duplicates adjacent),
// sorting them in place if they came out of order, and empties the run. The
// keys' memory stays with the pool until the pool is freed.
func (r *MemRun) Iter() Iter {
	arena, refs := r.arena, r.refs
	slices.Reverse(refs)
	if r.unordered {
		slices.SortFunc(refs, func(x, y keyRef) int {
			return bytes.Compare(arena[x.off:x.off+x.n], arena[y.off:y.off+y.n])
		})
	}
	r.arena, r.refs = nil, nil
	return &refIter{arena: arena, refs: refs}
}
