package sweep

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakegc/lakegc/internal/aimd"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"gocloud.dev/blob"
)

// This file lists a local namespace's folders by reading the file system
// (WithLocalListing) instead of through gocloud's fileblob. fileblob walks
// and sorts the whole tree under a prefix for every page it returns, and
// reads each file's metadata up to the page it was asked for, so a folder
// of n objects listed a page of p keys at a time costs about n²/p file
// system calls: 50 walks of 50,000 files for one lakeFS slice. Here each
// folder is read once, a chunk of entries at a time.
//
// The keys are the ones fileblob's listing returns, worked out the way
// fileblob works them out (TestLocalListingMatchesFileblob holds the two
// side by side on hostile trees):
//
//   - a key is the file's path below the bucket's folder, '/'-separated,
//     with fileblob's escapes ("__0x<hex>__") decoded;
//   - files whose names end in ".attrs" (fileblob's attribute side files)
//     are not listed; folders so named are listed into;
//   - a folder whose key cannot lead to a key of the prefix is not read;
//   - symbolic links and other non-folders are objects, with their own
//     (lstat) time and size, never followed;
//   - with the delimiter "/", a subfolder is a folder entry when a file
//     lies somewhere below it, and the folder's own files are objects
//     (fileblob walks every file below the prefix to find that out; here a
//     subfolder is read only until its first file).
//
// The order differs: fileblob returns the entries of each folder sorted by
// file name, which needs the whole folder in memory; here they come in the
// file system's order, and Mark sorts them as it does any listing that is
// not in ascending order. A listing in flight holds one open folder, one
// chunk of its entries, and the paths of the subfolders still to read:
// nothing that grows with the number of objects of a flat folder.
//
// What a listing meets while the namespace changes under it: a file gone
// before it is read (removed, or replaced by a folder) is not listed, nor
// is a folder gone before it is opened (removed, or replaced by a file);
// it is gone, and what replaced it is new. Other errors of the file system
// (a folder that may not be read, an I/O error) fail the listing, where
// fileblob would skip the folder in silence; transient ones are retried as
// a failed page is.

// localChunk is the entries a listing reads from a folder at once: one
// request of the listing window.
const localChunk = 256

// localPager lists a prefix of a fileblob bucket's folder by reading it. Its
// Next has the contract of blob.ListIterator's; close releases its open
// folder. Not safe for concurrent use.
type localPager struct {
	root    string // the bucket's folder
	prefix  string // the listed prefix
	win     *aimd.Window
	backoff backoff
	cls     classifiers // WithErrorClassifier's, as the pager's
	chunk   int         // entries read at once: localChunk, less in tests
	// level is set for a listing with the delimiter "/": the folder's own
	// files, and a folder entry for each subfolder that holds a file.
	level bool
	// fault, in tests, fails an operation before it is made: "open",
	// "readdir" or "lstat" of the path rel.
	fault func(op, rel string) error

	stack []string      // folders still to read, relative to root, '/'-separated
	dir   *os.File      // the folder being read; nil between folders
	rel   string        // dir's path relative to root
	ents  []os.DirEntry // entries read from dir; those from j on are not handled yet
	j     int

	page     []*blob.ListObject
	i        int
	done     bool
	answered time.Time // when the last page was read
}

// newLocalPager returns the pager of prefix in the bucket whose folder is
// root, or nil when prefix is not one it lists exactly as fileblob does:
// its folder part (up to the last '/') must be a clean relative path, and a
// folder below root. The caller then lists through the bucket.
func newLocalPager(root, prefix string, win *aimd.Window, b backoff) *localPager {
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return nil // the whole top level: not a listing Mark makes without a delimiter
	}
	rel := prefix[:i]
	if !filepath.IsLocal(rel) || filepath.ToSlash(filepath.Clean(rel)) != rel || strings.ContainsRune(rel, '\\') {
		return nil
	}
	// fileblob walks "root/rel" and would list the folder itself were it
	// not one: only a folder is listed here.
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	switch {
	case vanished(err):
		return &localPager{done: true}
	case err != nil || !fi.IsDir():
		return nil
	}
	p := &localPager{root: root, prefix: prefix, win: win, backoff: b, chunk: localChunk}
	if !p.skipFolder(rel) {
		p.stack = append(p.stack, rel)
	}
	return p
}

// newLocalLevelPager returns the pager of prefix with the delimiter "/" in
// the bucket whose folder is root, or nil when it cannot tell that it lists
// what fileblob does. prefix must be "" or a folder's key and '/', and the
// folder's name, and the name of every entry in it, plain: valid UTF-8
// without fileblob's escape, so that each key is the entry's path. fileblob
// lists a subfolder when a file lies somewhere below it (its first file's
// key, cut after the prefix's next '/', is the folder's key): so does this
// pager, looking below each subfolder for its first file.
//
// An entry whose name is not plain is looked for before the listing (then
// the listing is left to the bucket); one that comes after is not listed.
func newLocalLevelPager(root, prefix string, win *aimd.Window, b backoff) *localPager {
	rel, ok := strings.CutSuffix(prefix, "/")
	switch {
	case prefix == "":
	case !ok || !filepath.IsLocal(rel) || filepath.ToSlash(filepath.Clean(rel)) != rel || !plainName(rel):
		return nil
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(dir)
	switch {
	case vanished(err):
		return &localPager{done: true}
	case err != nil || !fi.IsDir():
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(localChunk)
		for _, e := range ents {
			if !plainName(e.Name()) || strings.ContainsRune(e.Name(), '\\') {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil
		}
	}
	return &localPager{root: root, prefix: prefix, win: win, backoff: b, chunk: localChunk, level: true, stack: []string{rel}}
}

// plainName reports whether fileblob's listing keeps name as it is: valid
// UTF-8 (fileblob rebuilds a path with an escape from its code points) and
// no escape.
func plainName(name string) bool {
	return utf8.ValidString(name) && !strings.Contains(name, "__0x")
}

// Next returns the next object of the listing, or io.EOF after the last.
func (p *localPager) Next(ctx context.Context) (*blob.ListObject, error) {
	for p.i == len(p.page) {
		if p.done {
			return nil, io.EOF
		}
		if err := p.fetch(ctx); err != nil {
			p.close()
			return nil, err
		}
	}
	o := p.page[p.i]
	p.page[p.i] = nil
	p.i++
	return o, nil
}

// close releases the folder being read; Next must not be called after.
func (p *localPager) close() {
	if p.dir != nil {
		p.dir.Close()
		p.dir = nil
	}
	p.done = true
}

// fetch reads the next page within the window, retrying as pager.fetch
// does: transient errors after a backoff, up to listAttempts in all.
func (p *localPager) fetch(ctx context.Context) error {
	var work time.Duration
	if !p.answered.IsZero() {
		work = time.Since(p.answered)
	}
	p.page, p.i = p.page[:0], 0
	for attempt := 1; ; attempt++ {
		// The window checks ctx only when it has no room.
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := p.win.Acquire(ctx)
		if err != nil {
			return err
		}
		err = p.read()
		p.win.Release(s, judge(err, p.cls), work)
		if err == nil {
			p.answered = time.Now()
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if !p.cls.transient(err) {
			return err
		}
		if attempt >= listAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		if err := p.backoff.wait(ctx, attempt); err != nil {
			return err
		}
		work = 0
	}
}

// read appends to the page the objects of the next chunk of entries that
// holds any, or sets done. It resumes where it failed: an entry is handled
// once, a folder opened once.
func (p *localPager) read() error {
	for {
		for ; p.j < len(p.ents); p.j++ {
			if err := p.handle(p.ents[p.j]); err != nil {
				return err
			}
			p.ents[p.j] = nil
		}
		if len(p.page) > 0 {
			return nil
		}
		if p.dir != nil {
			if err := p.injected("readdir", p.rel); err != nil {
				return err
			}
			ents, err := p.dir.ReadDir(p.chunk)
			if len(ents) > 0 {
				p.ents, p.j = ents, 0
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) && !vanished(err) {
				return err // the folder stays open: the next try reads on
			}
			p.dir.Close()
			p.dir = nil
			continue
		}
		if len(p.stack) == 0 {
			p.done = true
			return nil
		}
		rel := p.stack[len(p.stack)-1]
		if err := p.injected("open", rel); err != nil {
			return err
		}
		f, err := os.Open(filepath.Join(p.root, filepath.FromSlash(rel)))
		if err != nil && !vanished(err) {
			return err
		}
		p.stack = p.stack[:len(p.stack)-1]
		if err == nil {
			p.dir, p.rel = f, rel
		}
	}
}

// handle lists one entry of the folder being read: a file of the prefix
// goes to the page, a folder that may hold some to the stack.
func (p *localPager) handle(e os.DirEntry) error {
	rel := e.Name()
	if p.rel != "" {
		rel = p.rel + "/" + rel
	}
	if p.level {
		return p.handleLevel(e, rel)
	}
	if e.IsDir() {
		if !p.skipFolder(rel) {
			p.stack = append(p.stack, rel)
		}
		return nil
	}
	if strings.HasSuffix(rel, attrsSuffix) {
		return nil // fileblob's attribute side file
	}
	key := unescapeKey(rel)
	if !strings.HasPrefix(key, p.prefix) {
		return nil
	}
	if err := p.injected("lstat", rel); err != nil {
		return err
	}
	fi, err := e.Info()
	switch {
	case vanished(err):
		return nil // removed since the folder was read
	case err != nil:
		return err
	case fi.IsDir():
		return nil // replaced by a folder since the folder was read
	}
	p.page = append(p.page, &blob.ListObject{Key: key, ModTime: fi.ModTime(), Size: fi.Size()})
	return nil
}

// handleLevel lists one entry of the folder of a listing with a delimiter:
// a file is an object, a subfolder with a file below it a folder entry.
func (p *localPager) handleLevel(e os.DirEntry, rel string) error {
	name := e.Name()
	if !plainName(name) || strings.ContainsRune(name, '\\') {
		return nil // came after the check of newLocalLevelPager
	}
	if e.IsDir() {
		has, err := p.holdsFile(rel)
		if err == nil && has {
			p.page = append(p.page, &blob.ListObject{Key: p.prefix + name + "/", IsDir: true})
		}
		return err
	}
	if strings.HasSuffix(name, attrsSuffix) {
		return nil
	}
	if err := p.injected("lstat", rel); err != nil {
		return err
	}
	fi, err := e.Info()
	switch {
	case vanished(err):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return nil
	}
	p.page = append(p.page, &blob.ListObject{Key: p.prefix + name, ModTime: fi.ModTime(), Size: fi.Size()})
	return nil
}

// holdsFile reports whether a file fileblob lists lies anywhere below the
// folder rel: a non-folder whose name does not end in ".attrs". It stops at
// the first.
func (p *localPager) holdsFile(rel string) (bool, error) {
	stack := []string{rel}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := p.injected("open", d); err != nil {
			return false, err
		}
		f, err := os.Open(filepath.Join(p.root, filepath.FromSlash(d)))
		if vanished(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		for {
			if err := p.injected("readdir", d); err != nil {
				f.Close()
				return false, err
			}
			ents, err := f.ReadDir(p.chunk)
			for _, e := range ents {
				switch {
				case e.IsDir():
					stack = append(stack, d+"/"+e.Name())
				case !strings.HasSuffix(e.Name(), attrsSuffix):
					f.Close()
					return true, nil
				}
			}
			if errors.Is(err, io.EOF) || vanished(err) {
				break
			}
			if err != nil {
				f.Close()
				return false, err
			}
		}
		f.Close()
	}
	return false, nil
}

// injected is the error the test's fault gives op on rel, if any.
func (p *localPager) injected(op, rel string) error {
	if p.fault == nil {
		return nil
	}
	return p.fault(op, rel)
}

// skipFolder reports whether fileblob's walk leaves out the folder at rel:
// when its key and a '/' are longer than the prefix and do not begin with
// it. fileblob looks at a folder whose name ends in ".attrs" no further than
// its name, and walks into it.
func (p *localPager) skipFolder(rel string) bool {
	if strings.HasSuffix(rel, attrsSuffix) {
		return false
	}
	key := unescapeKey(rel) + "/"
	return len(key) > len(p.prefix) && !strings.HasPrefix(key, p.prefix)
}

// attrsSuffix ends the names of fileblob's attribute side files, which its
// listing leaves out.
const attrsSuffix = ".attrs"

// vanished reports whether err says a path is gone: it does not exist, or
// a part of it is no longer a folder.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// unescapeKey decodes fileblob's escapes in a '/'-separated path, as
// fileblob does when it lists: each "__0x<hex>__" whose hex digits (up to
// the next '_') parse as a 32-bit number becomes that code point. Once a
// path holds one, fileblob rebuilds the whole path from its code points, so
// invalid UTF-8 anywhere in it becomes U+FFFD; a path without one is left as
// it is, byte for byte.
func unescapeKey(s string) string {
	if !strings.Contains(s, "__0x") {
		return s
	}
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if c, end, ok := unescapeAt(r, i); ok {
			if out == nil {
				out = append(make([]rune, 0, len(r)), r[:i]...)
			}
			out = append(out, c)
			i = end
			continue
		}
		if out != nil {
			out = append(out, r[i])
		}
	}
	if out == nil {
		return s
	}
	return string(out)
}

// unescapeAt decodes the escape that starts at r[i], if one does: its code
// point and the index of its last rune.
func unescapeAt(r []rune, i int) (c rune, end int, ok bool) {
	if len(r)-i < 4 || r[i] != '_' || r[i+1] != '_' || r[i+2] != '0' || r[i+3] != 'x' {
		return 0, 0, false
	}
	j := i + 4
	for j < len(r) && r[j] != '_' {
		j++
	}
	if j+1 >= len(r) || r[j+1] != '_' {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(string(r[i+4:j]), 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return rune(n), j + 1, true
}

// checkLocalRoot checks WithLocalListing's folder against the bucket: the
// bucket must be fileblob's (its As gives an os.FileInfo) at the folder dir
// (the same file), and a key's file must be the key's path under dir (a
// missing key's error, an *os.PathError through ErrorAs, names it): a
// bucket opened at another folder or with a prefix would make the listing's
// keys another bucket's.
func checkLocalRoot(ctx context.Context, bucket *blob.Bucket, dir string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: WithLocalListing(%q): %s", ErrInvalidInput, dir, fmt.Sprintf(format, args...))
	}
	want, err := os.Stat(dir)
	if err != nil {
		return bad("%v", err)
	}
	var fi os.FileInfo
	if !bucket.As(&fi) {
		return bad("the bucket is not a fileblob bucket")
	}
	if !os.SameFile(fi, want) {
		return bad("the bucket's folder is another one")
	}
	probe := fmt.Sprintf("lakegc-local-listing-probe-%d-%d", os.Getpid(), time.Now().UnixNano())
	_, err = bucket.Attributes(ctx, probe)
	var pe *os.PathError
	if err == nil || !bucket.ErrorAs(err, &pe) {
		return bad("cannot tell where the bucket keeps key %q: %v", probe, err)
	}
	folder, ok := strings.CutSuffix(pe.Path, string(filepath.Separator)+probe)
	if ok {
		got, serr := os.Stat(folder)
		ok = serr == nil && os.SameFile(got, want)
	}
	if !ok {
		return bad("the bucket keeps key %q at %s, not in the folder", probe, pe.Path)
	}
	return nil
}
