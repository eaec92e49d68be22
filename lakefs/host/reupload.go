package host

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// reuploads spares the candidates that may be staged re-uploads lakeFS's
// listings hide (the package documentation's "Staged re-uploads lakeFS
// hides"): a candidate whose size and checksum are those of an entry of a
// kept commit is kept.
//
// The committed entries' sizes and checksums go into a Bloom filter as the
// metaranges are read (entry, concurrently); the mark then asks check about
// its candidates, in batches, and check reads each one's attributes (and,
// when the store says no MD5, its bytes) up to concurrency at a time. A
// false positive of the filter only keeps a candidate: the filter errs
// towards keeping, never towards deleting.
type reuploads struct {
	bucket      *blob.Bucket
	concurrency int
	filter      *bloom
	// ready is set once every committed entry was seen: a check before
	// that would judge against a partial filter, and fails instead.
	ready atomic.Bool

	entries atomic.Int64 // committed entries seen
	// Of the candidates checked: kept as possible re-uploads, kept
	// because a committed entry of their size has a checksum the store
	// cannot be compared with, and read to hash them.
	checked, kept, keptBySize, hashed atomic.Int64
	busy                              atomic.Int64 // nanoseconds spent in check
}

// ReuploadStats are what the check did, for the report.
type ReuploadStats struct {
	// CommittedEntries are the entries of the kept commits whose size
	// and checksum were recorded.
	CommittedEntries int64 `json:"committed_entries"`
	// Checked are the candidates checked.
	Checked int64 `json:"checked"`
	// Kept are the candidates kept because their size and checksum are
	// those of a committed entry: possibly staged re-uploads lakeFS's
	// listings hide (a leak for byte-identical duplicates only).
	Kept int64 `json:"kept"`
	// KeptBySize, among Kept, matched a committed entry by size alone: its
	// checksum is not one the store reports (not an MD5 or S3-style ETag).
	KeptBySize int64 `json:"kept_by_size"`
	// Hashed are the candidates whose bytes were read to compute their
	// MD5, the store's attributes saying none.
	Hashed int64 `json:"hashed"`
	// Duration is the time the mark waited on the check.
	Duration time.Duration `json:"duration_ns"`
}

func newReuploads(bucket *blob.Bucket, memory int64, concurrency int) *reuploads {
	return &reuploads{bucket: bucket, concurrency: max(concurrency, 1), filter: newBloom(memory / 4)}
}

func (r *reuploads) stats() ReuploadStats {
	return ReuploadStats{CommittedEntries: r.entries.Load(), Checked: r.checked.Load(), Kept: r.kept.Load(),
		KeptBySize: r.keptBySize.Load(), Hashed: r.hashed.Load(), Duration: time.Duration(r.busy.Load())}
}

// Filter keys: a size alone, a size and a comparable checksum, and a size
// whose entry has a checksum the store cannot be compared with.
const (
	keySize byte = iota
	keySum
	keyAnySum
)

// entry records a committed entry (metarange.WithEntryStats). Safe for
// concurrent use.
func (r *reuploads) entry(size int64, checksum []byte) {
	r.entries.Add(1)
	r.filter.add(keySize, size, nil)
	if sum, ok := comparableChecksum(string(checksum)); ok {
		r.filter.add(keySum, size, []byte(sum))
	} else {
		r.filter.add(keyAnySum, size, nil)
	}
}

// comparableChecksum returns lakeFS's checksum of an object in the form the
// stores report theirs — lower-case hex MD5, or an S3 multipart ETag
// "<hex>-<parts>" — and whether it has that form. lakeFS records the
// blockstore's ETag: on the local, S3, GCS and Azure adapters the MD5 in
// hex, or the ETag of a multipart or composed object. A linked object's
// checksum is whatever its client sent.
func comparableChecksum(s string) (string, bool) {
	s = strings.ToLower(strings.Trim(strings.TrimPrefix(s, "W/"), `"`))
	hexPart, parts, multipart := strings.Cut(s, "-")
	if len(hexPart) != 2*md5.Size || !isHex(hexPart) {
		return "", false
	}
	if multipart && (parts == "" || strings.Trim(parts, "0123456789") != "") {
		return "", false
	}
	return s, true
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// check is the mark's sweep.CandidateCheck: keep[i] is set for every
// candidate whose size and checksum are those of a committed entry.
func (r *reuploads) check(ctx context.Context, keys []string, keep []bool) error {
	if !r.ready.Load() {
		return errors.New("host: re-upload check before the committed entries were all read")
	}
	start := time.Now()
	defer func() { r.busy.Add(int64(time.Since(start))) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  atomic.Int64
	)
	for range min(r.concurrency, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				k, err := r.judge(ctx, keys[i])
				if err != nil {
					once.Do(func() { first = fmt.Errorf("host: re-upload check of %s: %w", keys[i], err); cancel() })
					return
				}
				keep[i] = k
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// judge says whether the object at key may be a hidden re-upload.
func (r *reuploads) judge(ctx context.Context, key string) (bool, error) {
	r.checked.Add(1)
	attrs, err := r.bucket.Attributes(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return false, nil // gone: nothing to keep, the sweep counts it gone
	}
	if err != nil {
		return false, err
	}
	f := r.filter
	switch {
	case !f.has(keySize, attrs.Size, nil):
		return false, nil
	case f.has(keyAnySum, attrs.Size, nil):
		r.kept.Add(1)
		r.keptBySize.Add(1)
		return true, nil
	}
	var sums []string
	if len(attrs.MD5) == md5.Size {
		sums = append(sums, hex.EncodeToString(attrs.MD5))
	}
	etag, etagOK := comparableChecksum(attrs.ETag)
	if etagOK {
		sums = append(sums, etag)
	}
	if len(attrs.MD5) != md5.Size && (!etagOK || !strings.Contains(etag, "-")) {
		// The store says no MD5 (the local blockstore, an object
		// written without one): hash its bytes, as lakeFS did when it
		// wrote them. A multipart ETag is the checksum lakeFS keeps.
		sum, err := r.hash(ctx, key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		sums = append(sums, sum)
	}
	for _, s := range sums {
		if f.has(keySum, attrs.Size, []byte(s)) {
			r.kept.Add(1)
			return true, nil
		}
	}
	return false, nil
}

func (r *reuploads) hash(ctx context.Context, key string) (string, error) {
	r.hashed.Add(1)
	rd, err := r.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	h := md5.New()
	buf := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(buf)
	// Through Read, with a pooled buffer: blob.Reader's WriteTo
	// allocates a large buffer per object, most of a small object's cost.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{rd}, *buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashBufs are the read buffers of hash.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bloom is a Bloom filter of (kind, size, checksum) keys, safe for
// concurrent adds and lookups: a lookup of a key added before it returns
// true; one of a key never added returns true by chance only (about 1% at
// 1.2 bytes a key, 10% at 0.6).
type bloom struct {
	words []uint64
	mask  uint64 // bit count − 1: a power of two
	seed  maphash.Seed
}

// bloomHashes is the number of bits a key sets.
const bloomHashes = 4

// newBloom returns a filter of about n bytes (at least 64 KiB, at most 1 GiB).
func newBloom(n int64) *bloom {
	n = min(max(n, 64<<10), 1<<30)
	words := uint64(1) << (63 - bits.LeadingZeros64(uint64(n/8)))
	return &bloom{words: make([]uint64, words), mask: words*64 - 1, seed: maphash.MakeSeed()}
}

func (b *bloom) hashes(kind byte, size int64, sum []byte) (h1, h2 uint64) {
	var h maphash.Hash
	h.SetSeed(b.seed)
	var head [9]byte
	head[0] = kind
	binary.LittleEndian.PutUint64(head[1:], uint64(size))
	_, _ = h.Write(head[:])
	_, _ = h.Write(sum)
	h1 = h.Sum64()
	return h1, bits.RotateLeft64(h1, 32) | 1
}

func (b *bloom) add(kind byte, size int64, sum []byte) {
	h1, h2 := b.hashes(kind, size, sum)
	for i := range uint64(bloomHashes) {
		bit := (h1 + i*h2) & b.mask
		atomic.OrUint64(&b.words[bit/64], 1<<(bit%64))
	}
}

func (b *bloom) has(kind byte, size int64, sum []byte) bool {
	h1, h2 := b.hashes(kind, size, sum)
	for i := range uint64(bloomHashes) {
		bit := (h1 + i*h2) & b.mask
		if atomic.LoadUint64(&b.words[bit/64])&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}
