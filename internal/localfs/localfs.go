// Package localfs lists a prefix of a gocloud fileblob bucket by reading its
// folder, one folder at a time, instead of through fileblob's listing.
// fileblob walks and sorts the whole tree under a prefix for every page it
// returns, and reads each file's metadata up to the page it was asked for, so
// a folder of n objects listed a page of p keys at a time costs about n²/p
// file system calls. Here each folder is read once, a chunk of entries at a
// time. The package does no retrying and no pacing: its caller (sweep's
// pager) wraps each Read in its window and retries.
//
// The keys are the ones fileblob's listing returns, worked out the way
// fileblob works them out (sweep's TestLocalListingMatchesFileblob holds the
// two side by side on hostile trees):
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
// file system's order, and a caller that needs ascending keys sorts them. A
// listing in flight holds one open folder, one chunk of its entries, and the
// paths of the subfolders still to read: nothing that grows with the number
// of objects of a flat folder.
//
// What a listing meets while the namespace changes under it: a file gone
// before it is read (removed, or replaced by a folder) is not listed, nor
// is a folder gone before it is opened (removed, or replaced by a file);
// it is gone, and what replaced it is new. A folder replaced by a symbolic
// link is gone too: the link's target is never listed (openFolder). Other
// errors of the file system (a folder that may not be read, an I/O error)
// fail the listing, where fileblob would skip the folder in silence; the
// caller may retry them: a Lister resumes where it failed.
//
// [CheckRoot] tells whether a bucket is the fileblob bucket of a folder, so
// that a listing read from the folder is the bucket's.
package localfs

import (
	"context"
	"errors"
	"fmt"
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

// Chunk is the entries a Lister reads from a folder at once unless its
// Chunk field says otherwise.
const Chunk = 256

// Lister lists a prefix of a fileblob bucket's folder by reading it. Not
// safe for concurrent use.
type Lister struct {
	// Chunk is the entries read from a folder at once (New sets Chunk).
	Chunk int
	// Fault, when set (in tests), fails an operation before it is made:
	// "open", "readdir" or "lstat" of the path rel (relative to the root,
	// '/'-separated).
	Fault func(op, rel string) error

	root   string // the bucket's folder
	prefix string // the listed prefix
	// level is set for a listing with the delimiter "/": the folder's own
	// files, and a folder entry for each subfolder that holds a file.
	level bool
	stack []string      // folders still to read, relative to root, '/'-separated
	dir   *os.File      // the folder being read; nil between folders
	rel   string        // dir's path relative to root
	ents  []os.DirEntry // entries read from dir; those from j on are not handled yet
	j     int
	page  []*blob.ListObject // the page being read
	done  bool
}

// New returns the Lister of prefix (without a delimiter) in the bucket
// whose folder is root, or nil when prefix is not one it lists exactly as fileblob does:
// its folder part (up to the last '/') must be a clean relative path, and a
// folder below root. The caller then lists through the bucket.
func New(root, prefix string) *Lister {
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
		return &Lister{done: true}
	case err != nil || !fi.IsDir():
		return nil
	}
	l := &Lister{root: root, prefix: prefix, Chunk: Chunk}
	if !l.skipFolder(rel) {
		l.stack = append(l.stack, rel)
	}
	return l
}

// NewLevel returns the Lister of prefix with the delimiter "/" in
// the bucket whose folder is root, or nil when it cannot tell that it lists
// what fileblob does. prefix must be "" or a folder's key and '/', and the
// folder's name, and the name of every entry in it, plain: valid UTF-8
// without fileblob's escape, so that each key is the entry's path. fileblob
// lists a subfolder when a file lies somewhere below it (its first file's
// key, cut after the prefix's next '/', is the folder's key): so does this
// Lister, looking below each subfolder for its first file.
//
// An entry whose name is not plain is looked for before the listing (then
// the listing is left to the bucket); one that comes after is not listed.
func NewLevel(root, prefix string) *Lister {
	rel, ok := strings.CutSuffix(prefix, "/")
	switch {
	case prefix == "":
	case !ok || !filepath.IsLocal(rel) || filepath.ToSlash(filepath.Clean(rel)) != rel || !PlainName(rel):
		return nil
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(dir)
	switch {
	case vanished(err):
		return &Lister{done: true}
	case err != nil || !fi.IsDir():
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(Chunk)
		for _, e := range ents {
			if !PlainName(e.Name()) || strings.ContainsRune(e.Name(), '\\') {
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
	return &Lister{root: root, prefix: prefix, Chunk: Chunk, level: true, stack: []string{rel}}
}

// PlainName reports whether fileblob's listing keeps name as it is: valid
// UTF-8 (fileblob rebuilds a path with an escape from its code points) and
// no escape.
func PlainName(name string) bool {
	return utf8.ValidString(name) && !strings.Contains(name, "__0x")
}

// Read appends to page the objects of the entries it reads, chunk after
// chunk, and returns it once page holds any at the end of a chunk; after the
// last object Done is true. On an error page keeps what was appended before
// it, and the next Read resumes where it failed: an entry is handled once, a
// folder opened once.
func (l *Lister) Read(page []*blob.ListObject) ([]*blob.ListObject, error) {
	l.page = page
	err := l.read()
	page, l.page = l.page, nil
	return page, err
}

// Done reports whether the listing is over: Read has returned its last
// objects, or Close was called.
func (l *Lister) Done() bool { return l.done }

// Reading reports whether a folder is open.
func (l *Lister) Reading() bool { return l.dir != nil }

// Close releases the folder being read and ends the listing.
func (l *Lister) Close() {
	if l.dir != nil {
		l.dir.Close()
		l.dir = nil
	}
	l.done = true
}

func (l *Lister) read() error {
	for {
		for ; l.j < len(l.ents); l.j++ {
			if err := l.handle(l.ents[l.j]); err != nil {
				return err
			}
			l.ents[l.j] = nil
		}
		if len(l.page) > 0 {
			return nil
		}
		if l.dir != nil {
			if err := l.injected("readdir", l.rel); err != nil {
				return err
			}
			ents, err := l.dir.ReadDir(l.Chunk)
			if len(ents) > 0 {
				l.ents, l.j = ents, 0
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) && !vanished(err) {
				return err // the folder stays open: the next try reads on
			}
			l.dir.Close()
			l.dir = nil
			continue
		}
		if len(l.stack) == 0 {
			l.done = true
			return nil
		}
		rel := l.stack[len(l.stack)-1]
		if err := l.injected("open", rel); err != nil {
			return err
		}
		f, err := l.openFolder(rel)
		if err != nil && !vanished(err) {
			return err
		}
		l.stack = l.stack[:len(l.stack)-1]
		if err == nil {
			l.dir, l.rel = f, rel
		}
	}
}

// handle lists one entry of the folder being read: a file of the prefix
// goes to the page, a folder that may hold some to the stack.
func (l *Lister) handle(e os.DirEntry) error {
	rel := e.Name()
	if l.rel != "" {
		rel = l.rel + "/" + rel
	}
	if l.level {
		return l.handleLevel(e, rel)
	}
	if e.IsDir() {
		if !l.skipFolder(rel) {
			l.stack = append(l.stack, rel)
		}
		return nil
	}
	if strings.HasSuffix(rel, attrsSuffix) {
		return nil // fileblob's attribute side file
	}
	key := UnescapeKey(rel)
	if !strings.HasPrefix(key, l.prefix) {
		return nil
	}
	if err := l.injected("lstat", rel); err != nil {
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
	l.page = append(l.page, &blob.ListObject{Key: key, ModTime: fi.ModTime(), Size: fi.Size()})
	return nil
}

// handleLevel lists one entry of the folder of a listing with a delimiter:
// a file is an object, a subfolder with a file below it a folder entry.
func (l *Lister) handleLevel(e os.DirEntry, rel string) error {
	name := e.Name()
	if !PlainName(name) || strings.ContainsRune(name, '\\') {
		return nil // came after the check of NewLevel
	}
	if e.IsDir() {
		has, err := l.holdsFile(rel)
		if err == nil && has {
			l.page = append(l.page, &blob.ListObject{Key: l.prefix + name + "/", IsDir: true})
		}
		return err
	}
	if strings.HasSuffix(name, attrsSuffix) {
		return nil
	}
	if err := l.injected("lstat", rel); err != nil {
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
	l.page = append(l.page, &blob.ListObject{Key: l.prefix + name, ModTime: fi.ModTime(), Size: fi.Size()})
	return nil
}

// holdsFile reports whether a file fileblob lists lies anywhere below the
// folder rel: a non-folder whose name does not end in ".attrs". It stops at
// the first.
func (l *Lister) holdsFile(rel string) (bool, error) {
	stack := []string{rel}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := l.injected("open", d); err != nil {
			return false, err
		}
		f, err := l.openFolder(d)
		if vanished(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		for {
			if err := l.injected("readdir", d); err != nil {
				f.Close()
				return false, err
			}
			ents, err := f.ReadDir(l.Chunk)
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

// openFolder opens the folder at rel without going through a symbolic
// link there: os.Open follows one, so a folder replaced by a link since its
// parent was read would list the link's target under the folder's keys (and
// a delete of such a key goes through the link). After opening, the path's
// own entry (lstat) must be a folder and the very one opened; if not, the
// folder is gone (vanished), as a removed one is, and what replaced it is
// new. A link made after this check is not seen: deletes by path share that.
func (l *Lister) openFolder(rel string) (*os.File, error) {
	path := filepath.Join(l.root, filepath.FromSlash(rel))
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err == nil {
		var here os.FileInfo
		if here, err = os.Lstat(path); err == nil && (!here.IsDir() || !os.SameFile(opened, here)) {
			err = fmt.Errorf("localfs: %s was replaced since its folder was read: %w", path, fs.ErrNotExist)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// injected is the error Fault gives op on rel, if any.
func (l *Lister) injected(op, rel string) error {
	if l.Fault == nil {
		return nil
	}
	return l.Fault(op, rel)
}

// skipFolder reports whether fileblob's walk leaves out the folder at rel:
// when its key and a '/' are longer than the prefix and do not begin with
// it. fileblob looks at a folder whose name ends in ".attrs" no further than
// its name, and walks into it.
func (l *Lister) skipFolder(rel string) bool {
	if strings.HasSuffix(rel, attrsSuffix) {
		return false
	}
	key := UnescapeKey(rel) + "/"
	return len(key) > len(l.prefix) && !strings.HasPrefix(key, l.prefix)
}

// attrsSuffix ends the names of fileblob's attribute side files, which its
// listing leaves out.
const attrsSuffix = ".attrs"

// vanished reports whether err says a path is gone: it does not exist, or
// a part of it is no longer a folder.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// UnescapeKey decodes fileblob's escapes in a '/'-separated path, as
// fileblob does when it lists: each "__0x<hex>__" whose hex digits (up to
// the next '_') parse as a 32-bit number becomes that code point. Once a
// path holds one, fileblob rebuilds the whole path from its code points, so
// invalid UTF-8 anywhere in it becomes U+FFFD; a path without one is left as
// it is, byte for byte.
func UnescapeKey(s string) string {
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

// CheckRoot checks that bucket is a fileblob bucket opened at the folder dir
// with no prefix: its As gives an os.FileInfo of dir (the same file), and a
// key's file is the key's path under dir (a missing key's error, an
// *os.PathError through ErrorAs, names it). A bucket wrapped by a driver
// that forwards As and ErrorAs passes. An error says why not.
func CheckRoot(ctx context.Context, bucket *blob.Bucket, dir string) error {
	want, err := os.Stat(dir)
	if err != nil {
		return err
	}
	var fi os.FileInfo
	if !bucket.As(&fi) {
		return errors.New("the bucket is not a fileblob bucket")
	}
	if !os.SameFile(fi, want) {
		return errors.New("the bucket's folder is another one")
	}
	probe := fmt.Sprintf("lakegc-local-listing-probe-%d-%d", os.Getpid(), time.Now().UnixNano())
	_, err = bucket.Attributes(ctx, probe)
	var pe *os.PathError
	if err == nil || !bucket.ErrorAs(err, &pe) {
		return fmt.Errorf("cannot tell where the bucket keeps key %q: %v", probe, err)
	}
	folder, ok := strings.CutSuffix(pe.Path, string(filepath.Separator)+probe)
	if ok {
		got, serr := os.Stat(folder)
		ok = serr == nil && os.SameFile(got, want)
	}
	if !ok {
		return fmt.Errorf("the bucket keeps key %q at %s, not in the folder", probe, pe.Path)
	}
	return nil
}
