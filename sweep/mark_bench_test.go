package sweep

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// genDriver is a bucket whose data folder is generated rather than stored:
// slices of objects data/<slice>/o<18 digits>0 (valid xids), listed in order, 1000 a page,
// all modified long before the cutoff. Deletes of generated objects are
// remembered; every other key (the report, the records) is written to a file
// of a folder of its own, outside the process's memory, and read back from
// there, so the memory a benchmark measures is Mark's own. With discardParts
// the deleted/ parts are only counted (their objects read back empty).
type genDriver struct {
	slices       []string // sorted
	index        map[string]int
	perSlice     int
	deleted      []atomic.Uint64 // a bit per generated object, so the driver's memory stays small beside Mark's
	total        int
	discardParts bool
	dir          string // the stored objects' files

	mu    sync.Mutex
	files map[string]genFile
	seq   int
}

// genFile is a stored object: its file in genDriver.dir, and its size.
type genFile struct {
	path string
	size int64
}

func newGenDriver(tb testing.TB, nSlices, perSlice int) *genDriver {
	d := &genDriver{perSlice: perSlice, index: map[string]int{}, files: map[string]genFile{}, dir: tb.TempDir()}
	for i := range nSlices {
		d.slices = append(d.slices, descendingName(t0.Add(-time.Duration(100+i)*time.Hour)))
	}
	slices.Sort(d.slices)
	for i, s := range d.slices {
		d.index[s] = i
	}
	d.total = nSlices * perSlice
	d.deleted = make([]atomic.Uint64, (d.total+63)/64)
	return d
}

func (d *genDriver) reset() {
	for i := range d.deleted {
		d.deleted[i].Store(0)
	}
	d.mu.Lock()
	for _, f := range d.files {
		os.Remove(f.path)
	}
	d.files = map[string]genFile{}
	d.mu.Unlock()
}

// appendKey appends the key of object j of slice i.
func (d *genDriver) appendKey(buf []byte, i, j int) []byte {
	buf = append(buf, "data/"...)
	buf = append(buf, d.slices[i]...)
	buf = append(buf, "/o"...)
	n := len(buf)
	buf = strconv.AppendInt(buf, int64(j), 10)
	digits := len(buf) - n
	buf = append(buf[:n], "000000000000000000"[:18-digits]...)
	buf = strconv.AppendInt(buf, int64(j), 10)
	// A trailing '0' makes the name a valid xid (its last character holds
	// four padding bits, which must be zero): a key of lakeFS's shape.
	return append(buf, '0')
}

func (d *genDriver) isDeleted(n int) bool { return d.deleted[n/64].Load()&(1<<(n%64)) != 0 }

// markDeleted marks object n deleted and reports whether it was already.
func (d *genDriver) markDeleted(n int) bool {
	bit := uint64(1) << (n % 64)
	return d.deleted[n/64].Or(bit)&bit != 0
}

func (d *genDriver) parse(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, "data/")
	if !ok || len(rest) != 20+1+20 || rest[20] != '/' || rest[21] != 'o' {
		return 0, false
	}
	i, ok := d.index[rest[:20]]
	if rest[40] != '0' {
		return 0, false
	}
	j, err := strconv.Atoi(rest[22:40])
	if !ok || err != nil || j >= d.perSlice {
		return 0, false
	}
	return i*d.perSlice + j, true
}

var errGenNotFound = fmt.Errorf("not found")

func (d *genDriver) ErrorCode(err error) gcerrors.ErrorCode {
	if err == errGenNotFound {
		return gcerrors.NotFound
	}
	return gcerrors.Unknown
}
func (d *genDriver) As(any) bool             { return false }
func (d *genDriver) ErrorAs(error, any) bool { return false }
func (d *genDriver) Close() error            { return nil }
func (d *genDriver) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return fmt.Errorf("unimplemented")
}
func (d *genDriver) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", fmt.Errorf("unimplemented")
}

var genModTime = t0.Add(-200 * time.Hour)

func (d *genDriver) Attributes(_ context.Context, key string) (*driver.Attributes, error) {
	if n, ok := d.parse(key); ok {
		if d.isDeleted(n) {
			return nil, errGenNotFound
		}
		return &driver.Attributes{ModTime: genModTime, Size: 1}, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.files[key]
	if !ok {
		return nil, errGenNotFound
	}
	return &driver.Attributes{ModTime: t0, Size: f.size}, nil
}

func (d *genDriver) ListPaged(_ context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	switch {
	case opts.Prefix == "" && opts.Delimiter == "/":
		return &driver.ListPage{Objects: []*driver.ListObject{{Key: "_lakefs/", IsDir: true}, {Key: "data/", IsDir: true}}}, nil
	case opts.Prefix == "data/" && opts.Delimiter == "/":
		page := &driver.ListPage{}
		for _, s := range d.slices {
			page.Objects = append(page.Objects, &driver.ListObject{Key: "data/" + s + "/", IsDir: true})
		}
		return page, nil
	case strings.HasPrefix(opts.Prefix, "data/") && opts.Delimiter == "":
		i, ok := d.index[strings.TrimSuffix(strings.TrimPrefix(opts.Prefix, "data/"), "/")]
		if !ok {
			return &driver.ListPage{}, nil
		}
		j := 0
		if len(opts.PageToken) > 0 {
			j, _ = strconv.Atoi(string(opts.PageToken))
		}
		page := &driver.ListPage{Objects: make([]*driver.ListObject, 0, 1000)}
		var buf []byte
		for ; j < d.perSlice && len(page.Objects) < 1000; j++ {
			if d.isDeleted(i*d.perSlice + j) {
				continue
			}
			buf = d.appendKey(buf[:0], i, j)
			page.Objects = append(page.Objects, &driver.ListObject{Key: string(buf), ModTime: genModTime, Size: 1})
		}
		if j < d.perSlice {
			page.NextPageToken = []byte(strconv.Itoa(j))
		}
		return page, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var keys []string
	for k := range d.files {
		if strings.HasPrefix(k, opts.Prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	page := &driver.ListPage{}
	for _, k := range keys {
		page.Objects = append(page.Objects, &driver.ListObject{Key: k, ModTime: t0, Size: d.files[k].size})
	}
	return page, nil
}

type genReader struct {
	*io.SectionReader
	f    *os.File
	size int64
}

func (r genReader) Close() error { return r.f.Close() }
func (r genReader) As(any) bool  { return false }
func (r genReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ModTime: t0, Size: r.size}
}

func (d *genDriver) NewRangeReader(_ context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	d.mu.Lock()
	gf, ok := d.files[key]
	var f *os.File
	var err error
	if ok {
		// Opened under the lock: a Delete or an overwrite after it
		// removes the name, not the file being read.
		f, err = os.Open(gf.path)
	}
	d.mu.Unlock()
	if !ok {
		return nil, errGenNotFound
	}
	if err != nil {
		return nil, err
	}
	end := gf.size
	if length >= 0 && offset+length < end {
		end = offset + length
	}
	start := min(offset, end)
	return genReader{io.NewSectionReader(f, start, end-start), f, gf.size}, nil
}

// genWriter writes an object to a file of its own, which replaces the key's
// previous one on Close.
type genWriter struct {
	d       *genDriver
	key     string
	f       *os.File
	bw      *bufio.Writer
	size    int64
	discard bool
}

func (w *genWriter) Write(p []byte) (int, error) {
	if w.discard {
		return len(p), nil
	}
	n, err := w.bw.Write(p)
	w.size += int64(n)
	return n, err
}

func (w *genWriter) Close() error {
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(w.f.Name())
		return err
	}
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	if old, ok := w.d.files[w.key]; ok {
		os.Remove(old.path)
	}
	w.d.files[w.key] = genFile{path: w.f.Name(), size: w.size}
	return nil
}

func (d *genDriver) NewTypedWriter(_ context.Context, key, _ string, _ *driver.WriterOptions) (driver.Writer, error) {
	d.mu.Lock()
	d.seq++
	name := filepath.Join(d.dir, fmt.Sprintf("obj-%d", d.seq))
	d.mu.Unlock()
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	return &genWriter{d: d, key: key, f: f, bw: bufio.NewWriterSize(f, 32<<10),
		discard: d.discardParts && strings.Contains(key, "/deleted/")}, nil
}

func (d *genDriver) Delete(_ context.Context, key string) error {
	if n, ok := d.parse(key); ok {
		if d.markDeleted(n) {
			return errGenNotFound
		}
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.files[key]
	if !ok {
		return errGenNotFound
	}
	delete(d.files, key)
	return os.Remove(f.path)
}

// keepSet yields the keys of every object whose number n satisfies keep(n),
// in a scattered order (a stride coprime with the total), as the addresses
// of commits come, ordered by logical path rather than by address.
func (d *genDriver) keepSet(keep func(n int) bool) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		total := d.total
		stride := 7919 // prime
		for total%stride == 0 {
			stride += 2
		}
		var buf []byte
		n := 0
		for range total {
			n = (n + stride) % total
			if !keep(n) {
				continue
			}
			buf = d.appendKey(buf[:0], n/d.perSlice, n%d.perSlice)
			if !yield(string(buf), nil) {
				return
			}
		}
	}
}

// peakHeap samples the live heap until stop is called and returns its peak.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// BenchmarkMark marks a generated namespace of data/<slice>/<id> keys with a
// keep set of three quarters of them, under a memory budget. The design
// case (20 M keys, 15 M kept, 256 MiB) runs when
// LAKEGC_BENCH_FULL=1, and again in a 64 MiB budget; the routine sizes keep
// its ratio of keys to budget.
func BenchmarkMark(b *testing.B) {
	type size struct {
		slices, perSlice int
		budget           int64
	}
	sizes := []size{{20, 10_000, 4 << 20}, {100, 10_000, 16 << 20}}
	if os.Getenv("LAKEGC_BENCH_FULL") == "1" {
		sizes = append(sizes, size{400, 50_000, 256 << 20}, size{400, 50_000, 64 << 20})
	}
	for _, sz := range sizes {
		total := sz.slices * sz.perSlice
		b.Run(fmt.Sprintf("keys=%d/budget=%dMiB", total, sz.budget>>20), func(b *testing.B) {
			d := newGenDriver(b, sz.slices, sz.perSlice)
			d.discardParts = true
			bucket := blob.NewBucket(d)
			ctx := context.Background()
			b.ReportAllocs()
			var peak uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				d.reset()
				runtime.GC()
				stop := peakHeap()
				b.StartTimer()
				sum, err := Mark(ctx, bucket, "bench", Inputs{
					Uncommitted: d.keepSet(func(n int) bool { return n%40 == 1 }),
					Committed:   d.keepSet(func(n int) bool { return n%4 != 0 && n%40 != 1 }),
					ExportStart: t0,
				}, WithClock(fixedClock), WithMemoryBudget(sz.budget), WithTempDir(b.TempDir()))
				b.StopTimer()
				peak = max(peak, stop())
				if err != nil {
					b.Fatal(err)
				}
				if sum.NumDeletedObjects != int64(total/4) {
					b.Fatalf("marked %d, want %d", sum.NumDeletedObjects, total/4)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(sz.budget)/(1<<20), "budget-MiB")
		})
	}
}

// BenchmarkStandalone is lakeFS's Standalone GC figure as an anchor: a
// repository of 100 K objects, 250 commits and 100 branches, fully marked and
// swept. Commit c references a window of 1000 objects starting at 300·c, so
// consecutive commits share most of their objects; each branch stages 100
// objects; the rest is garbage.
func BenchmarkStandalone(b *testing.B) {
	const objects, commits, branches = 100_000, 250, 100
	d := newGenDriver(b, 10, objects/10)
	bucket := blob.NewBucket(d)
	ctx := context.Background()
	committed := func(yield func(string, error) bool) {
		var buf []byte
		for c := range commits {
			for n := c * 300; n < c*300+1000; n++ {
				k := n % objects
				buf = d.appendKey(buf[:0], k/d.perSlice, k%d.perSlice)
				if !yield(string(buf), nil) {
					return
				}
			}
		}
	}
	uncommitted := func(yield func(string, error) bool) {
		var buf []byte
		for br := range branches {
			for n := range 100 {
				k := (br*997 + n*13) % objects
				buf = d.appendKey(buf[:0], k/d.perSlice, k%d.perSlice)
				if !yield(string(buf), nil) {
					return
				}
			}
		}
	}
	b.ReportAllocs()
	var deleted int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d.reset()
		b.StartTimer()
		runID := "standalone"
		_, err := Mark(ctx, bucket, runID, Inputs{Uncommitted: uncommitted, Committed: committed, ExportStart: t0},
			WithClock(fixedClock), WithTempDir(b.TempDir()))
		if err != nil {
			b.Fatal(err)
		}
		res, err := Sweep(ctx, bucket, runID)
		if err != nil {
			b.Fatal(err)
		}
		deleted = res.Deleted
	}
	b.ReportMetric(float64(deleted), "deleted")
	b.ReportMetric(float64(objects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// BenchmarkMarkSmallSlices marks a namespace of many small slices (a busy
// repository with short slice periods), where a temp file per slice would
// cost more than the keys.
func BenchmarkMarkSmallSlices(b *testing.B) {
	const nSlices, perSlice = 5000, 20
	d := newGenDriver(b, nSlices, perSlice)
	d.discardParts = true
	bucket := blob.NewBucket(d)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d.reset()
		sum, err := Mark(ctx, bucket, "bench", Inputs{
			Uncommitted: d.keepSet(func(n int) bool { return n%40 == 1 }),
			Committed:   d.keepSet(func(n int) bool { return n%4 != 0 && n%40 != 1 }),
			ExportStart: t0,
		}, WithClock(fixedClock), WithMemoryBudget(64<<20), WithTempDir(b.TempDir()))
		if err != nil {
			b.Fatal(err)
		}
		if sum.NumDeletedObjects != nSlices*perSlice/4 {
			b.Fatalf("marked %d, want %d", sum.NumDeletedObjects, nSlices*perSlice/4)
		}
	}
	b.ReportMetric(float64(nSlices*perSlice)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}
