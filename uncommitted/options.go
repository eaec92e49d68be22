package uncommitted

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakegc/lakegc/internal/layout"
)

const (
	// DefaultMaxFileSize is the size budget of one file: 20 MiB, as lakeFS.
	DefaultMaxFileSize = 20 << 20
	// DefaultPrepareDuration is the time budget of one Prepare call, as lakeFS.
	DefaultPrepareDuration = time.Minute
	// DefaultStoragePrefix is where lakeFS keeps its own data in a namespace.
	DefaultStoragePrefix = layout.StoragePrefix // "_lakefs"
)

// Option configures a Preparer. A zero value means the option's default; an
// invalid value (a negative size or duration) makes NewPreparer fail with
// an error wrapping ErrInvalidInput.
type Option func(*Preparer)

// ErrInvalidInput is wrapped by the error of NewPreparer for a nil bucket
// or an invalid option, and of Prepare for a nil Source or a Repository
// without a storage namespace.
var ErrInvalidInput = errors.New("uncommitted: invalid input")

// invalid records the first invalid option.
func (p *Preparer) invalid(format string, args ...any) {
	if p.optErr == nil {
		p.optErr = fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
}

// WithMaxFileSize sets the size budget of one file, in bytes (0: the
// default DefaultMaxFileSize; negative: invalid). A call stops before the
// entry that would start past the budget; see Preparer for how far a file
// may exceed it.
func WithMaxFileSize(n int64) Option {
	return func(p *Preparer) {
		switch {
		case n < 0:
			p.invalid("negative max file size %d", n)
		case n == 0:
			p.maxFileSize = DefaultMaxFileSize
		default:
			p.maxFileSize = n
		}
	}
}

// WithPrepareDuration sets the time budget of one Prepare call (0: the
// default DefaultPrepareDuration; negative: invalid), measured with the
// clock of WithClock between entries and between branches. For no time
// budget use WithoutTimeBudget.
func WithPrepareDuration(d time.Duration) Option {
	return func(p *Preparer) {
		switch {
		case d < 0:
			p.invalid("negative prepare duration %v", d)
		case d == 0:
			p.prepareDuration = DefaultPrepareDuration
		default:
			p.prepareDuration = d
		}
	}
}

// WithoutTimeBudget lets one Prepare call run until its size budget or the
// end of the run, however long it takes.
func WithoutTimeBudget() Option {
	return func(p *Preparer) { p.prepareDuration = 0 }
}

// WithStoragePrefix sets the folder of the namespace that holds lakeFS's
// own data ("": the default DefaultStoragePrefix). Leading and trailing
// '/' are ignored.
func WithStoragePrefix(prefix string) Option {
	return func(p *Preparer) { p.storagePrefix = cleanPrefix(prefix) }
}

// WithDataPrefix sets the data folder of the namespace ("": lakeFS's
// "data"; leading and trailing '/' are ignored): the tail kept, and probed,
// of a full address outside the namespace is a key shape under it (see
// ErrNamespaceMismatch). A host whose pathprovider writes under another
// folder gives that folder, as it gives Collect's Config.DataPrefix.
func WithDataPrefix(prefix string) Option {
	return func(p *Preparer) { p.dataPrefix = cleanPrefix(prefix) }
}

// WithClock sets the clock used for run IDs, the time budget and the
// trailer's creation_date (nil: the default time.Now).
func WithClock(now func() time.Time) Option {
	return func(p *Preparer) {
		if now == nil {
			now = time.Now
		}
		p.now = now
	}
}

// WithRunID sets how the first call of a run names it (default: a
// descending xid of the clock's now, so newer runs sort first). The ID must
// be a run ID as lakeFS's are: 1 to 128 letters, digits, '-', '_', '.' and
// '=', not "." or ".." (else Prepare fails with ErrInvalidToken).
func WithRunID(newID func() string) Option {
	return func(p *Preparer) { p.newRunID = newID }
}

// WithCompression sets parquet-go's compression codec (nil: the default,
// GZIP at DefaultGzipLevel, lakeFS's codec, which every Parquet reader
// reads). Zstd returns a codec that costs less CPU to write and to read
// back and writes smaller files, but that Spark before 3.2 reads only with
// Hadoop's native zstd library (see Zstd and the package doc); lakegc.Collect
// writes it. ReadRun and Addresses read both, and every other codec a
// writer may choose; Snappy took less CPU still but wrote files nearly
// twice GZIP's size (BENCHMARKS.md). LZ4_RAW is invalid: parquet-go v0.32
// reads back its pages that compress less than 3:1 as empty values without
// an error (parquet-go/parquet-go#608), so ReadRun refuses them, and a run
// written with it could not be read.
func WithCompression(c compress.Codec) Option {
	return func(p *Preparer) {
		if c == nil {
			return
		}
		if c.CompressionCodec() == format.Lz4Raw {
			p.invalid("compression %s: parquet-go reads its pages back wrong", c)
			return
		}
		p.codec = c
	}
}

// DefaultGzipLevel is the default codec's level, GZIP's BestSpeed, as the
// files of lakeFS's own export. On generated addresses (data/<xid>/<xid>,
// BenchmarkPrepare) a whole export takes about a quarter less CPU than at
// GZIP's default level, for files about 3% larger; every level is read by
// every GZIP reader.
const DefaultGzipLevel = gzip.BestSpeed

// WithLogger reports the progress of each call (start, branches skipped,
// end) to l. The default logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(p *Preparer) { p.logger = l }
}

// WithTrailer sets addresses to export after every branch was scanned, in
// the call that completes a run: for example the physical addresses of
// recent shallow copies (copytrack's Addresses), which must be read after
// the branches so that a rename racing the scan is seen on one side. An
// address that starts with a URI scheme is full, any other is relative;
// the namespace rules of Entry apply. The trailer is never split between
// files.
func WithTrailer(extra func(ctx context.Context) iter.Seq2[string, error]) Option {
	return func(p *Preparer) { p.trailer = extra }
}
