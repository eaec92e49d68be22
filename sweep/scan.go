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

	"github.com/rs/xid"
	"gocloud.dev/blob"
)

// reversalPoint is lakeFS's year 4000 (4000-01-01T00:00:00Z in Unix seconds):
// a slice is named by the xid of reversalPoint minus its start time, so newer
// slices sort first. The constant is part of the address format.
const reversalPoint = 64060588800

// sliceTime decodes the start time of a slice from its name; false when the
// name is not a 20-character xid.
func sliceTime(name string) (time.Time, bool) {
	if len(name) != 20 {
		return time.Time{}, false
	}
	id, err := xid.FromString(name)
	if err != nil {
		return time.Time{}, false
	}
	// xid holds 32 bits of seconds, so the stored value wrapped the same way.
	return time.Unix(int64(uint32(reversalPoint-id.Time().Unix())), 0).UTC(), true
}

// scope says which keys Mark scans: everything under the data folder except
// slices started at or after the cutoff, and the top-level objects except
// "dummy" (lakeFS's marker of a namespace in use).
type scope struct {
	dataPrefix string // with a trailing '/'
	cutoff     time.Time
}

// reason returns why key is outside the scope, or "" when Mark scans it.
func (s scope) reason(key string) string {
	switch {
	case key == "":
		return "empty key"
	case key == "dummy":
		return "namespace marker"
	case strings.HasPrefix(key, s.dataPrefix):
		rest := key[len(s.dataPrefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if t, ok := sliceTime(rest[:i]); ok && !t.Before(s.cutoff) {
				return "slice newer than the cutoff"
			}
		}
		return ""
	case strings.Contains(key, "/"):
		return "outside the data folder"
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
type memPool struct{ left atomic.Int64 }

func (p *memPool) take(n int) bool {
	if p.left.Add(-int64(n)) >= 0 {
		return true
	}
	p.left.Add(int64(n))
	return false
}

// memRun is a folder's listing in memory, its bytes taken from a memPool.
type memRun struct {
	arena     []byte
	refs      []keyRef
	unordered bool // the keys did not come in strictly ascending order
	taken     int
}

// add appends key, growing the run with bytes taken from pool; false when
// the pool has not enough left.
func (r *memRun) add(key []byte, pool *memPool) bool {
	if len(r.arena)+len(key) > cap(r.arena) {
		c := max(2*cap(r.arena), 512, len(r.arena)+len(key))
		if c > maxBlock || !pool.take(c-cap(r.arena)) {
			return false
		}
		r.taken += c - cap(r.arena)
		r.arena = resize(r.arena, c)
	}
	if len(r.refs) == cap(r.refs) {
		c := max(2*cap(r.refs), 16)
		if !pool.take(8 * (c - cap(r.refs))) {
			return false
		}
		r.taken += 8 * (c - cap(r.refs))
		r.refs = resize(r.refs, c)
	}
	if n := len(r.refs); n > 0 && !r.unordered && bytes.Compare(key, r.key(n-1)) <= 0 {
		r.unordered = true
	}
	r.refs = append(r.refs, keyRef{off: uint32(len(r.arena)), n: uint32(len(key))})
	r.arena = append(r.arena, key...)
	return true
}

func (r *memRun) key(i int) []byte { return r.arena[r.refs[i].off : r.refs[i].off+r.refs[i].n] }

// trim gives back to pool what the run took beyond its keys.
func (r *memRun) trim(pool *memPool) {
	r.arena, r.refs = resize(r.arena, len(r.arena)), resize(r.refs, len(r.refs))
	used := cap(r.arena) + 8*cap(r.refs)
	pool.left.Add(int64(r.taken - used))
	r.taken = used
}

// release gives the run's memory back to pool.
func (r *memRun) release(pool *memPool) {
	pool.left.Add(int64(r.taken))
	r.arena, r.refs, r.taken = nil, nil, 0
}

// iter returns the run's keys in ascending order (duplicates adjacent),
// sorting them in place if they came out of order.
func (r *memRun) iter() keyIter {
	s := &sorter{arena: r.arena, refs: r.refs, ordered: !r.unordered}
	r.arena, r.refs = nil, nil
	s.sortBlock()
	return &blockIter{s: s}
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
	// keep is the keep set, which every young listed key joins: a key
	// listed twice is kept when any copy is young, wherever the copies
	// land.
	keep       *lockedSorter
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
	young           *youngSlices // the slices where young objects were listed
}

// listTop lists the top level and the data folder with a delimiter: loose
// objects go to the loose sorter, folders are collected for listFolders.
func (l *lister) listTop(ctx context.Context) error {
	if err := l.listLevel(ctx, "", func(o *blob.ListObject) error {
		if o.IsDir || o.Key == "dummy" {
			return nil
		}
		return l.addLoose(o)
	}); err != nil {
		return err
	}
	data := l.cfg.dataPrefix + "/"
	return l.listLevel(ctx, data, func(o *blob.ListObject) error {
		if !o.IsDir {
			return l.addLoose(o)
		}
		// The name may be empty ("data//", from a stray "data//x"): a
		// folder that is not a slice, listed in full as any other.
		name := o.Key[len(data) : len(o.Key)-1]
		f := folder{prefix: o.Key}
		if t, ok := sliceTime(name); ok {
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
		return l.listAll(ctx, f.prefix, l.loose.add)
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
	if isYoung(o.ModTime, l.cutoff) {
		l.cnt.update(func(p *Progress) { p.Young++ })
		return l.keep.add([]byte(o.Key))
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
	if err := l.listAll(ctx, f.prefix, add); err != nil {
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
// old objects go to add, those of young ones to the keep set.
func (l *lister) listAll(ctx context.Context, prefix string, add func(key []byte) error) error {
	var listed, young int64
	flush := func() {
		l.cnt.update(func(p *Progress) { p.Listed += listed; p.Young += young })
		listed, young = 0, 0
	}
	defer flush()
	anyYoung := false
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
		if isYoung(o.ModTime, l.cutoff) {
			young++
			anyYoung = true
			err = l.keep.add([]byte(o.Key))
		} else {
			err = add([]byte(o.Key))
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
	if l.young == nil {
		return
	}
	if name, _, ok := sliceOf([]byte(prefix), l.cfg.dataPrefix+"/"); ok {
		l.young.add(name)
	}
}
