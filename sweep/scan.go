package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/layout"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"
)

// scope says which keys Sweep deletes: the keys Mark scans (everything
// under the data folder except slices started at or after the cutoff, and
// the top-level objects except "dummy", lakeFS's marker of a namespace in
// use) that the recognizer accepts.
type scope struct {
	dataPrefix string // with a trailing '/'
	cutoff     time.Time
	rec        layout.Recognizer
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
	if !s.rec.OK(key) {
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
	prefix string          // "<data>/<name>/"
	mem    *extsort.MemRun // its listing, when it stayed in memory; else
	run    string          // its listing, a run file
	slice  bool            // the name is a slice ID
	sorted bool            // the listing came in ascending order
}

// The memory of a folder's entry in the list of folders, beyond its name:
// its slot, and the MemRun that holds its listing in memory.
const (
	folderSize = unsafe.Sizeof(folder{})
	memRunSize = unsafe.Sizeof(extsort.MemRun{})
)

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
	s  *extsort.Sorter
}

func (l *lockedSorter) add(key []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Add(key)
}

// lister lists a namespace for Mark.
type lister struct {
	bucket *blob.Bucket
	cfg    *config
	dir    *extsort.SpillDir
	cutoff time.Time
	cnt    *counters
	// loose holds the old top-level objects, the old objects directly
	// under data/, and those of the folders the pool could not hold an
	// entry for.
	loose *extsort.Sorter
	// youngKeys holds every young listed key, for the keep set: a key
	// listed twice is kept when any copy is young, wherever the copies
	// land.
	youngKeys  *lockedSorter
	pool       *extsort.Pool // for the list of folders and the listings of small folders
	folders    []folder
	handleSize int // what an entry's listing handle holds, a MemRun or a run file's name
	firstSlice string
	firstTime  time.Time

	win     *aimd.Window // the listing requests in flight, made by pages
	winOnce sync.Once    // makes win

	// skip says which slices an optimized run judges from the previous
	// run's records instead of listing them (nil: none); listed and
	// skipped count the slices older than the cutoff.
	skip            func(name string, t time.Time) bool
	listed, skipped int64
	young           *youngSlices // the slices where young objects (or walls) were listed

	rec   layout.Recognizer // the keys that may be judged; the others are unrecognized
	walls *layout.Walls     // the folders of other repositories
	unrec *unrecognized     // the unrecognized objects' report

	report     *reportRun // WithInventory's report, nil without
	reportRead int64      // the objects read from it
	movedKept  int64      // the addresses quarantined since it, kept (keepMoved)
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
		if wall, ok := l.walls.Of(o.Key); ok {
			l.walls.Add(wall, o.Key)
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
		return l.listAll(ctx, f.prefix, f.slice, l.loose.Add)
	})
}

// addFolder appends f to the list of folders, taking from the pool what its
// entry holds until the join: its slot (the list grows by a quarter at a
// time), its name, and the handle of its listing, a MemRun or a run file's
// name. False when the pool cannot hold it.
func (l *lister) addFolder(f folder) bool {
	if l.handleSize == 0 {
		l.handleSize = max(int(memRunSize), l.dir.MaxNameLen())
	}
	need := len(f.prefix) + l.handleSize
	grow := 0
	if len(l.folders) == cap(l.folders) {
		grow = max(cap(l.folders)/4, 16)
		need += grow * int(folderSize)
	}
	if !l.pool.Take(need) {
		return false
	}
	if grow > 0 {
		l.folders = resize(l.folders, cap(l.folders)+grow)
	}
	l.folders = append(l.folders, f)
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

// listLevel lists prefix with a delimiter and checks that the backend kept
// to it: every key is below prefix, every folder is one name and the
// delimiter, and no other key has a delimiter after prefix (a backend that
// ignores the delimiter would hand lakeFS's own files and other folders to
// Mark as loose objects).
func (l *lister) listLevel(ctx context.Context, prefix string, f func(*blob.ListObject) error) error {
	it := l.pages(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	defer it.Close()
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
	if !l.rec.OK(o.Key) {
		l.cnt.update(func(p *Progress) { p.Unrecognized++ })
		return l.unrec.add(o)
	}
	if isYoung(o.ModTime, l.cutoff) {
		l.cnt.update(func(p *Progress) { p.Young++ })
		return l.youngKeys.add([]byte(o.Key))
	}
	return l.loose.Add([]byte(o.Key))
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
	// The first error cancels the others.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(l.cfg.list.hi)
	for i := range l.folders {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return l.listFolder(gctx, &l.folders[i]) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// listFolder lists a folder into memory, within what is left of the pool, or
// else into a run file.
func (l *lister) listFolder(ctx context.Context, f *folder) error {
	var (
		mem extsort.MemRun
		rw  *extsort.RunWriter
	)
	add := func(key []byte) error {
		if rw == nil {
			if mem.Add(key, l.pool) {
				return nil
			}
			var err error
			if rw, err = l.dir.Create(); err != nil {
				return err
			}
			for i := range mem.Len() {
				if err := rw.Add(mem.Key(i)); err != nil {
					return err
				}
			}
			mem.Release(l.pool)
		}
		return rw.Add(key)
	}
	if err := l.listAll(ctx, f.prefix, f.slice, add); err != nil {
		if rw != nil {
			rw.Abort()
		}
		mem.Release(l.pool)
		return err
	}
	if rw == nil {
		mem.Trim(l.pool)
		f.mem = &mem
		return nil
	}
	f.sorted = rw.Ordered()
	var err error
	f.run, err = rw.Finish()
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
	folderWall, walled := l.walls.Of(prefix)
	var buf []byte // each key is copied here rather than to a new slice
	it := l.pages(&blob.ListOptions{Prefix: prefix})
	defer it.Close()
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
				l.walls.Add(folderWall, prefix)
				folderWall, anyYoung = "", true
			}
		} else if strings.IndexByte(o.Key[len(prefix):], '/') >= 0 {
			if wall, ok := l.walls.Of(o.Key); ok {
				l.walls.Add(wall, prefix)
				anyYoung = true
			}
		}
		var known bool
		if slice {
			known = l.rec.OKInSlice(o.Key, len(prefix))
		} else {
			known = l.rec.OK(o.Key)
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
func (l *lister) stream(sortBytes, fanIn int) (extsort.Iter, error) {
	opens := make([]func() (extsort.Iter, error), len(l.folders))
	for i := range l.folders {
		f := &l.folders[i]
		opens[i] = func() (extsort.Iter, error) {
			if m := f.mem; m != nil {
				f.mem = nil // its memory goes once read
				return m.Iter(), nil
			}
			fr, err := extsort.OpenRun(f.run, l.dir.IOBuf())
			if err != nil {
				return nil, err
			}
			if f.sorted {
				return fr, nil
			}
			s := extsort.NewSorter(l.dir, sortBytes, fanIn)
			defer fr.Close()
			for {
				k, ok, err := fr.Next()
				if err != nil {
					s.Release()
					return nil, err
				}
				if !ok {
					break
				}
				if err := s.Add(k); err != nil {
					s.Release()
					return nil, err
				}
			}
			return s.Finish()
		}
	}
	loose, err := l.loose.Finish()
	if err != nil {
		return nil, err
	}
	return extsort.NewMerge([]extsort.Iter{extsort.NewConcat(opens), loose}), nil
}

// noteYoung records that the folder prefix held young objects, when it is a
// slice: the next optimized run lists it again rather than trust its records.
func (l *lister) noteYoung(prefix string) {
	l.young.addSliceOf(prefix, l.cfg.dataPrefix+"/")
}
