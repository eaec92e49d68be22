package uncommitted

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/parquetguard"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
)

// ErrInvalidFile is wrapped by ReadRun's and Addresses' error for a file of
// the run that is not a Parquet file with a physical_address string column,
// whose footer disagrees with itself or with the rows stored, or one of
// whose pages does not match its CRC (see the package documentation): such
// a file is refused rather than read short or altered.
var ErrInvalidFile = errors.New("uncommitted: invalid run file")

// ErrNoRun is returned by ReadRun and Addresses for a run whose folder
// holds no file and no manifest: a mistyped run ID or storage prefix, or
// a run that never wrote anything.
var ErrNoRun = errors.New("uncommitted: no such run")

// ErrIncomplete is returned by ReadRun and Addresses for a run that has no
// manifest (it did not complete, or stock lakeFS wrote it: see
// AllowUnverified), whose manifest cannot be read, or whose files, sizes
// or row counts differ from its manifest.
var ErrIncomplete = errors.New("uncommitted: incomplete run")

// guardLimits are parquetguard's default limits, with the layout check of
// parquet-go's row reader: ReadRun reads rows with it, and Addresses falls
// back to it. Addresses' ReadPlain and Check ask for the layout too,
// so that a file is read by both or refused by both: a dictionary page not
// where the footer says refuses it however its column is stored.
var guardLimits = parquetguard.Limits{RowReaderLayout: true}

// readWindow is how much of a file ReadRun and Addresses fetch per range
// read; a variable for tests only.
var readWindow = 1 << 20

// readAhead is how many windows they fetch at once ahead of their reading
// (blobio.WithReadAhead): 8 windows of 1 MiB a request's latency (50 ms)
// is 160 MiB/s, above what one core decodes; BenchmarkReadLatency found 4
// to 16 as fast on a loaded machine, 0 twice as slow. A variable for the
// benchmarks only.
var readAhead = 8

// ReadOption configures ReadRun and Addresses.
type ReadOption func(*readConfig)

type readConfig struct {
	unverified bool
}

// AllowUnverified lets ReadRun and Addresses read a run that has no
// manifest, as stock lakeFS writes them: its files are read as they are.
// Nothing then shows that the run is complete: the host vouches that its
// Prepare loop ran until the checkpoint was nil, for otherwise a GC deletes the
// staged objects of the pages never written. A run that has a manifest is
// verified all the same, and an absent run is still ErrNoRun (a lakeFS run
// that exported no rows has no file: a host that saw every call of it
// write none need not read it).
func AllowUnverified() ReadOption {
	return func(c *readConfig) { c.unverified = true }
}

// Addresses yields the addresses of a run's rows (relative to the storage
// namespace), in ReadRun's order: the input a GC keeps, such as sweep's
// Inputs.Uncommitted. It checks the run, the files' footers and row
// counts as ReadRun does, and reads each file through one reader (see
// ReadRun for memory), but reads the pages of the physical_address column
// only, without building rows, and allocates nothing a row (a page's
// addresses share one string). Where that column is required and its
// pages PLAIN values, as Prepare and lakeFS write them, each page is read
// and uncompressed once: parquetguard checks it and hands its values over
// (parquetguard.ReadPlain), and parquet-go reads nothing but the footer.
// Any other column (optional, with a dictionary or other encodings) is
// read as ReadRun reads it, parquetguard checking every page of the file
// before parquet-go decodes them, from the address after the last one
// yielded. A file whose creation_date pages are damaged, which ReadRun
// refuses, still yields its addresses, every one of them: a row group's
// physical_address chunk must hold as many values as it has rows, and a
// file as many as its footer says.
func Addresses(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, opts ...ReadOption) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		eachFile(ctx, bucket, storagePrefix, runID, opts, func(key string, size, rows int64) bool {
			return readAddresses(ctx, bucket, key, size, rows, yield)
		}, func(err error) { yield("", err) })
	}
}

// ReadRun yields every row of every file of a complete run, file by file
// in name order: the addresses a GC must keep. It reads the files Prepare
// wrote, and with AllowUnverified those lakeFS writes; a name with a path
// element starting with '_' or '.' (markers such as _SUCCESS, the
// manifest, folders such as _temporary/) is not a file of the run.
//
// Before any row, ReadRun checks the run against its manifest: the folder
// must hold exactly the files it lists, with their sizes, or the iteration
// ends at once with an error wrapping ErrIncomplete (ErrNoRun when the
// folder holds neither files nor a manifest). Each file's footer must then
// declare the manifest's row count, and the rows read must be as many. A
// file that cannot be read whole ends the iteration with an error, possibly
// after some of its rows (wrapping ErrInvalidFile when the file is
// damaged, such as a page that does not match its CRC: see the package
// documentation): a GC must not run on a partial read. A consumer may stop
// early; every reader is closed.
//
// A file is read in range reads of 1 MiB windows, from a reader that
// fetches the next 8 windows concurrently while the windows before them
// are decoded (blobio's read-ahead): Addresses pays a store's latency
// about three times a file (its tail, and its start in each of the two
// passes below; twice for PLAIN values, read in one pass) rather than
// once a MiB; ReadRun, whose parquetguard pass reads its second column
// after its first, also once a row group. Memory
// is bounded whatever the files hold, and their size and number: besides
// the manifest (at most MaxManifestSize) and the windows (at most 9 MiB a
// reader: one reader for Addresses, three for ReadRun, whose parquet-go
// pass reads each of its two columns through a reader of its own),
// package parquetguard reads each file's footer and pages before parquet-go
// does, and uncompresses each page through a decoder capped at the size its
// header claims. A file that claims more than it holds, or more than pages
// of 16 MiB and 2^20 values, values of 64 KiB, a footer of 16 MiB, 65,536
// list elements or 64 schema elements, is refused with ErrInvalidFile
// having cost a few MiB; reading the costliest file within those limits
// peaked at about 230 MiB of heap (tests hold it under 320 MiB). Every codec
// parquet-go reads is read (GZIP, lakeFS's, Snappy, ZSTD, LZ4_RAW, Brotli,
// none), but for LZ4_RAW pages that compress less than 3:1, which
// parquet-go v0.32 reads wrong without an error: they are refused, as is
// LZ4 in Hadoop's framing. Each file is read twice: parquetguard's pass,
// then parquet-go's (by Addresses once, for PLAIN values: see there).
func ReadRun(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, opts ...ReadOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		eachFile(ctx, bucket, storagePrefix, runID, opts, func(key string, size, rows int64) bool {
			return readFile(ctx, bucket, key, size, rows, yield)
		}, func(err error) { yield(Row{}, err) })
	}
}

// eachFile checks a run and calls read for each of its files, in name
// order, with the file's key, size, and the rows its manifest lists (-1
// without a manifest), until read returns false; an error of the run goes
// to fail.
func eachFile(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, opts []ReadOption, read func(key string, size, rows int64) bool, fail func(error)) {
	var cfg readConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	if err := validRunID(runID); err != nil {
		fail(err)
		return
	}
	folder := runFolder(cleanPrefix(storagePrefix), runID)
	m, err := readManifest(ctx, bucket, folder, runID)
	if err == nil && m != nil {
		err = checkListing(ctx, bucket, folder, m)
	}
	if err != nil {
		fail(err)
		return
	}
	if m == nil {
		readUnverified(ctx, bucket, folder, runID, cfg, read, fail)
		return
	}
	for _, f := range m.Files {
		if !read(folder+f.Name, f.Size, f.Rows) {
			return
		}
	}
}

// readUnverified reads the files of a run that has no manifest.
func readUnverified(ctx context.Context, bucket *blob.Bucket, folder, runID string, cfg readConfig, read func(key string, size, rows int64) bool, fail func(error)) {
	files := 0
	stopped := errors.New("stopped")
	err := listRun(ctx, bucket, folder, func(name string, size int64) error {
		if files++; !cfg.unverified {
			return fmt.Errorf("%w %s: no manifest: the run did not complete, or stock lakeFS wrote it (see AllowUnverified)", ErrIncomplete, runID)
		}
		if !read(folder+name, size, -1) {
			return stopped
		}
		return nil
	})
	switch {
	case err == stopped:
	case err != nil:
		fail(err)
	case files == 0:
		fail(fmt.Errorf("%w %s: no file and no manifest in %s", ErrNoRun, runID, folder))
	}
}

// readFile yields the rows of one file, which must hold wantRows rows
// when wantRows >= 0; it returns false when iteration must stop (the
// consumer stopped, or an error was yielded).
func readFile(ctx context.Context, bucket *blob.Bucket, key string, size, wantRows int64, yield func(Row, error) bool) bool {
	fail := func(err error) bool {
		yield(Row{}, fmt.Errorf("uncommitted: read %s: %w", key, err))
		return false
	}
	open := func() *blobio.ReaderAt {
		return blobio.NewReaderAt(ctx, bucket, key, size, readWindow, blobio.WithReadAhead(readAhead))
	}
	ra := open()
	defer ra.Close()
	// parquet-go reads the rows' two columns in turn, a page of each: one
	// reader a column keeps each sequential.
	var columns []*blobio.ReaderAt
	defer func() {
		for _, c := range columns {
			c.Close()
		}
	}()
	r, want, err := openRows(ra, size, func() io.ReaderAt {
		columns = append(columns, open())
		return columns[len(columns)-1]
	})
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	if wantRows >= 0 && want != wantRows {
		return fail(fmt.Errorf("%w: the footer says %d rows, the manifest %d", ErrIncomplete, want, wantRows))
	}
	rows := make([]Row, 256)
	var read int64
	for {
		n, err := readRows(r, rows)
		read += int64(n)
		if err == io.EOF && read != want {
			// parquet-go's reader can stop short of a damaged file's
			// end without an error: a GC reading fewer rows deletes
			// live objects.
			return fail(fmt.Errorf("%w: %d rows, the footer says %d", ErrInvalidFile, read, want))
		}
		for _, row := range rows[:n] {
			if !yield(row, nil) {
				return false
			}
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			return fail(err)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
}

// openRows opens a Parquet file of rows with openFile, checking both
// columns, and returns a reader of its rows and their number. Unless
// column is nil, parquet-go then reads each column's chunks through a
// reader column returns, one a column.
func openRows(ra io.ReaderAt, size int64, column func() io.ReaderAt) (r *parquet.GenericReader[Row], rows int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, rows, err = nil, 0, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	f, pinned, _, err := openFile(ra, size, "physical_address", "creation_date")
	if err != nil {
		return nil, 0, err
	}
	if column != nil {
		pinned.r = byColumn(f, ra, column, "physical_address", "creation_date")
	}
	return parquet.NewGenericReader[Row](f), f.NumRows(), nil
}

// chunkBytes is where a column chunk's pages are, as parquet-go reads them.
type chunkBytes struct {
	start, end int64
	reader     io.ReaderAt
}

// columnReaderAt serves a read within a column chunk with the reader of
// its column, any other with rest.
type columnReaderAt struct {
	chunks []chunkBytes // by start
	rest   io.ReaderAt
}

// byColumn returns a reader of f's bytes that reads the chunks of each
// column named with a reader of its own, from column, and the rest with
// rest. Every reader reads the same object: which one serves a read
// changes only what each fetches ahead.
func byColumn(f *parquet.File, rest io.ReaderAt, column func() io.ReaderAt, names ...string) io.ReaderAt {
	cr := &columnReaderAt{rest: rest}
	for _, name := range names {
		leaf, ok := f.Schema().Lookup(name)
		if !ok {
			continue
		}
		reader := column()
		for _, rg := range f.Metadata().RowGroups {
			md := rg.Columns[leaf.ColumnIndex].MetaData
			start := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				start = md.DictionaryPageOffset
			}
			cr.chunks = append(cr.chunks, chunkBytes{start: start, end: start + md.TotalCompressedSize, reader: reader})
		}
	}
	slices.SortFunc(cr.chunks, func(a, b chunkBytes) int { return cmp.Compare(a.start, b.start) })
	return cr
}

func (cr *columnReaderAt) ReadAt(p []byte, off int64) (int, error) {
	i, _ := slices.BinarySearchFunc(cr.chunks, off, func(c chunkBytes, off int64) int { return cmp.Compare(c.start, off+1) })
	if i > 0 && off+int64(len(p)) <= cr.chunks[i-1].end {
		return cr.chunks[i-1].reader.ReadAt(p, off)
	}
	return cr.rest.ReadAt(p, off)
}

// openFile opens a Parquet file of rows, whose pages of the columns named
// are read, and returns the index of its physical_address column. The
// footer is read once and pinned, so that parquetguard and parquet-go see
// the same bytes; parquetguard checks the footer and every page of those
// columns first, so that what parquet-go allocates for them stays bounded
// and the pages it reads are those checked (their CRCs, a dictionary page
// where the footer says); the footer's chunks must agree with its schema
// and row counts.
// parquet-go may still panic on a corrupt file: that is reported as
// ErrInvalidFile. With no column named, no page is read: the caller checks
// the pages it reads (readAddresses).
func openFile(ra io.ReaderAt, size int64, columns ...string) (f *parquet.File, pinned *pinnedTail, col int, err error) {
	defer func() {
		if v := recover(); v != nil {
			f, pinned, col, err = nil, nil, 0, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	tail, err := readTail(ra, size)
	var rows int64
	if err == nil {
		rows, err = numRows(tail[:len(tail)-8])
	}
	if err != nil {
		if !errors.Is(err, ErrInvalidFile) {
			err = fmt.Errorf("%w: %w", ErrInvalidFile, err)
		}
		return nil, nil, 0, err
	}
	pinned = &pinnedTail{r: ra, off: size - int64(len(tail)), tail: tail}
	if len(columns) == 0 {
		f, err = parquetguard.OpenFooter(pinned, size, guardLimits)
	} else {
		f, err = parquetguard.Open(pinned, size, guardLimits, columns...)
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	if f.NumRows() != rows {
		return nil, nil, 0, fmt.Errorf("%w: parquet-go reads %d rows in the footer, not %d", ErrInvalidFile, f.NumRows(), rows)
	}
	leaf, ok := f.Schema().Lookup("physical_address")
	if !ok || leaf.Node.Type().Kind() != parquet.ByteArray || leaf.MaxRepetitionLevel > 0 {
		return nil, nil, 0, fmt.Errorf("%w: no physical_address string column", ErrInvalidFile)
	}
	if err := checkChunks(f); err != nil {
		return nil, nil, 0, err
	}
	return f, pinned, leaf.ColumnIndex, nil
}

// checkChunks checks that the footer's column chunks agree with its schema
// and row counts: parquet-go trusts them, and on a damaged footer it reads
// values of the wrong type or stops short without an error.
func checkChunks(f *parquet.File) error {
	md := f.Metadata()
	var rows int64
	for i, rg := range md.RowGroups {
		rows += rg.NumRows
		for j, chunk := range rg.Columns {
			leaf, ok := f.Schema().Lookup(chunk.MetaData.PathInSchema...)
			switch {
			case !ok || leaf.ColumnIndex != j:
				return fmt.Errorf("%w: row group %d: chunk %d is column %q", ErrInvalidFile, i, j, chunk.MetaData.PathInSchema)
			case leaf.Node.Type().Kind() != parquet.Kind(chunk.MetaData.Type):
				return fmt.Errorf("%w: row group %d: column %q: chunk of type %v", ErrInvalidFile, i, chunk.MetaData.PathInSchema, chunk.MetaData.Type)
			case leaf.MaxRepetitionLevel == 0 && chunk.MetaData.NumValues != rg.NumRows:
				return fmt.Errorf("%w: row group %d: column %q: %d values in %d rows", ErrInvalidFile, i, chunk.MetaData.PathInSchema, chunk.MetaData.NumValues, rg.NumRows)
			}
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("%w: %d rows in row groups, %d in the footer", ErrInvalidFile, rows, md.NumRows)
	}
	return nil
}

// readRows reads the next rows, reporting a panic of parquet-go on a
// corrupt page as ErrInvalidFile.
func readRows(r *parquet.GenericReader[Row], rows []Row) (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, fmt.Errorf("%w: %v", ErrInvalidFile, v)
		}
	}()
	n, err = r.Read(rows)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	return n, err
}
