package quarantine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// Errors of the package; every error wraps at most one of them (an invalid
// option is sweep's: it wraps sweep.ErrInvalidInput).
var (
	// ErrInvalidInput: a bad argument, run ID, record or manifest.
	ErrInvalidInput = errors.New("quarantine: invalid input")
	// ErrNoQuarantine: the run has no quarantine to restore.
	ErrNoQuarantine = errors.New("quarantine: no such quarantine")
)

// Mover is the sweep.Mover that moves each candidate into the run's
// quarantine (see the package documentation): give Sweep
// sweep.WithMover(quarantine.Mover{}).
type Mover struct{}

// quarantineRecord is a quarantine's QuarantineFile.
type quarantineRecord struct {
	RunID   string `json:"run_id"`
	Created string `json:"created"` // RFC 3339, when the first sweep into it started
}

// manifestPart is one part of a quarantine's manifest.
type manifestPart = layout.QuarantinePart

// parseQuarantineRecord reads a quarantine's record, which must name runID,
// and returns when the quarantine was started.
func parseQuarantineRecord(b []byte, runID string) (time.Time, error) {
	var rec quarantineRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return time.Time{}, fmt.Errorf("%w: quarantine record: %v", ErrInvalidInput, err)
	}
	if rec.RunID != runID {
		return time.Time{}, fmt.Errorf("%w: quarantine record of run %q in the folder of %q", ErrInvalidInput, rec.RunID, runID)
	}
	t, err := layout.ParseTime(rec.Created)
	if err != nil || t.IsZero() {
		return time.Time{}, fmt.Errorf("%w: quarantine record: created %q", ErrInvalidInput, rec.Created)
	}
	return t, nil
}

// maxRecordSize bounds what is read of a quarantine's record.
const maxRecordSize = 64 << 10

// quarantiner moves a sweep's batches into the quarantine.
type quarantiner struct {
	st     *sweep.Store
	dir    string // the run's quarantine folder
	runID  string
	prefix string // names this sweep's manifest parts apart from an earlier one's
	seq    atomic.Int64
}

// StartMove writes the run's quarantine record unless it has one, and
// returns the quarantine's folder and the move of a batch into it.
func (Mover) StartMove(ctx context.Context, st *sweep.Store, runID string) (string, sweep.MoveFunc, error) {
	q := &quarantiner{st: st, runID: runID, dir: layout.QuarantinePath(st.StoragePrefix(), runID)}
	now := st.Now().UTC()
	q.prefix = strconv.FormatInt(now.UnixNano(), 10)
	key := q.dir + layout.QuarantineFile
	ok, err := exists(ctx, st, key)
	if err != nil {
		return "", nil, fmt.Errorf("quarantine: %s: %w", key, err)
	}
	if !ok {
		if err := writeJSON(ctx, st.Bucket(), key, quarantineRecord{RunID: runID, Created: layout.FormatTime(now)}); err != nil {
			return "", nil, err
		}
	}
	return q.dir, q.move, nil
}

// move copies keys into the quarantine, writes the manifest part of the
// ones it copied, and returns the others with their errors: gone already
// (NotFound), or failed.
func (q *quarantiner) move(ctx context.Context, keys []string) (map[string]error, error) {
	var moved []string
	var failed map[string]error
	for _, k := range keys {
		err := q.copy(ctx, k)
		if err == nil {
			err = q.verify(ctx, k)
		}
		switch {
		case err == nil:
			moved = append(moved, k)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			if failed == nil {
				failed = make(map[string]error)
			}
			failed[k] = fmt.Errorf("quarantine copy: %w", err)
		}
	}
	if len(moved) > 0 {
		// Named by the sweep's start: Purge counts a quarantine's age
		// from its last sweep that moved something.
		part := fmt.Sprintf("%s%s%s-%06d.json", q.dir, layout.QuarantineManifest, q.prefix, q.seq.Add(1))
		if err := writeJSON(ctx, q.st.Bucket(), part, manifestPart{Addresses: moved}); err != nil {
			return nil, err
		}
	}
	return failed, nil
}

// copy copies key into the quarantine, retrying transient errors.
func (q *quarantiner) copy(ctx context.Context, key string) error {
	dst := layout.QuarantineKey(q.st.StoragePrefix(), q.runID, key)
	return q.st.Retry(ctx, func() error { return q.st.Bucket().Copy(ctx, dst, key, nil) })
}

// copyDiffers is a quarantine copy whose size or MD5 is not the
// original's, or that is gone: a refusal (FailedPrecondition), never
// retried, never read as the original gone.
type copyDiffers struct{ detail string }

func (e *copyDiffers) Error() string                 { return "the copy differs from the original: " + e.detail }
func (e *copyDiffers) ErrorCode() gcerrors.ErrorCode { return gcerrors.FailedPrecondition }

// verify checks that key's quarantine copy has the original's size, and its
// MD5 when the store gives both, before the original is deleted: a store
// that reported a copy done but kept other bytes (or a writer that changed
// either object meanwhile) leaves the original at its place. An error here
// keeps the original; a not-found one means the original is gone.
func (q *quarantiner) verify(ctx context.Context, key string) error {
	dst := layout.QuarantineKey(q.st.StoragePrefix(), q.runID, key)
	var sa, da *blob.Attributes
	err := q.st.Retry(ctx, func() (err error) {
		if sa, err = q.st.Bucket().Attributes(ctx, key); err != nil {
			return err
		}
		if da, err = q.st.Bucket().Attributes(ctx, dst); q.st.IsNotFound(err) {
			// The copy vanished: keep the original.
			return &copyDiffers{fmt.Sprintf("the copy %s is gone", dst)}
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case sa.Size != da.Size:
		return &copyDiffers{fmt.Sprintf("%d bytes, the copy %d", sa.Size, da.Size)}
	case len(sa.MD5) > 0 && len(da.MD5) > 0 && !bytes.Equal(sa.MD5, da.MD5):
		return &copyDiffers{fmt.Sprintf("MD5 %x, the copy's %x", sa.MD5, da.MD5)}
	}
	return nil
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	// Restored counts the objects copied back to their place and removed
	// from the quarantine.
	Restored int64
	// AlreadyThere counts the objects found at their place with the
	// quarantine copy's content (a restore stopped between its copy and
	// its delete, or a sweep between its copy and the original's delete):
	// their quarantine copy is removed.
	AlreadyThere int64
	// Refused lists, with the reason, the objects left in the quarantine:
	// another object, of other content, is at their place, or their copy
	// back failed; or, back at their place, whose quarantine copy could not
	// be removed (not counted in Restored).
	Refused []RestoreRefusal
	// Missing lists the addresses asked for that the quarantine does not
	// hold.
	Missing []string
}

// RestoreRefusal is an object Restore left in the quarantine, and why.
type RestoreRefusal struct {
	Address string `json:"address"`
	Reason  string `json:"reason"`
}

// maxRefusals bounds the refusals a RestoreResult lists; the others are
// only counted in the error.
const maxRefusals = 1000

// Restore puts the objects of run runID's quarantine (see Mover)
// back at their addresses: all of them, or only addresses (keys relative to
// the bucket's root) when given. Each is copied back, then its quarantine
// copy deleted; an object already at its place is never overwritten: when
// it has the quarantine copy's content (size and MD5, or else its bytes)
// the quarantine copy is deleted, else the object stays in the quarantine
// and is listed in Refused. The copy back is a conditional write
// (IfNotExist) through the client, not a server-side copy: a writer that
// puts an object at the place after Restore looked is not overwritten on a
// store that honours the condition (S3, GCS, Azure; on a local folder the
// check comes just before the rename, and a writer in between is
// overwritten; lakeFS never writes twice to one address, so only a person
// could). Running it twice, or after it stopped, is safe. A run without a
// quarantine record is ErrNoQuarantine; a look-up the store refuses (GCS's
// 403, which gcsblob calls NotFound) is an error, never an absent object.
//
// Options (sweep's) used: WithStoragePrefix, WithBackoff,
// WithErrorClassifier (then WithBatchDeleter's deleter's own), WithLogger.
func Restore(ctx context.Context, bucket *blob.Bucket, runID string, addresses []string, opts ...sweep.SweepOption) (*RestoreResult, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	if !layout.ValidRunID(runID) {
		return nil, fmt.Errorf("%w: run ID %q", ErrInvalidInput, runID)
	}
	st, err := sweep.NewStore(bucket, opts...)
	if err != nil {
		return nil, err
	}
	dir := layout.QuarantinePath(st.StoragePrefix(), runID)
	if ok, err := exists(ctx, st, dir+layout.QuarantineFile); err != nil {
		return nil, fmt.Errorf("quarantine: restore %s: %w", runID, err)
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoQuarantine, dir)
	}
	res := &RestoreResult{}
	one := func(addr string) error {
		why, err := restoreOne(ctx, st, runID, addr, res)
		if err != nil {
			return err
		}
		if why != "" {
			if len(res.Refused) < maxRefusals {
				res.Refused = append(res.Refused, RestoreRefusal{Address: addr, Reason: why})
			}
			if l := st.Logger(); l != nil {
				l.Warn("quarantine: restore refused", "address", addr, "reason", why)
			}
		}
		return nil
	}
	if len(addresses) > 0 {
		for _, a := range addresses {
			qkey := layout.QuarantineKey(st.StoragePrefix(), runID, a)
			ok, err := exists(ctx, st, qkey)
			if err != nil {
				return res, fmt.Errorf("quarantine: restore %s: %w", a, err)
			}
			if !ok {
				res.Missing = append(res.Missing, a)
				continue
			}
			if err := one(a); err != nil {
				return res, err
			}
		}
		return res, nil
	}
	it := bucket.List(&blob.ListOptions{Prefix: dir + layout.QuarantineObjects})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("quarantine: restore %s: list: %w", runID, err)
		}
		addr, ok := layout.QuarantineAddress(st.StoragePrefix(), runID, o.Key)
		if o.IsDir || !ok {
			continue
		}
		if err := one(addr); err != nil {
			return res, err
		}
	}
}

// restoreOne restores one object and counts it; why says why it was left in
// the quarantine, err stops the restore.
func restoreOne(ctx context.Context, st *sweep.Store, runID, addr string, res *RestoreResult) (why string, err error) {
	bucket := st.Bucket()
	qkey := layout.QuarantineKey(st.StoragePrefix(), runID, addr)
	retry := func(op func() error) error { return st.Retry(ctx, op) }
	var there bool
	if err := retry(func() (err error) { there, err = exists(ctx, st, addr); return err }); err != nil {
		return "", fmt.Errorf("quarantine: restore %s: %w", addr, err)
	}
	if there {
		same, err := sameContent(ctx, bucket, addr, qkey)
		if err != nil {
			return "", fmt.Errorf("quarantine: restore %s: %w", addr, err)
		}
		if !same {
			return "another object is at its place", nil
		}
	} else if err := retry(func() error { return copyBack(ctx, bucket, addr, qkey) }); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return "another object was put at its place during the restore", nil
		}
		return "copy back: " + err.Error(), nil
	}
	if err := retry(func() error { return bucket.Delete(ctx, qkey) }); err != nil && !st.IsNotFound(err) {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// The object is at its place; only its copy is left behind.
		return "at its place, but its quarantine copy could not be removed: " + err.Error(), nil
	}
	if there {
		res.AlreadyThere++
	} else {
		res.Restored++
	}
	return "", nil
}

// copyBack copies the quarantine copy qkey to addr, a conditional write
// (IfNotExist) that the store refuses, with gcerrors.FailedPrecondition, when
// an object is at addr: a writer that puts one there after Restore looked
// is not overwritten on stores that honour the condition (S3, GCS, Azure,
// memblob; on a local folder it is a check just before the rename). The
// bytes go through the client, with the copy's attributes and its MD5 for
// the store to check.
func copyBack(ctx context.Context, bucket *blob.Bucket, addr, qkey string) error {
	a, err := bucket.Attributes(ctx, qkey)
	if err != nil {
		return err
	}
	r, err := bucket.NewReader(ctx, qkey, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // an unfinished write is aborted, never committed
	w, err := bucket.NewWriter(wctx, addr, &blob.WriterOptions{
		IfNotExist:         true,
		ContentType:        a.ContentType,
		CacheControl:       a.CacheControl,
		ContentDisposition: a.ContentDisposition,
		ContentEncoding:    a.ContentEncoding,
		ContentLanguage:    a.ContentLanguage,
		ContentMD5:         a.MD5,
		Metadata:           a.Metadata,
	})
	if err != nil {
		return err
	}
	n, err := io.Copy(w, r)
	if err == nil && n != a.Size {
		err = fmt.Errorf("quarantine: restore %s: read %d bytes of %d", qkey, n, a.Size)
	}
	if err != nil {
		cancel()
		_ = w.Close()
		return err
	}
	return w.Close()
}

// sameContent reports whether the objects a and b hold the same bytes: by
// size and MD5 when the store gives both, else by reading them.
func sameContent(ctx context.Context, bucket *blob.Bucket, a, b string) (bool, error) {
	aa, err := bucket.Attributes(ctx, a)
	if err != nil {
		return false, err
	}
	ba, err := bucket.Attributes(ctx, b)
	if err != nil {
		return false, err
	}
	if aa.Size != ba.Size {
		return false, nil
	}
	if len(aa.MD5) > 0 && len(ba.MD5) > 0 {
		return bytes.Equal(aa.MD5, ba.MD5), nil
	}
	ra, err := bucket.NewReader(ctx, a, nil)
	if err != nil {
		return false, err
	}
	defer ra.Close()
	rb, err := bucket.NewReader(ctx, b, nil)
	if err != nil {
		return false, err
	}
	defer rb.Close()
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		endB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case errA != nil && !endA:
			return false, errA
		case errB != nil && !endB:
			return false, errB
		case endA || endB:
			return endA && endB, nil
		}
	}
}

// PurgedRun is a quarantine Purge deleted.
type PurgedRun struct {
	RunID   string    `json:"run_id"`
	Created time.Time `json:"created"`
	Objects int64     `json:"objects"` // quarantined objects deleted
	Bytes   int64     `json:"bytes"`   // their bytes
}

// PurgeResult is what Purge did.
type PurgeResult struct {
	Purged []PurgedRun
	// Kept lists the quarantines kept: younger than the age, or without a
	// readable record (whose age is unknown: kept).
	Kept []string
}

// Purge deletes every quarantine (see Mover) started, and last
// swept into (a rerun that moved objects), more than olderThan before now
// (WithClock), its objects first, through the
// BatchDeleter (WithBatchDeleter), then its manifest, then its record: a
// purge stopped midway leaves the record, and a rerun finishes it. A
// quarantine without a readable record is kept.
//
// Options (sweep's) used: WithStoragePrefix, WithClock, WithBatchDeleter,
// WithErrorClassifier (then the deleter's own, as Sweep's), WithLogger.
func Purge(ctx context.Context, bucket *blob.Bucket, olderThan time.Duration, opts ...sweep.SweepOption) (*PurgeResult, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	if olderThan < 0 {
		return nil, fmt.Errorf("%w: negative age %v", ErrInvalidInput, olderThan)
	}
	st, err := sweep.NewStore(bucket, opts...)
	if err != nil {
		return nil, err
	}
	logger := st.Logger()
	cutoff := st.Now().Add(-olderThan)
	res := &PurgeResult{}
	root := layout.Quarantines(st.StoragePrefix())
	var runs []string
	it := bucket.List(&blob.ListOptions{Prefix: root, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("quarantine: purge: list %s: %w", root, err)
		}
		if o.IsDir {
			runs = append(runs, o.Key)
		}
	}
	for _, dir := range runs {
		runID := dir[len(root) : len(dir)-1]
		b, err := readSmall(ctx, bucket, dir+layout.QuarantineFile, maxRecordSize)
		var created time.Time
		if err == nil {
			created, err = parseQuarantineRecord(b, runID)
		}
		if err != nil {
			if logger != nil {
				logger.Warn("quarantine: purge: kept, its record is unreadable", "run_id", runID, "error", err)
			}
			res.Kept = append(res.Kept, runID)
			continue
		}
		last := created
		if created.Before(cutoff) {
			if last, err = lastMove(ctx, bucket, dir+layout.QuarantineManifest, created); err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if logger != nil {
					logger.Warn("quarantine: purge: kept, its manifest is unreadable", "run_id", runID, "error", err)
				}
				res.Kept = append(res.Kept, runID)
				continue
			}
		}
		if !last.Before(cutoff) {
			res.Kept = append(res.Kept, runID)
			continue
		}
		pr := PurgedRun{RunID: runID, Created: created}
		if err := purgeFolder(ctx, st, dir+layout.QuarantineObjects, &pr); err != nil {
			return res, err
		}
		var ignored PurgedRun
		if err := purgeFolder(ctx, st, dir+layout.QuarantineManifest, &ignored); err != nil {
			return res, err
		}
		if err := removeObject(ctx, st, dir+layout.QuarantineFile); err != nil {
			return res, err
		}
		res.Purged = append(res.Purged, pr)
		if logger != nil {
			logger.Info("quarantine: purged", "run_id", runID, "objects", pr.Objects, "bytes", pr.Bytes)
		}
	}
	return res, nil
}

// lastMove returns when the last sweep that moved objects into a quarantine
// started (from its manifest parts' names; since, at least): a rerun that
// moved objects long after the quarantine was started gives them their own
// days. A part whose name is not a sweep's is an error (the quarantine is
// kept).
func lastMove(ctx context.Context, bucket *blob.Bucket, dir string, since time.Time) (time.Time, error) {
	last := since
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return last, nil
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("quarantine: purge: list %s: %w", dir, err)
		}
		name := o.Key[len(dir):]
		start, _, ok := strings.Cut(name, "-")
		ns, err := strconv.ParseInt(start, 10, 64)
		if !ok || err != nil || o.IsDir {
			return time.Time{}, fmt.Errorf("%w: manifest part %s", ErrInvalidInput, o.Key)
		}
		if t := time.Unix(0, ns); t.After(last) {
			last = t
		}
	}
}

// purgeFolder deletes every object under dir through deleter, counting them
// in pr.
func purgeFolder(ctx context.Context, st *sweep.Store, dir string, pr *PurgedRun) error {
	batch := st.BatchSize()
	keys := make([]string, 0, batch)
	var sizes int64
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		failed, err := st.DeleteBatch(ctx, keys)
		if err != nil {
			return fmt.Errorf("quarantine: purge %s: %w", dir, err)
		}
		for _, k := range slices.Sorted(maps.Keys(failed)) {
			if kerr := failed[k]; kerr != nil && !st.IsNotFound(kerr) {
				return fmt.Errorf("quarantine: purge %s: %w", k, kerr)
			}
		}
		pr.Objects += int64(len(keys))
		pr.Bytes += sizes
		keys, sizes = keys[:0], 0
		return nil
	}
	it := st.Bucket().List(&blob.ListOptions{Prefix: dir})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if err != nil {
			return fmt.Errorf("quarantine: purge: list %s: %w", dir, err)
		}
		if o.IsDir {
			continue
		}
		keys = append(keys, o.Key)
		sizes += o.Size
		if len(keys) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// exists reports whether key is in st's bucket, reading a failed look-up
// as st does: GCS's 403, which gcsblob calls NotFound (and bucket.Exists
// false), is a refusal, an error, never an absent object.
func exists(ctx context.Context, st *sweep.Store, key string) (bool, error) {
	_, err := st.Bucket().Attributes(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case st.IsNotFound(err):
		return false, nil
	}
	return false, err
}

// removeObject deletes key if it exists; a look-up or a delete that fails
// as not found (as st reads it: GCS's 403 is a refusal) is done.
func removeObject(ctx context.Context, st *sweep.Store, key string) error {
	if err := blobio.Remove(ctx, st.Bucket(), key, st.IsNotFound); err != nil {
		return fmt.Errorf("quarantine: remove %s: %w", key, err)
	}
	return nil
}

// readSmall reads a small object whole, refusing one over limit bytes.
func readSmall(ctx context.Context, bucket *blob.Bucket, key string, limit int64) ([]byte, error) {
	b, err := blobio.ReadAll(ctx, bucket, key, limit)
	switch {
	case errors.Is(err, blobio.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s larger than %d bytes", ErrInvalidInput, key, limit)
	case err != nil:
		return nil, fmt.Errorf("quarantine: read %s: %w", key, err)
	}
	return b, nil
}

// writeJSON writes v as one line of JSON at key.
func writeJSON(ctx context.Context, bucket *blob.Bucket, key string, v any) error {
	if err := blobio.WriteJSON(ctx, bucket, key, v); err != nil {
		return fmt.Errorf("quarantine: write %s: %w", key, err)
	}
	return nil
}
