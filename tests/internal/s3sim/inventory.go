package s3sim

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	gzip "github.com/klauspost/compress/gzip"
	"hash"
	"io"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"gocloud.dev/blob/driver"
	"golang.org/x/sync/errgroup"
)

// InventoryFormat is the format of an inventory report's data files.
type InventoryFormat int

// The formats of S3 Inventory that the store writes.
const (
	// InventoryCSV: gzip-compressed CSV files (.csv.gz) of quoted fields,
	// no header, the key URL-encoded.
	InventoryCSV InventoryFormat = iota
	// InventoryParquet: Parquet files (.parquet), S3's column names.
	InventoryParquet
)

// DefaultObjectsPerFile is how many objects' keys an inventory data file
// covers by default: each file holds the live objects of a range of that
// many positions of the slices (or as many written objects).
const DefaultObjectsPerFile = 1 << 20

// The fields every report lists, in the manifest's words.
const (
	inventoryCSVSchema     = "Bucket, Key, Size, LastModifiedDate, ETag"
	inventoryParquetSchema = "message s3.inventory {  required binary bucket (STRING);  required binary key (STRING);  optional int64 size;  optional int64 last_modified_date (TIMESTAMP(MILLIS,true));  optional binary e_tag (STRING);}"
	inventoryVersion       = "2016-11-30"
)

// InventoryConfig declares an S3 Inventory report of the store, as S3
// publishes one into a destination bucket (here the store itself).
type InventoryConfig struct {
	// SourceBucket is the name of the bucket the report lists (the
	// store), as the manifest and the rows name it. Required.
	SourceBucket string
	// DestinationBucket is the name of the bucket the report is published
	// to, for the manifest's ARN ("": SourceBucket). The files are written
	// to the store whatever it says.
	DestinationBucket string
	// DestinationPrefix is the prefix of the report's keys, without a
	// trailing '/' ("": none).
	DestinationPrefix string
	// ConfigID names the inventory configuration. Required.
	ConfigID string
	// Prefix limits the report to the keys that start with it, as an
	// inventory configuration's filter ("": every key).
	Prefix string
	// Time is when the report's scan began: the objects it lists are
	// those the store holds at the call whose modification time is at or
	// before Time (zero: the store's clock now).
	Time time.Time
	// Format of the data files.
	Format InventoryFormat
	// ObjectsPerFile bounds the positions a data file covers (0:
	// DefaultObjectsPerFile).
	ObjectsPerFile int
}

// Inventory is a report the store publishes: its manifest and data files.
type Inventory struct {
	// ManifestKey is the key of manifest.json, ChecksumKey that of
	// manifest.checksum (the manifest's MD5 in hex), SymlinkKey that of
	// the Hive symlink.txt (the data files' s3:// URIs, a line each).
	ManifestKey, ChecksumKey, SymlinkKey string
	// Time is the report's time, as the manifest's creationTimestamp
	// says it (to the millisecond).
	Time time.Time
	// Files are the data files, in the manifest's order.
	Files []InventoryFile
	// Rows is how many objects the report lists.
	Rows int64
}

// InventoryFile is one data file of a report.
type InventoryFile struct {
	Key  string         // in the store
	Size int64          // in bytes, as the manifest says
	MD5  [md5.Size]byte // of its bytes, as the manifest says
	Rows int64          // objects it lists
}

// AddInventory publishes an inventory report of the store as of cfg.Time,
// without a request: its manifest.json and manifest.checksum under
// <DestinationPrefix>/<SourceBucket>/<ConfigID>/<YYYY-MM-DDTHH-MMZ>/, its
// data files under <DestinationPrefix>/<SourceBucket>/<ConfigID>/data/,
// and the Hive symlink.txt under .../<ConfigID>/hive/dt=<YYYY-MM-DD-HH-MM>/,
// as S3 Inventory lays them out. The data files are synthesised when read,
// like the slices' objects: the report holds only a copy of the slices'
// deletion bitmaps (a bit an object, for the slices with deletions) and
// the written objects' keys and attributes. AddInventory generates each
// data file once to learn its size and MD5 for the manifest (on all
// processors); a read generates it again.
//
// The report lists the objects the store holds at the call whose
// modification time is at or before cfg.Time: synthesised ones and written
// ones (earlier reports' files among them), one row each, with the source
// bucket's name, the key, the size, the modification time (to the
// millisecond) and the ETag (the MD5 in hex). A data file holds either
// written objects or the live objects of a range of the slices' positions.
//
// CSV files are gzip streams at gzip's fastest level (BestSpeed, of
// klauspost/compress): on the slices' regular keys that makes and reads
// faster than stored blocks, whose MD5 and transfer cost 45 times the
// bytes (BENCHMARKS.md). Each row is
// "bucket","key","size","last-modified","etag", every field quoted, no
// header, the key URL-encoded as a query component (url.QueryEscape: '/'
// as %2F, ' ' as '+') and the time as 2006-01-02T15:04:05.000Z. Parquet files have the
// columns bucket, key, size, last_modified_date (int64 milliseconds,
// TIMESTAMP(MILLIS, UTC)) and e_tag, Snappy-compressed.
//
// A read of a data file generates it whole and keeps it, within the budget
// of WithInventoryCache, so that the ranges of one file (a Parquet
// reader's footer and column chunks) cost one generation.
func (s *Store) AddInventory(cfg InventoryConfig) (*Inventory, error) {
	switch {
	case cfg.SourceBucket == "" || cfg.ConfigID == "":
		return nil, fmt.Errorf("%w: an inventory needs a source bucket and a configuration ID", ErrInvalid)
	case cfg.Format != InventoryCSV && cfg.Format != InventoryParquet:
		return nil, fmt.Errorf("%w: inventory format %d", ErrInvalid, cfg.Format)
	case cfg.ObjectsPerFile < 0:
		return nil, fmt.Errorf("%w: %d objects a file", ErrInvalid, cfg.ObjectsPerFile)
	}
	if cfg.ObjectsPerFile == 0 {
		cfg.ObjectsPerFile = DefaultObjectsPerFile
	}
	if cfg.DestinationBucket == "" {
		cfg.DestinationBucket = cfg.SourceBucket
	}
	if cfg.Time.IsZero() {
		cfg.Time = s.cfg.now()
	}
	at := cfg.Time.UTC().Truncate(time.Millisecond)
	rep := &report{bucket: cfg.SourceBucket, format: cfg.Format}
	files := s.snapshot(rep, cfg, at)

	base := cfg.SourceBucket + "/" + cfg.ConfigID + "/"
	if cfg.DestinationPrefix != "" {
		base = cfg.DestinationPrefix + "/" + base
	}
	ext := ".csv.gz"
	if cfg.Format == InventoryParquet {
		ext = ".parquet"
	}
	for i, f := range files {
		f.key = base + "data/" + fileUUID(base, at, i) + ext
	}
	// Generate every file once for its size and MD5.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range files {
		g.Go(func() error {
			cw := &countingHash{h: md5.New()}
			rows, err := f.generate(cw)
			if err != nil {
				return fmt.Errorf("s3sim: inventory file %s: %w", f.key, err)
			}
			f.size, f.rows = cw.n, rows
			copy(f.md5[:], cw.h.Sum(nil))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}

	inv := &Inventory{Time: at}
	m := manifest{
		SourceBucket: cfg.SourceBucket, DestinationBucket: "arn:aws:s3:::" + cfg.DestinationBucket,
		Version: inventoryVersion, CreationTimestamp: strconv.FormatInt(at.UnixMilli(), 10),
		FileFormat: "CSV", FileSchema: inventoryCSVSchema, Files: []manifestFile{},
	}
	if cfg.Format == InventoryParquet {
		m.FileFormat, m.FileSchema = "Parquet", inventoryParquetSchema
	}
	for _, f := range files {
		m.Files = append(m.Files, manifestFile{Key: f.key, Size: f.size, MD5: hex.EncodeToString(f.md5[:])})
		inv.Files = append(inv.Files, InventoryFile{Key: f.key, Size: f.size, MD5: f.md5, Rows: f.rows})
		inv.Rows += f.rows
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("s3sim: inventory manifest: %w", err)
	}
	sum := md5.Sum(body)
	dir := base + at.Format("2006-01-02T15-04Z") + "/"
	inv.ManifestKey, inv.ChecksumKey = dir+"manifest.json", dir+"manifest.checksum"
	inv.SymlinkKey = base + "hive/dt=" + at.Format("2006-01-02-15-04") + "/symlink.txt"
	var symlink bytes.Buffer
	for _, f := range files {
		symlink.WriteString("s3://" + cfg.DestinationBucket + "/" + f.key + "\n")
	}

	now := s.cfg.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range files {
		s.put(f.key, &object{gen: f, attrs: generatedAttrs(f, now)})
	}
	s.put(inv.ManifestKey, dataObject(body, "application/json", now))
	s.put(inv.ChecksumKey, dataObject([]byte(hex.EncodeToString(sum[:])+"\n"), "text/plain", now))
	s.put(inv.SymlinkKey, dataObject(symlink.Bytes(), "text/plain", now))
	return inv, nil
}

// manifest is manifest.json.
type manifest struct {
	SourceBucket      string         `json:"sourceBucket"`
	DestinationBucket string         `json:"destinationBucket"`
	Version           string         `json:"version"`
	CreationTimestamp string         `json:"creationTimestamp"`
	FileFormat        string         `json:"fileFormat"`
	FileSchema        string         `json:"fileSchema"`
	Files             []manifestFile `json:"files"`
}

type manifestFile struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	MD5  string `json:"MD5checksum"`
}

// fileUUID names data file i of a report: a version-4-shaped UUID from a
// hash of the report's place, time and i, so that the names are the same
// each run.
func fileUUID(base string, at time.Time, i int) string {
	h := md5.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d", base, at.UnixMilli(), i)
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func dataObject(data []byte, contentType string, now time.Time) *object {
	sum := md5.Sum(data)
	return &object{data: [][]byte{data}, attrs: driver.Attributes{
		ContentType: contentType, Size: int64(len(data)), CreateTime: now, ModTime: now,
		MD5: sum[:], ETag: fmt.Sprintf("\"%x\"", sum), Metadata: map[string]string{},
	}}
}

func generatedAttrs(f *invFile, now time.Time) driver.Attributes {
	ct := "application/x-gzip"
	if f.rep.format == InventoryParquet {
		ct = "application/octet-stream"
	}
	return driver.Attributes{ContentType: ct, Size: f.size, CreateTime: now, ModTime: now,
		MD5: bytes.Clone(f.md5[:]), ETag: fmt.Sprintf("\"%x\"", f.md5), Metadata: map[string]string{}}
}

// report is what a report's files share.
type report struct {
	bucket string
	format InventoryFormat
}

// invFile is a data file: written objects' rows, or ranges of slices.
type invFile struct {
	rep  *report
	key  string
	over []invRow  // written objects, in key order
	segs []segment // else ranges of slices
	size int64
	md5  [md5.Size]byte
	rows int64
}

// segment is the objects [a, b) of a slice, less those gone in its copy of
// the slice's bitmap.
type segment struct {
	sl   *slice
	gone []uint64
	a, b int
	etag string
}

func (g *segment) isGone(i int) bool { return g.gone != nil && g.gone[i>>6]&(1<<(i&63)) != 0 }

// invRow is a row of a report.
type invRow struct {
	key  string
	size int64
	mod  time.Time
	etag string
}

// snapshot divides what the store holds now, as of at, into data files.
func (s *Store) snapshot(rep *report, cfg InventoryConfig, at time.Time) []*invFile {
	s.mu.RLock()
	defer s.mu.RUnlock()
	per := cfg.ObjectsPerFile
	var files []*invFile
	var cur *invFile
	for _, k := range s.okeys {
		if !strings.HasPrefix(k, cfg.Prefix) {
			continue
		}
		o := s.overlay[k]
		if o.attrs.ModTime.After(at) {
			continue
		}
		if cur == nil || len(cur.over) == per {
			cur = &invFile{rep: rep}
			files = append(files, cur)
		}
		cur.over = append(cur.over, invRow{key: k, size: o.attrs.Size, mod: o.attrs.ModTime, etag: hex.EncodeToString(o.attrs.MD5)})
	}
	cur = nil
	room := 0
	for _, sl := range s.slices {
		if sl.ModTime.After(at) {
			continue
		}
		a, b := 0, sl.Count
		if cfg.Prefix != "" && !strings.HasPrefix(sl.Prefix, cfg.Prefix) {
			a = sl.search(cfg.Prefix, false)
			if next, ok := successor(cfg.Prefix); ok {
				b = sl.search(next, false)
			}
		}
		if a >= b {
			continue
		}
		var gone []uint64
		if sl.gone != nil {
			gone = append([]uint64(nil), sl.gone...)
		}
		etag := hex.EncodeToString(sl.md5)
		for a < b {
			if cur == nil || room == 0 {
				cur, room = &invFile{rep: rep}, per
				files = append(files, cur)
			}
			n := min(b-a, room)
			cur.segs = append(cur.segs, segment{sl: sl, gone: gone, a: a, b: a + n, etag: etag})
			a += n
			room -= n
		}
	}
	// Leave out files whose objects are all gone: S3 writes no empty file.
	kept := files[:0]
	for _, f := range files {
		if len(f.over) > 0 || f.liveRows() > 0 {
			kept = append(kept, f)
		}
	}
	return kept
}

// liveRows counts the rows of the file's segments.
func (f *invFile) liveRows() int64 {
	var n int64
	for _, g := range f.segs {
		n += int64(g.b - g.a)
		if g.gone == nil {
			continue
		}
		for i := g.a; i < g.b; {
			if i&63 == 0 && i+64 <= g.b {
				n -= int64(bits.OnesCount64(g.gone[i>>6]))
				i += 64
				continue
			}
			if g.isGone(i) {
				n--
			}
			i++
		}
	}
	return n
}

// generate writes the file to w and returns its rows.
func (f *invFile) generate(w io.Writer) (int64, error) {
	if f.rep.format == InventoryParquet {
		return f.generateParquet(w)
	}
	return f.generateCSV(w)
}

// generateCSV writes the rows as CSV in a gzip stream at gzip's fastest
// level.
func (f *invFile) generateCSV(w io.Writer) (int64, error) {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	rows, err := f.csvRows(func(p []byte) error {
		_, err := gz.Write(p)
		return err
	})
	if err != nil {
		return rows, err
	}
	return rows, gz.Close()
}

// csvRows calls emit with each row of the file as a CSV line (the line is
// reused after emit returns).
func (f *invFile) csvRows(emit func(line []byte) error) (int64, error) {
	var rows int64
	line := make([]byte, 0, 256)
	head := []byte(`"` + f.rep.bucket + `","`)
	for _, r := range f.over {
		line = append(line[:0], head...)
		line = appendQueryEscape(line, r.key)
		line = appendCSVTail(line, r.size, r.mod, r.etag)
		if err := emit(line); err != nil {
			return rows, err
		}
		rows++
	}
	for _, g := range f.segs {
		tail := appendCSVTail(nil, g.sl.Size, g.sl.ModTime, g.etag)
		head := appendQueryEscape(head[:len(head):len(head)], g.sl.Prefix)
		for i := g.a; i < g.b; i++ {
			if g.isGone(i) {
				continue
			}
			line = append(line[:0], head...)
			if g.sl.appendName != nil {
				line = g.sl.appendName(line, i)
			} else {
				line = appendQueryEscape(line, g.sl.Name(i))
			}
			line = append(line, tail...)
			if err := emit(line); err != nil {
				return rows, err
			}
			rows++
		}
	}
	return rows, nil
}

// appendCSVTail appends a row's fields after its key, from the key's
// closing quote to the newline.
func appendCSVTail(b []byte, size int64, mod time.Time, etag string) []byte {
	b = append(b, `","`...)
	b = strconv.AppendInt(b, size, 10)
	b = append(b, `","`...)
	b = mod.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","`...)
	b = append(b, etag...)
	return append(b, "\"\n"...)
}

// appendQueryEscape appends s escaped as url.QueryEscape escapes it.
func appendQueryEscape(b []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return b
}

// parquetRow is a row of a Parquet report: S3's column names, in S3's
// order; the optional columns are pointers (a row always sets them).
type parquetRow struct {
	Bucket           string  `parquet:"bucket"`
	Key              string  `parquet:"key"`
	Size             *int64  `parquet:"size,optional"`
	LastModifiedDate *int64  `parquet:"last_modified_date,optional,timestamp(millisecond:utc)"`
	ETag             *string `parquet:"e_tag,optional"`
}

// parquetRowGroup is the rows of a Parquet row group.
const parquetRowGroup = 128 << 10

var parquetSchema = parquet.NewSchema("s3.inventory", parquet.SchemaOf(parquetRow{}))

func (f *invFile) generateParquet(w io.Writer) (int64, error) {
	pw := parquet.NewGenericWriter[parquetRow](w, parquetSchema,
		parquet.Compression(&snappy.Codec{}), parquet.MaxRowsPerRowGroup(parquetRowGroup),
		parquet.CreatedBy("s3sim", "", ""))
	batch := make([]parquetRow, 0, 1024)
	var rows int64
	put := func(r parquetRow) error {
		batch = append(batch, r)
		if len(batch) < cap(batch) {
			return nil
		}
		_, err := pw.Write(batch)
		rows += int64(len(batch))
		batch = batch[:0]
		return err
	}
	for i := range f.over {
		r := &f.over[i]
		ms := r.mod.UnixMilli()
		if err := put(parquetRow{Bucket: f.rep.bucket, Key: r.key, Size: &r.size, LastModifiedDate: &ms, ETag: &r.etag}); err != nil {
			return rows, err
		}
	}
	for _, g := range f.segs {
		size, ms, etag := g.sl.Size, g.sl.ModTime.UnixMilli(), g.etag
		for i := g.a; i < g.b; i++ {
			if g.isGone(i) {
				continue
			}
			if err := put(parquetRow{Bucket: f.rep.bucket, Key: g.sl.key(i), Size: &size, LastModifiedDate: &ms, ETag: &etag}); err != nil {
				return rows, err
			}
		}
	}
	if len(batch) > 0 {
		if _, err := pw.Write(batch); err != nil {
			return rows, err
		}
		rows += int64(len(batch))
	}
	return rows, pw.Close()
}

// countingHash hashes and counts what is written to it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// genCache holds the most recently read data files whole, up to a budget
// of bytes, so that a reader that reads a file in ranges (a Parquet
// reader: the footer, then the column chunks) generates it once; readers
// of a file not yet cached wait for one generation.
type genCache struct {
	budget int64
	gens   atomic.Int64 // generations, for the tests

	mu    sync.Mutex
	bytes int64
	order []*invFile // most recently used first
	data  map[*invFile]*genEntry
}

type genEntry struct {
	ready chan struct{}
	data  []byte
	err   error
}

// DefaultInventoryCache is the default budget of WithInventoryCache.
const DefaultInventoryCache = 64 << 20

// WithInventoryCache sets how many bytes of inventory data files the store
// keeps once generated (0: DefaultInventoryCache; negative: none).
func WithInventoryCache(bytes int64) Option {
	return func(c *config) {
		if bytes != 0 {
			c.invCache = bytes
		}
	}
}

// InventoryCacheBytes is the size of the inventory data files the store
// holds generated (at most WithInventoryCache's budget, plus those being
// read).
func (s *Store) InventoryCacheBytes() int64 {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// get returns f's bytes, generated or cached.
func (c *genCache) get(f *invFile) ([]byte, error) {
	c.mu.Lock()
	if e := c.data[f]; e != nil {
		c.touch(f)
		c.mu.Unlock()
		<-e.ready
		return e.data, e.err
	}
	e := &genEntry{ready: make(chan struct{})}
	c.data[f] = e
	c.order = append([]*invFile{f}, c.order...)
	c.mu.Unlock()

	c.gens.Add(1)
	var buf bytes.Buffer
	buf.Grow(int(f.size))
	if _, err := f.generate(&buf); err != nil {
		e.err = err
	} else if int64(buf.Len()) != f.size {
		e.err = fmt.Errorf("s3sim: inventory file %s generated %d bytes, not %d", f.key, buf.Len(), f.size)
	}
	e.data = buf.Bytes()
	close(e.ready)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += int64(len(e.data))
	// Keep the most recent files within the budget (this one at least
	// while it is read: its reader holds it anyway).
	for c.bytes > c.budget && len(c.order) > 1 {
		last := c.order[len(c.order)-1]
		if le := c.data[last]; le != nil {
			select {
			case <-le.ready:
				c.bytes -= int64(len(le.data))
			default: // being generated: it is counted when done
				return e.data, e.err
			}
		}
		delete(c.data, last)
		c.order = c.order[:len(c.order)-1]
	}
	if e.err != nil || c.budget < 0 {
		c.forget(f)
	}
	return e.data, e.err
}

// touch moves f to the front; c.mu is held.
func (c *genCache) touch(f *invFile) {
	for i, g := range c.order {
		if g == f {
			copy(c.order[1:i+1], c.order[:i])
			c.order[0] = f
			return
		}
	}
}

// forget drops f; c.mu is held.
func (c *genCache) forget(f *invFile) {
	e := c.data[f]
	if e == nil {
		return
	}
	c.bytes -= int64(len(e.data))
	delete(c.data, f)
	c.order = slices.DeleteFunc(c.order, func(g *invFile) bool { return g == f })
}

// open returns a reader of n bytes of the file from offset.
func (f *invFile) open(c *genCache, offset, n int64) (io.Reader, error) {
	d, err := c.get(f)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(d[offset : offset+n]), nil
}

func newGenCache(budget int64) *genCache {
	return &genCache{budget: budget, data: map[*invFile]*genEntry{}}
}
