package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/internal/layout"
	"gocloud.dev/blob"
)

// scope says which keys Sweep deletes: the keys Mark scans (everything
// under the data folder except slices started at or after the cutoff, and
// the top-level objects except "dummy", lakeFS's marker of a namespace in
// use) that the recognizer accepts.
type scope struct {
	dataPrefix string // with a trailing '/'
	cutoff     time.Time
	rec        recognizer
}

// reason returns why key is outside the scope, or "" when Mark scans it.
func (s scope) reason(key string) string {
	switch {
	case key == "":
		return "empty key"
	case key == layout.MarkerName:
		return "namespace marker"
	case strings.HasPrefix(key, s.dataPrefix):
		rest := key[len(s.dataPrefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if t, ok := layout.SliceTime(rest[:i]); ok && !t.Before(s.cutoff) {
				return "slice newer than the cutoff"
			}
		}
	case strings.Contains(key, "/"):
		return "outside the data folder"
	}
	if !s.rec.ok(key) {
		return "unrecognized key"
	}
	return ""
}

// young reports whether an object is protected by its age: modified at or
// after the cutoff, or at an unknown time.
func isYoung(mod, cutoff time.Time) bool {
	return mod.IsZero() || !mod.Before(cutoff)
}

// folder is one folder under the data prefix, listed by one worker.
type folder struct {
	prefix string  // "<data>/<name>/"
	mem    *memRun // its listing, when it stayed in memory; else
	run    string  // its listing, a run file
	slice  bool    // the name is a slice ID
	sorted bool    // the listing came in ascending order
}

// The memory of a folder's entry in the list of folders, beyond its name:
// its slot, and the memRun that holds its listing in memory.
const (
	folderSize = unsafe.Sizeof(folder{})
	memRunSize = unsafe.Sizeof(memRun{})
)

// memPool is the share of the memory budget that holds the listings of small
// folders from the listing to the join, so that they need no temp file. Safe
// for concurrent use.
//
// A folder is listed into a stage, a slab of fixed size that the next
// folder reuses; once listed, its keys are copied, exactly, to the end of a
// chunk shared by many folders. Stages and chunks are slabs (slab.go), freed
// by free when the Mark ends: a key costs no allocation, and small folders
// no page each.
type memPool struct {
	left atomic.Int64

	mu        sync.Mutex
	stageSize int     // set at the first stage
	stages    []*slab // stages not in use
	slabs     []*slab // every stage and chunk, for free
	chunk     *slab   // where listings are copied to
	chunkOff  int
}

func (p *memPool) take(n int) bool {
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
func (p *memPool) getStage() *slab {
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
	if !p.take(p.stageSize) {
		return nil
	}
	s := newSlab(p.stageSize)
	p.slabs = append(p.slabs, s)
	return s
}

func (p *memPool) putStage(s *slab) {
	p.mu.Lock()
	p.stages = append(p.stages, s)
	p.mu.Unlock()
}

// alloc returns n bytes (n a multiple of 8) cut from a chunk; its caller took
// them from the pool.
func (p *memPool) alloc(n int) []byte {
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

// free releases every stage and chunk; no listing held in them may be used
// after.
func (p *memPool) free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slabs {
		s.free()
	}
	p.slabs, p.stages, p.chunk = nil, nil, nil
}

// memRun is a folder's listing in memory: while listed, in a stage of a
// memPool (keys from its start, refs from its end); once trimmed, in a
// chunk. refs hold the newest key first until iter.
type memRun struct {
	stage     *slab
	arena     []byte
	refs      []keyRef
	alen      int
	unordered bool // the keys did not come in strictly ascending order
	taken     int
}

// add appends key to the run's stage; false when the stage is full or the
// pool has none.
func (r *memRun) add(key []byte, pool *memPool) bool {
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
	if n > 0 && !r.unordered && bytes.Compare(key, r.key(n-1)) <= 0 {
		r.unordered = true
	}
	copy(r.stage.b[r.alen:], key)
	end := len(r.stage.b) - 8*(n+1)
	r.refs = unsafe.Slice((*keyRef)(unsafe.Pointer(&r.stage.b[end])), n+1)
	r.refs[0] = keyRef{off: uint32(r.alen), n: uint32(len(key))}
	r.alen += len(key)
	return true
}

// key returns the i-th key added.
func (r *memRun) key(i int) []byte {
	ref := r.refs[len(r.refs)-1-i]
	return r.arena[ref.off : ref.off+ref.n]
}

// trim moves the run from its stage to a chunk of pool, taking exactly what
// its keys hold; if the pool has no room, the run keeps its stage.
func (r *memRun) trim(pool *memPool) {
	if r.stage == nil {
		return
	}
	a := (r.alen + 7) &^ 7
	n := a + 8*len(r.refs)
	if n == 0 || !pool.take(n) {
		return
	}
	b := pool.alloc(n)
	copy(b, r.stage.b[:r.alen])
	refs := unsafe.Slice((*keyRef)(unsafe.Pointer(&b[a:][0])), len(r.refs))
	copy(refs, r.refs)
	pool.putStage(r.stage)
	r.stage, r.arena, r.refs, r.taken = nil, b[:r.alen], refs, n
}

// release gives the run's memory back to pool.
func (r *memRun) release(pool *memPool) {
	if r.stage != nil {
		pool.putStage(r.stage)
	}
	pool.left.Add(int64(r.taken))
	r.stage, r.arena, r.refs, r.alen, r.taken = nil, nil, nil, 0, 0
}

// iter returns the run's keys in ascending order (duplicates adjacent),
// sorting them in place if they came out of order. The run's memory stays
// with its pool until the pool is freed.
func (r *memRun) iter() keyIter {
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

// counters are the shared progress counters of a Mark.
type counters struct {
	mu       sync.Mutex
	progress func(Progress)
	p        Progress
	lastSent int64
}

func (c *counters) update(f func(p *Progress)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.p)
	if c.progress != nil {
		if n := c.p.Listed + c.p.Deleted + c.p.Failed + c.p.AlreadyGone + c.p.Refused + c.p.Marked; n-c.lastSent >= 10000 {
			c.lastSent = n
			c.progress(c.p)
		}
	}
}

func (c *counters) phase(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p.Phase = name
	if c.progress != nil {
		c.progress(c.p)
	}
}

func (c *counters) snapshot() Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.p
}

// lockedSorter is a sorter that listing workers share.
type lockedSorter struct {
	mu sync.Mutex
	s  *sorter
}

func (l *lockedSorter) add(key []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.add(key)
}

// lister lists a namespace for Mark.
type lister struct {
	bucket *blob.Bucket
	cfg    *config
	dir    *spillDir
	cutoff time.Time
	cnt    *counters
	// loose holds the old top-level objects, the old objects directly
	// under data/, and those of the folders the pool could not hold an
	// entry for.
	loose *sorter
	// youngKeys holds every young listed key, for the keep set: a key
	// listed twice is kept when any copy is young, wherever the copies
	// land.
	youngKeys  *lockedSorter
	pool       *memPool // for the list of folders and the listings of small folders
	folders    []folder
	handleSize int // what an entry's listing handle holds, a memRun or a run file's name
	firstSlice string
	firstTime  time.Time

	win     *window   // the listing requests in flight, made by pages
	winOnce sync.Once // makes win

	// skip says which slices an optimized run judges from the previous
	// run's records instead of listing them (nil: none); listed and
	// skipped count the slices older than the cutoff.
	skip            func(name string, t time.Time) bool
	listed, skipped int64
	young           *youngSlices // the slices where young objects (or walls) were listed

	rec   recognizer    // the keys that may be judged; the others are unrecognized
	walls *wallSet      // the folders of other repositories
	unrec *unrecognized // the unrecognized objects' report
}

// listTop lists the top level and the data folder with a delimiter: loose
// objects go to the loose sorter, folders are collected for listFolders.
// A shard (WithShard) other than 0 lists neither the top level nor what is
// not a slice, and every shard lists only its own slices.
func (l *lister) listTop(ctx context.Context) error {
	rest := l.cfg.ownsRest()
	if rest {
		if err := l.listLevel(ctx, "", func(o *blob.ListObject) error {
			if o.IsDir || o.Key == layout.MarkerName {
				return nil
			}
			return l.addLoose(o)
		}); err != nil {
			return err
		}
	}
	data := l.cfg.dataPrefix + "/"
	return l.listLevel(ctx, data, func(o *blob.ListObject) error {
		if !o.IsDir {
			if !rest {
				return nil
			}
			return l.addLoose(o)
		}
		// Another repository's storage folder right under the data folder
		// walls all of it: every shard says so, not only the one that
		// lists the folder.
		if wall, ok := l.walls.of(o.Key); ok {
			l.walls.add(wall, o.Key)
		}
		// The name may be empty ("data//", from a stray "data//x"): a
		// folder that is not a slice, listed in full as any other.
		name := o.Key[len(data) : len(o.Key)-1]
		f := folder{prefix: o.Key}
		t, ok := layout.SliceTime(name)
		switch {
		case ok && !l.cfg.ownsSlice(name), !ok && !rest:
			return nil // another shard's
		}
		if ok {
			if !t.Before(l.cutoff) {
				return nil // only objects newer than the cutoff: not listed
			}
			f.slice = true
			if l.firstSlice == "" || t.After(l.firstTime) || t.Equal(l.firstTime) && name < l.firstSlice {
				l.firstSlice, l.firstTime = name, t
			}
			if l.skip != nil && l.skip(name, t) {
				l.skipped++
				return nil
			}
			l.listed++
		}
		if l.addFolder(f) {
			return nil
		}
		// No memory for one more entry: list the folder now, one at a
		// time, and sort its keys with the loose objects.
		return l.listAll(ctx, f.prefix, f.slice, l.loose.add)
	})
}

// addFolder appends f to the list of folders, taking from the pool what its
// entry holds until the join: its slot (the list grows by a quarter at a
// time), its name, and the handle of its listing, a memRun or a run file's
// name. False when the pool cannot hold it.
func (l *lister) addFolder(f folder) bool {
	if l.handleSize == 0 {
		l.handleSize = max(int(memRunSize), l.dir.maxNameLen())
	}
	need := len(f.prefix) + l.handleSize
	grow := 0
	if len(l.folders) == cap(l.folders) {
		grow = max(cap(l.folders)/4, 16)
		need += grow * int(folderSize)
	}
	if !l.pool.take(need) {
		return false
	}
	if grow > 0 {
		l.folders = resize(l.folders, cap(l.folders)+grow)
	}
	l.folders = append(l.folders, f)
	return true
}

// listLevel lists prefix with a delimiter and checks that the backend kept
// to it: every key is below prefix, every folder is one name and the
// delimiter, and no other key has a delimiter after prefix (a backend that
// ignores the delimiter would hand lakeFS's own files and other folders to
// Mark as loose objects).
func (l *lister) listLevel(ctx context.Context, prefix string, f func(*blob.ListObject) error) error {
	it := l.pages(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sweep: list %q: %w", prefix, err)
		}
		rest, ok := strings.CutPrefix(o.Key, prefix)
		slash := strings.IndexByte(rest, '/')
		switch {
		case !ok:
			return fmt.Errorf("%w: list %q returned %q", ErrBadListing, prefix, o.Key)
		case o.IsDir && (slash < 0 || slash != len(rest)-1):
			// A folder is a name (maybe empty) and one delimiter; the
			// prefix itself is none.
			return fmt.Errorf("%w: list %q returned folder %q", ErrBadListing, prefix, o.Key)
		case !o.IsDir && slash >= 0:
			return fmt.Errorf("%w: list %q with delimiter \"/\" returned %q", ErrBadListing, prefix, o.Key)
		}
		if err := f(o); err != nil {
			return err
		}
	}
}

func (l *lister) addLoose(o *blob.ListObject) error {
	l.cnt.update(func(p *Progress) { p.Listed++ })
	if !l.rec.ok(o.Key) {
		l.cnt.update(func(p *Progress) { p.Unrecognized++ })
		return l.unrec.add(o)
	}
	if isYoung(o.ModTime, l.cutoff) {
		l.cnt.update(func(p *Progress) { p.Young++ })
		return l.youngKeys.add([]byte(o.Key))
	}
	return l.loose.add([]byte(o.Key))
}

// listFolders lists every folder in full, each into memory or its own run
// file. Up to the window's bound of folders are listed at once, and the
// window sets how many of them have a request in flight.
func (l *lister) listFolders(ctx context.Context) error {
	slices.SortFunc(l.folders, func(a, b folder) int { return strings.Compare(a.prefix, b.prefix) })
	for i := 1; i < len(l.folders); i++ {
		if l.folders[i].prefix == l.folders[i-1].prefix {
			return fmt.Errorf("%w: list %q returned folder %q twice", ErrBadListing, l.cfg.dataPrefix+"/", l.folders[i].prefix)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range min(l.cfg.list.hi, len(l.folders)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := l.listFolder(ctx, &l.folders[i]); err != nil {
					fail(err)
				}
			}
		}()
	}
feed:
	for i := range l.folders {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// listFolder lists a folder into memory, within what is left of the pool, or
// else into a run file.
func (l *lister) listFolder(ctx context.Context, f *folder) error {
	var (
		mem memRun
		rw  *runWriter
	)
	add := func(key []byte) error {
		if rw == nil {
			if mem.add(key, l.pool) {
				return nil
			}
			var err error
			if rw, err = l.dir.create(); err != nil {
				return err
			}
			for i := range mem.refs {
				if err := rw.add(mem.key(i)); err != nil {
					return err
				}
			}
			mem.release(l.pool)
		}
		return rw.add(key)
	}
	if err := l.listAll(ctx, f.prefix, f.slice, add); err != nil {
		if rw != nil {
			rw.abort()
		}
		mem.release(l.pool)
		return err
	}
	if rw == nil {
		mem.trim(l.pool)
		f.mem = &mem
		return nil
	}
	f.sorted = rw.ordered
	var err error
	f.run, err = rw.finish()
	return err
}

// listAll lists every object under prefix, without a delimiter: the keys of
// old recognized objects go to add, those of young ones to the keep set,
// unrecognized ones to their report; a key under another repository's
// storage folder makes that folder a wall. slice says prefix is a slice's
// folder.
func (l *lister) listAll(ctx context.Context, prefix string, slice bool, add func(key []byte) error) error {
	var listed, young, unrec int64
	flush := func() {
		l.cnt.update(func(p *Progress) { p.Listed += listed; p.Young += young; p.Unrecognized += unrec })
		listed, young, unrec = 0, 0, 0
	}
	defer flush()
	// A slice that held young objects or a wall is listed again by the
	// next optimized run.
	anyYoung := false
	// A folder whose own name makes a wall ("<data>/_lakefs/") walls its
	// parent; else a wall needs a '/' below the folder.
	folderWall, walled := l.walls.of(prefix)
	var buf []byte // each key is copied here rather than to a new slice
	it := l.pages(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			if anyYoung {
				l.noteYoung(prefix)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("sweep: list %q: %w", prefix, err)
		}
		if !strings.HasPrefix(o.Key, prefix) {
			return fmt.Errorf("%w: list %q returned %q", ErrBadListing, prefix, o.Key)
		}
		if o.IsDir {
			continue
		}
		listed++
		if walled {
			if folderWall != "" {
				l.walls.add(folderWall, prefix)
				folderWall, anyYoung = "", true
			}
		} else if strings.IndexByte(o.Key[len(prefix):], '/') >= 0 {
			if wall, ok := l.walls.of(o.Key); ok {
				l.walls.add(wall, prefix)
				anyYoung = true
			}
		}
		var known bool
		if slice {
			known = l.rec.okInSlice(o.Key, len(prefix))
		} else {
			known = l.rec.ok(o.Key)
		}
		if !known {
			unrec++
			if err := l.unrec.add(o); err != nil {
				return err
			}
			continue
		}
		buf = append(buf[:0], o.Key...)
		if isYoung(o.ModTime, l.cutoff) {
			young++
			anyYoung = true
			err = l.youngKeys.add(buf)
		} else {
			err = add(buf)
		}
		if err != nil {
			return err
		}
		if listed >= 1000 {
			flush()
		}
	}
}

// stream returns every listed key older than the cutoff, in ascending order
// and once each. Folders sort as a whole ("<data>/<a>/" before "<data>/<b>/"
// puts every key of a before every key of b), so their listings are
// concatenated; a listing that came out of order is sorted first.
func (l *lister) stream(sortBytes, fanIn int) (keyIter, error) {
	opens := make([]func() (keyIter, error), len(l.folders))
	for i := range l.folders {
		f := &l.folders[i]
		opens[i] = func() (keyIter, error) {
			if m := f.mem; m != nil {
				f.mem = nil // its memory goes once read
				return m.iter(), nil
			}
			fr, err := openRun(f.run, l.dir.ioBuf)
			if err != nil {
				return nil, err
			}
			if f.sorted {
				return fr, nil
			}
			s := newSorter(l.dir, sortBytes, fanIn)
			defer fr.close()
			for {
				k, ok, err := fr.next()
				if err != nil {
					s.release()
					return nil, err
				}
				if !ok {
					break
				}
				if err := s.add(k); err != nil {
					s.release()
					return nil, err
				}
			}
			return s.finish()
		}
	}
	loose, err := l.loose.finish()
	if err != nil {
		return nil, err
	}
	return newMerge([]keyIter{&concat{open: opens}, loose}), nil
}

// noteYoung records that the folder prefix held young objects, when it is a
// slice: the next optimized run lists it again rather than trust its records.
func (l *lister) noteYoung(prefix string) {
	l.young.addSliceOf(prefix, l.cfg.dataPrefix+"/")
}
