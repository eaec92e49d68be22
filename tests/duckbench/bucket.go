package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// pageSize is the most keys a listing page holds, as on S3.
const pageSize = 1000

// A source lists the objects of the data folder, slice by slice.
type source interface {
	// slices returns the slice names, ascending.
	slices() []string
	// page appends to dst the objects of slice i from row start on, at
	// most n of them, and returns the row after the last one, or -1 when
	// the slice ends there.
	page(i int, start int64, n int, dst []*driver.ListObject) ([]*driver.ListObject, int64, error)
}

// genSource generates the listing from the layout.
type genSource struct{ l *layout }

func (g genSource) slices() []string { return g.l.names }

func (g genSource) page(i int, start int64, n int, dst []*driver.ListObject) ([]*driver.ListObject, int64, error) {
	var buf []byte
	j := int(start)
	for ; j < g.l.PerSlice && n > 0; j, n = j+1, n-1 {
		buf = g.l.appendKey(buf[:0], i, j)
		dst = append(dst, &driver.ListObject{Key: string(buf), ModTime: modTime, Size: 1})
	}
	if j >= g.l.PerSlice {
		return dst, -1, nil
	}
	return dst, int64(j), nil
}

// parquetSource reads the listing from the files <dir>/<slice>.parquet. A
// slice listed page after page keeps its reader open between pages.
type parquetSource struct {
	dir   string
	names []string

	mu      sync.Mutex
	cursors map[int]*cursor
}

// cursor reads a listing file's two columns in step.
type cursor struct {
	f        *os.File
	rows     int64
	next     int64 // the row that comes next
	address  *columnReader
	modified *columnReader
}

func (c *cursor) close() {
	c.address.close()
	c.modified.close()
	c.f.Close()
}

// row returns the next row; false at the end.
func (c *cursor) row() (string, time.Time, bool, error) {
	a, ok, err := c.address.bytes()
	if !ok || err != nil {
		return "", time.Time{}, false, err
	}
	ms, ok, err := c.modified.int64()
	if err == nil && !ok {
		err = fmt.Errorf("duckbench: read %s: fewer modification times than addresses", c.f.Name())
	}
	if err != nil {
		return "", time.Time{}, false, err
	}
	c.next++
	return string(a), time.UnixMilli(ms).UTC(), true, nil
}

func newParquetSource(dir string) (*parquetSource, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	s := &parquetSource{dir: dir, cursors: map[int]*cursor{}}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".parquet"); ok && !e.IsDir() {
			s.names = append(s.names, name)
		}
	}
	slices.Sort(s.names)
	if len(s.names) == 0 {
		return nil, fmt.Errorf("duckbench: no listing files in %s", dir)
	}
	return s, nil
}

func (s *parquetSource) slices() []string { return s.names }

func (s *parquetSource) open(i int) (*cursor, error) {
	name := filepath.Join(s.dir, s.names[i]+".parquet")
	f, pf, err := openParquet(name)
	if err != nil {
		return nil, err
	}
	c := &cursor{f: f, rows: pf.NumRows()}
	if c.address, err = openColumn(name, pf, "address"); err == nil {
		c.modified, err = openColumn(name, pf, "last_modified")
	}
	if err == nil {
		if leaf, _ := pf.Schema().Lookup("last_modified"); !isMillis(leaf.Node) {
			err = fmt.Errorf("duckbench: %s: last_modified is not a timestamp in milliseconds", name)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// isMillis reports whether a column holds timestamps in milliseconds.
func isMillis(n parquet.Node) bool {
	lt := n.Type().LogicalType()
	if lt == nil {
		return false
	}
	ts, ok := lt.Value.(*format.TimestampType)
	if !ok {
		return false
	}
	_, ok = ts.Unit.Value.(*format.MilliSeconds)
	return ok
}

func (s *parquetSource) page(i int, start int64, n int, dst []*driver.ListObject) ([]*driver.ListObject, int64, error) {
	s.mu.Lock()
	c := s.cursors[i]
	delete(s.cursors, i)
	s.mu.Unlock()
	if c != nil && c.next != start {
		c.close()
		c = nil
	}
	if c == nil {
		var err error
		if c, err = s.open(i); err != nil {
			return dst, 0, err
		}
		// A page asked for out of turn (never by Mark): skip to it.
		for c.next < start {
			if _, _, ok, err := c.row(); !ok || err != nil {
				c.close()
				return dst, 0, cmp.Or(err, fmt.Errorf("duckbench: page token %d past the end of %s", start, s.names[i]))
			}
		}
	}
	for range n {
		key, mod, ok, err := c.row()
		if err != nil {
			c.close()
			return dst, 0, err
		}
		if !ok {
			c.close()
			if c.next < c.rows {
				return dst, 0, fmt.Errorf("duckbench: %s ended at row %d of %d", s.names[i], c.next, c.rows)
			}
			return dst, -1, nil
		}
		dst = append(dst, &driver.ListObject{Key: key, ModTime: mod, Size: 1})
	}
	if c.next >= c.rows {
		c.close()
		return dst, -1, nil
	}
	s.mu.Lock()
	s.cursors[i] = c
	s.mu.Unlock()
	return dst, c.next, nil
}

// benchBucket is a gocloud.dev blob driver whose data/ folder is read-only
// and listed from a source, in sorted pages of at most 1000 keys, and whose
// other keys (Mark's report) are files under root. Its data objects can be
// listed, not read or deleted: Mark only lists them.
type benchBucket struct {
	src   source // nil: an empty data folder
	index map[string]int
	root  string
}

func newBenchBucket(src source, root string) *blob.Bucket {
	b := &benchBucket{src: src, root: root, index: map[string]int{}}
	if src != nil {
		for i, name := range src.slices() {
			b.index[name] = i
		}
	}
	return blob.NewBucket(b)
}

var errUnsupported = errors.New("duckbench: unsupported by the benchmark's bucket")

func (b *benchBucket) ErrorCode(err error) gcerrors.ErrorCode {
	if errors.Is(err, fs.ErrNotExist) {
		return gcerrors.NotFound
	}
	return gcerrors.Unknown
}

func (b *benchBucket) As(any) bool             { return false }
func (b *benchBucket) ErrorAs(error, any) bool { return false }
func (b *benchBucket) Close() error            { return nil }

func (b *benchBucket) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return errUnsupported
}

func (b *benchBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errUnsupported
}

// file returns the file of a report key; data keys have none.
func (b *benchBucket) file(key string) (string, error) {
	if strings.HasPrefix(key, "data/") || !fs.ValidPath(key) {
		return "", fmt.Errorf("%w: key %q", errUnsupported, key)
	}
	return filepath.Join(b.root, filepath.FromSlash(key)), nil
}

func (b *benchBucket) Attributes(_ context.Context, key string) (*driver.Attributes, error) {
	name, err := b.file(key)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ModTime: st.ModTime(), Size: st.Size()}, nil
}

func (b *benchBucket) ListPaged(_ context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	n := pageSize
	if opts.PageSize > 0 && opts.PageSize < n {
		n = opts.PageSize
	}
	switch rest, data := strings.CutPrefix(opts.Prefix, "data/"); {
	case data && rest == "" && opts.Delimiter == "/":
		page := &driver.ListPage{}
		if b.src != nil {
			for _, s := range b.src.slices() {
				page.Objects = append(page.Objects, &driver.ListObject{Key: "data/" + s + "/", IsDir: true})
			}
		}
		return page, nil
	case data && opts.Delimiter == "":
		i, ok := b.index[strings.TrimSuffix(rest, "/")]
		if !ok || !strings.HasSuffix(rest, "/") {
			return nil, fmt.Errorf("%w: list %q", errUnsupported, opts.Prefix)
		}
		var start int64
		if len(opts.PageToken) > 0 {
			var err error
			if start, err = strconv.ParseInt(string(opts.PageToken), 10, 64); err != nil || start < 0 {
				return nil, fmt.Errorf("duckbench: bad page token %q", opts.PageToken)
			}
		}
		objs, next, err := b.src.page(i, start, n, make([]*driver.ListObject, 0, n))
		if err != nil {
			return nil, err
		}
		page := &driver.ListPage{Objects: objs}
		if next >= 0 {
			page.NextPageToken = strconv.AppendInt(nil, next, 10)
		}
		return page, nil
	case data || b.src != nil && strings.HasPrefix("data/", opts.Prefix) && (opts.Prefix != "" || opts.Delimiter != "/"):
		// A listing that would reach into the data folder in a way Mark
		// does not list it.
		return nil, fmt.Errorf("%w: list %q with delimiter %q", errUnsupported, opts.Prefix, opts.Delimiter)
	}
	// The report files, in one page.
	var keys []string
	err := filepath.WalkDir(b.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(b.root, p)
		if err == nil && strings.HasPrefix(filepath.ToSlash(rel), opts.Prefix) {
			keys = append(keys, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if b.src != nil && opts.Prefix == "" && opts.Delimiter == "/" {
		keys = append(keys, "data/") // the data folder, listed above
	}
	slices.Sort(keys)
	page := &driver.ListPage{}
	for _, k := range keys {
		if opts.Delimiter != "" {
			if i := strings.Index(k[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				dir := k[:len(opts.Prefix)+i+len(opts.Delimiter)]
				if m := len(page.Objects); m == 0 || page.Objects[m-1].Key != dir {
					page.Objects = append(page.Objects, &driver.ListObject{Key: dir, IsDir: true})
				}
				continue
			}
		}
		st, err := os.Stat(filepath.Join(b.root, filepath.FromSlash(k)))
		if err != nil {
			return nil, err
		}
		page.Objects = append(page.Objects, &driver.ListObject{Key: k, ModTime: st.ModTime(), Size: st.Size()})
	}
	return page, nil
}

type fileReader struct {
	io.Reader
	f     *os.File
	attrs driver.ReaderAttributes
}

func (r *fileReader) Close() error                         { return r.f.Close() }
func (r *fileReader) As(any) bool                          { return false }
func (r *fileReader) Attributes() *driver.ReaderAttributes { return &r.attrs }

func (b *benchBucket) NewRangeReader(_ context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	name, err := b.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		_, err = f.Seek(offset, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &fileReader{Reader: f, f: f, attrs: driver.ReaderAttributes{ModTime: st.ModTime(), Size: st.Size()}}
	if length >= 0 {
		r.Reader = io.LimitReader(f, length)
	}
	return r, nil
}

// fileWriter writes a report object to a temporary file and renames it on
// Close, so that a reader never sees half an object.
type fileWriter struct {
	f    *os.File
	name string
}

func (w *fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *fileWriter) Close() error {
	err := w.f.Close()
	if err == nil {
		err = os.Rename(w.f.Name(), w.name)
	}
	if err != nil {
		os.Remove(w.f.Name())
	}
	return err
}

func (b *benchBucket) NewTypedWriter(_ context.Context, key, _ string, _ *driver.WriterOptions) (driver.Writer, error) {
	name, err := b.file(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-")
	if err != nil {
		return nil, err
	}
	return &fileWriter{f: f, name: name}, nil
}

func (b *benchBucket) Delete(_ context.Context, key string) error {
	name, err := b.file(key)
	if err != nil {
		return err
	}
	return os.Remove(name)
}
