package sweep

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob"
)

// The report's Parquet files use data page v1 and PLAIN strings, which every
// reader reads (parquet-go's defaults, v2 pages and DELTA_LENGTH_BYTE_ARRAY,
// are rejected by Spark's vectorised reader before Spark 3.4), and Snappy,
// Spark's default codec.

// addressRow is a row of deleted/.
type addressRow struct {
	Address string `parquet:"address,plain"`
}

// failedRow is a row of failed/.
type failedRow struct {
	Address string `parquet:"address,plain"`
	Error   string `parquet:"error,plain"`
}

// partName is the name of the one part file Mark and Sweep write in deleted/
// and failed/.
const partName = "part-00000.snappy.parquet"

// rowsPerGroup bounds the rows a Parquet writer buffers before it writes a
// row group.
const rowsPerGroup = 64 << 10

// partWriter streams rows of type T to one Parquet object; nothing is visible
// under the object's name unless close succeeds.
type partWriter[T any] struct {
	cancel context.CancelFunc
	bw     *blob.Writer
	pw     *parquet.GenericWriter[T]
	buf    []T
	key    string
	rows   int64
}

func newPartWriter[T any](ctx context.Context, bucket *blob.Bucket, key string) (*partWriter[T], error) {
	ctx, cancel := context.WithCancel(ctx)
	bw, err := bucket.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/vnd.apache.parquet"})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	pw := parquet.NewGenericWriter[T](bw,
		parquet.DataPageVersion(1),
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
		parquet.CreatedBy("lakegc/sweep", "", ""),
	)
	return &partWriter[T]{cancel: cancel, bw: bw, pw: pw, buf: make([]T, 0, 1024), key: key}, nil
}

func (w *partWriter[T]) write(row T) error {
	w.buf = append(w.buf, row)
	w.rows++
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *partWriter[T]) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.pw.Write(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	return nil
}

func (w *partWriter[T]) close() error {
	defer w.cancel()
	err := w.flush()
	if err == nil {
		err = w.pw.Close()
	}
	if err != nil {
		w.cancel() // abort the upload
		w.bw.Close()
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	if err := w.bw.Close(); err != nil {
		return fmt.Errorf("sweep: write %s: %w", w.key, err)
	}
	return nil
}

func (w *partWriter[T]) abort() {
	w.cancel()
	w.bw.Close()
}

// isPart reports whether a name found in a report folder (relative to it) is
// a data file: Spark's markers and checksums (_SUCCESS, .part-….crc,
// _temporary/) start with '_' or '.'.
func isPart(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if el == "" || el[0] == '_' || el[0] == '.' {
			return false
		}
	}
	return true
}

// listParts returns the data files under dir, sorted.
func listParts(ctx context.Context, bucket *blob.Bucket, dir string) ([]string, error) {
	var parts []string
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sweep: list %s: %w", dir, err)
		}
		if !o.IsDir && strings.HasPrefix(o.Key, dir) && isPart(o.Key[len(dir):]) {
			parts = append(parts, o.Key)
		}
	}
	slices.Sort(parts)
	return parts, nil
}

// removeFolder deletes every object under dir.
func removeFolder(ctx context.Context, bucket *blob.Bucket, dir string) error {
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil && !o.IsDir {
			err = bucket.Delete(ctx, o.Key)
			if isNotFound(err) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("sweep: remove %s: %w", dir, err)
		}
	}
}

// Candidates yields the addresses of a run's deleted/ folder, written by Mark
// or by lakeFS's Spark client (several part files, _SUCCESS, any extra
// columns; null addresses are skipped). Parts compressed with Snappy (Spark's
// default), GZIP or nothing are read; other codecs are refused with
// ErrInvalidInput, as are pages whose headers claim more than the file can
// hold, before anything is allocated for them. It does not look at the
// summary: see ReadSummary, or Sweep, which checks it.
func Candidates(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if bucket == nil {
			yield("", fmt.Errorf("%w: nil bucket", ErrInvalidInput))
			return
		}
		if err := validRunID(runID); err != nil {
			yield("", err)
			return
		}
		if err := validPrefix(storagePrefix); err != nil {
			yield("", err)
			return
		}
		parts, err := listParts(ctx, bucket, reportDir(storagePrefix, runID)+"deleted/")
		if err != nil {
			yield("", err)
			return
		}
		for _, key := range parts {
			if !yieldAddresses(ctx, bucket, key, yield) {
				return
			}
		}
	}
}

// yieldAddresses yields the address column of one Parquet object; false when
// the consumer stopped or an error was yielded.
func yieldAddresses(ctx context.Context, bucket *blob.Bucket, key string, yield func(string, error) bool) bool {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
	}
	defer r.Close()
	pr, err := openAddresses(&readerAt{r: r}, r.Size())
	if err != nil {
		return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
	}
	defer pr.close()
	for {
		batch, err := pr.nextBatch()
		if err != nil {
			return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
		}
		if batch == nil {
			return true
		}
		for _, a := range batch {
			if !yield(a, nil) {
				return false
			}
		}
	}
}

// readerAt reads a blob at offsets by seeking; parquet-go reads a file's
// footer and then its column chunks in order, so seeks are few.
type readerAt struct {
	mu sync.Mutex
	r  *blob.Reader
}

func (ra *readerAt) ReadAt(p []byte, off int64) (int, error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if _, err := ra.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(ra.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// addressReader reads the "address" column of a Parquet file page by page.
// The file is outside input: a panic of the decoder becomes an error.
type addressReader struct {
	f      *parquet.File
	col    int
	rg     int
	pages  parquet.Pages
	values []parquet.Value
}

func openAddresses(r io.ReaderAt, size int64) (ar *addressReader, err error) {
	defer recoverInto(&err)
	if err := checkFile(r, size); err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%w: parquet: %w", ErrInvalidInput, err)
	}
	leaf, ok := f.Schema().Lookup("address")
	if !ok {
		return nil, fmt.Errorf("%w: no address column", ErrInvalidInput)
	}
	if leaf.Node.Type().Kind() != parquet.ByteArray || leaf.MaxRepetitionLevel != 0 {
		return nil, fmt.Errorf("%w: address column is not a string", ErrInvalidInput)
	}
	return &addressReader{f: f, col: leaf.ColumnIndex, values: make([]parquet.Value, 1024)}, nil
}

// nextBatch returns the next addresses, nil at the end.
func (ar *addressReader) nextBatch() (batch []string, err error) {
	defer recoverInto(&err)
	for {
		if ar.pages == nil {
			groups := ar.f.RowGroups()
			if ar.rg >= len(groups) {
				return nil, nil
			}
			chunks := groups[ar.rg].ColumnChunks()
			if ar.col >= len(chunks) {
				return nil, fmt.Errorf("%w: row group %d has no column %d", ErrInvalidInput, ar.rg, ar.col)
			}
			ar.pages = chunks[ar.col].Pages()
			ar.rg++
		}
		page, err := ar.pages.ReadPage()
		if err == io.EOF {
			ar.pages.Close()
			ar.pages = nil
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: parquet page: %w", ErrInvalidInput, err)
		}
		batch = batch[:0]
		vr := page.Values()
		for read, want := int64(0), page.NumValues(); read < want; {
			n, err := vr.ReadValues(ar.values[:min(int64(len(ar.values)), want-read)])
			read += int64(n)
			for _, v := range ar.values[:n] {
				if !v.IsNull() {
					batch = append(batch, string(v.ByteArray()))
				}
			}
			if err == io.EOF {
				break
			}
			if err == nil && n == 0 {
				err = errors.New("no values read")
			}
			if err != nil {
				parquet.Release(page)
				return nil, fmt.Errorf("%w: parquet values: %w", ErrInvalidInput, err)
			}
		}
		parquet.Release(page)
		if len(batch) > 0 {
			return batch, nil
		}
	}
}

func (ar *addressReader) close() {
	if ar.pages != nil {
		ar.pages.Close()
	}
}

// Bounds on what a page header may claim. Writers make pages of about
// 1 MiB; a corrupt header must not make the decoder allocate gigabytes.
const (
	maxPageSize   = 64 << 20
	maxPageValues = 1 << 24
	maxHeaderSize = 64 << 10
	maxRatio      = 1024
	maxFooterSize = 64 << 20
)

// checkFile decodes the footer and checks the page headers of every column
// chunk with checkChunk before parquet-go opens the file (it reads pages
// as it opens).
func checkFile(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("%w: parquet file of %d bytes", ErrInvalidInput, size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("%w: parquet footer: %w", ErrInvalidInput, err)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" || n > size-12 || n > maxFooterSize {
		return fmt.Errorf("%w: parquet footer", ErrInvalidInput)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return fmt.Errorf("%w: parquet footer: %w", ErrInvalidInput, err)
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md); err != nil {
		return fmt.Errorf("%w: parquet footer: %v", ErrInvalidInput, err)
	}
	for _, rg := range md.RowGroups {
		for i := range rg.Columns {
			if err := checkChunk(r, size, &rg.Columns[i].MetaData); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkChunk walks the page headers of a column chunk and rejects one whose
// sizes do not fit in the chunk or exceed the bounds above, before parquet-go
// allocates what they claim.
func checkChunk(r io.ReaderAt, size int64, md *format.ColumnMetaData) error {
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end > size || end < start {
		return fmt.Errorf("%w: column chunk outside the file", ErrInvalidInput)
	}
	switch md.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip:
	default:
		// Other codecs' frames declare sizes this check does not read.
		return fmt.Errorf("%w: compression codec %v not supported", ErrInvalidInput, md.Codec)
	}
	window := make([]byte, min(end-start, maxHeaderSize))
	for pos := start; pos < end; {
		w := window[:min(end-pos, maxHeaderSize)]
		if n, err := r.ReadAt(w, pos); n < len(w) {
			return fmt.Errorf("%w: page header: %w", ErrInvalidInput, err)
		}
		br := bytes.NewReader(w)
		var h format.PageHeader
		if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(br)).Decode(&h); err != nil {
			return fmt.Errorf("%w: page header: %v", ErrInvalidInput, err)
		}
		var values int32
		if v, ok := h.DataPageHeader.Get(); ok {
			values = v.NumValues
		} else if v, ok := h.DataPageHeaderV2.Get(); ok {
			values = v.NumValues
		} else if v, ok := h.DictionaryPageHeader.Get(); ok {
			values = v.NumValues
		}
		// A page expands at most maxRatio times, and a value takes at
		// least a bit.
		if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPageSize ||
			int64(h.UncompressedPageSize) > maxRatio*int64(h.CompressedPageSize)+maxHeaderSize ||
			values < 0 || values > maxPageValues || int64(values) > 8*int64(h.UncompressedPageSize)+64 {
			return fmt.Errorf("%w: page header claims %d bytes, %d values", ErrInvalidInput, h.UncompressedPageSize, values)
		}
		data := pos + int64(len(w)-br.Len())
		pos = data + int64(h.CompressedPageSize)
		if pos > end {
			return fmt.Errorf("%w: page beyond its column chunk", ErrInvalidInput)
		}
		if md.Codec == format.Snappy {
			if err := checkSnappy(r, &h, data, pos); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSnappy checks the decoded length a Snappy block declares (a uvarint
// at its start), which the decoder allocates, against the page header.
func checkSnappy(r io.ReaderAt, h *format.PageHeader, data, end int64) error {
	limit := int64(h.UncompressedPageSize)
	if v2, ok := h.DataPageHeaderV2.Get(); ok {
		if compressed, set := v2.IsCompressed.Get(); set && !compressed {
			return nil
		}
		levels := int64(v2.RepetitionLevelsByteLength) + int64(v2.DefinitionLevelsByteLength)
		if levels < 0 || levels > end-data {
			return fmt.Errorf("%w: page levels beyond the page", ErrInvalidInput)
		}
		data += levels
		limit -= levels
	}
	if data >= end {
		return nil
	}
	var b [binary.MaxVarintLen64]byte
	n, err := r.ReadAt(b[:min(int64(len(b)), end-data)], data)
	decoded, k := binary.Uvarint(b[:n])
	if k <= 0 && err != nil {
		return fmt.Errorf("%w: snappy block: %w", ErrInvalidInput, err)
	}
	if k <= 0 || decoded > uint64(max(limit, 0)) {
		return fmt.Errorf("%w: snappy block larger than its page", ErrInvalidInput)
	}
	return nil
}

// recoverInto turns a panic of a decoder of outside input into an error.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: corrupt parquet: %v", ErrInvalidInput, r)
	}
}
