package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"unsafe"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/parquetio"
	"gocloud.dev/blob"
)

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

// partWriter streams rows of type T to one Parquet object of the report, as
// every reader of lakeFS's report reads it; nothing is visible under the
// object's name unless Close succeeds.
type partWriter[T any] = parquetio.Writer[T]

func newPartWriter[T any](ctx context.Context, bucket *blob.Bucket, key string) (*partWriter[T], error) {
	return parquetio.NewWriter[T](ctx, bucket, key, "sweep")
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
func removeFolder(ctx context.Context, bucket *blob.Bucket, cs classifiers, dir string) error {
	if err := blobio.RemoveAll(ctx, bucket, dir, cs.isNotFound); err != nil {
		return fmt.Errorf("sweep: remove %s: %w", dir, err)
	}
	return nil
}

// Candidates yields the addresses of a run's deleted/ folder, written by Mark
// or by lakeFS's Spark client (several part files, _SUCCESS, any extra
// columns; null addresses are skipped). Parts compressed with every codec
// parquet-go reads are read: Snappy (Spark's default), GZIP, ZSTD, LZ4_RAW,
// Brotli or none; LZ4 in Hadoop's framing (Spark's "lz4" before parquet-mr
// 1.12) and LZO are refused with ErrInvalidInput, and so are LZ4_RAW pages
// that compress less than 3:1, which parquet-go v0.32 reads wrong without an
// error.
//
// Memory is bounded whatever a part holds: before parquet-go reads it,
// package parquetguard reads its footer and address pages and uncompresses
// each page through a decoder capped at the size its header claims. A part
// that claims more than it holds, or more than pages of 16 MiB and 2^20
// values, addresses of 64 KiB or a footer of 16 MiB, is refused with
// ErrInvalidInput having cost a few MiB; reading the costliest part within
// those limits peaked at about 170 MiB of heap (tests hold it under 320
// MiB). Each part is read twice. Candidates does not look at the summary:
// see ReadSummary, or Sweep, which checks it.
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
		parts, err := listParts(ctx, bucket, reportDir(storagePrefix, runID)+layout.DeletedFolder)
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
	fail := func(err error) bool {
		if errors.Is(err, parquetio.ErrInvalid) {
			err = fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
		return yield("", fmt.Errorf("sweep: read %s: %w", key, err)) && false
	}
	attrs, err := bucket.Attributes(ctx, key)
	if err != nil {
		return fail(err)
	}
	pr, err := parquetio.OpenStrings(blobio.NewReaderAt(ctx, bucket, key, attrs.Size, partWindow), attrs.Size, "address")
	if err != nil {
		return fail(err)
	}
	defer pr.Close()
	for {
		batch, err := pr.Next()
		if err != nil {
			return fail(err)
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

// partWindow is how much of a part Candidates fetches per range read.
const partWindow = 1 << 20

// strArena makes strings of byte slices, packed in chunks rather than
// allocated one by one. A chunk is never written again once a string points
// into it, so each string stays as immutable as any other, however long its
// holder keeps it; a chunk goes when no string of it is left.
type strArena struct{ chunk []byte }

// strChunk is the size of an arena's chunk: a few hundred keys.
const strChunk = 32 << 10

func (a *strArena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, max(strChunk, len(b)))
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[start], len(b))
}
