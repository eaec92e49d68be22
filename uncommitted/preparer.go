package uncommitted

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/internal/nsaddr"
)

// Repository names the repository being exported.
type Repository struct {
	// ID is used in log messages only.
	ID string
	// StorageNamespace is the URI the bucket is rooted at, such as
	// "s3://bucket/repo1"; full addresses are exported relative to it.
	// It is required.
	StorageNamespace string
}

// Result is what one Prepare call did.
type Result struct {
	// RunID names the run; it is the same for every call of a run.
	RunID string
	// Location is the folder of the run's files (see Location). Every call
	// sets it, also one that wrote no file: lakeFS's Spark client reads
	// the run at the location of the last call only.
	Location string
	// Filename is the name, inside Location, of the file this call wrote,
	// or "" when it wrote none.
	Filename string
	// Checkpoint is where the next call resumes; nil when the run is complete.
	Checkpoint *Checkpoint
	// Rows is the number of rows in the file, 0 when there is none.
	Rows int64
	// Foreign counts the full addresses this call found outside the
	// namespace, such as imports: their objects are not in its listing.
	// The tail of one, when it ends with a key shape lakeFS writes, is
	// exported too (see the package documentation).
	Foreign int64
}

// ErrOutOfOrder is returned when a Source yields branches or entries out of
// ascending order: resuming from a checkpoint would then skip entries.
var ErrOutOfOrder = errors.New("uncommitted: source out of order")

// Preparer exports the staging area of a repository into Parquet files, in
// calls bounded in size and time: lakeFS's prepare-uncommitted. A host calls
// Prepare with a nil checkpoint, then again with each Result.Checkpoint until
// it is nil; the union of the files written is exactly the set of staged,
// non-tombstone entries whose data lives in the namespace, plus the trailer.
//
// Each call writes at most one file,
// <prefix>/retention/gc/uncommitted/<run_id>/uncommitted/<name>, streamed
// into the bucket: memory is bounded by one row group (at most 4 MiB
// encoded) plus parquet-go's page buffers, whatever the number of rows
// (plus what the bucket's driver buffers: memblob keeps whole objects in
// memory, s3blob a few upload parts). A call that fails or whose ctx is
// cancelled leaves no new object behind. The name is 32 hex digits derived
// from the run and the checkpoint the call started from: a call retried from
// the same checkpoint (after an upload whose outcome was unknown) replaces the
// file of the first attempt instead of adding a second copy of its rows,
// and a retry that finds nothing left to write removes it. (A first call
// retried starts another run, unless WithRunID names it: the abandoned
// run has no manifest, and no GC reads it.)
//
// # Completion manifest
//
// The call that completes a run (its Result.Checkpoint is nil) lists the run's
// folder, reads the row count of each file's footer (one range read of
// 8 KiB a file), and writes the manifest ManifestName into the folder:
// the run ID, each file's name, rows and size, and the total. Every call
// first removes a manifest left in the folder, so that a folder changed
// after its run completed never verifies. ReadRun and Addresses check a
// run against its manifest, so that a GC never takes an unfinished run, or
// a mistyped one, for an empty export.
//
// # Budgets
//
// A call stops before an entry when the file's size (bytes written, plus
// the encoded pages and the raw size of values still buffered) has reached
// the size budget, or when the time budget has passed (the clock is read
// between branches and every 16 entries), whether or not it wrote a row:
// a staging area of tombstones is scanned in as many calls as its time
// takes. A call always makes progress: it stops only once it consumed an
// entry or a branch, so the checkpoint it returns is past the one it started
// from. A file exceeds the size budget by at most one row plus Parquet's
// page headers and footer (about 100 bytes a row group and 1 KiB of fixed
// metadata; a row group is an eighth of the budget, 64 KiB to 4 MiB):
// TestPrepareFileSizeBound checks 4 KiB plus a row. The call that
// completes the run also holds the trailer, which is never split: that
// file exceeds the budget by the trailer's size, bounded by what the host
// keeps there (for copytrack, by its TTL). Small budgets give files
// somewhat under the budget, as buffered values count at their raw size.
// The manifest's footer reads are not counted against the time budget.
//
// A Preparer holds no state between calls and takes no lock: it is safe
// for concurrent use, and a run may continue in another process. The calls
// of one run, though, must not overlap, and the host continues from the
// checkpoint of the call it made last. A call replaces the file of any other
// call from its checkpoint: when a first attempt that timed out on the host's
// side finishes after its retry, its file stays while the host follows
// the retry's checkpoint, the rows between the two calls' stops are in no file,
// and a manifest written after that does not show it
// (TestPrepareRemovesManifestBeforeWriting builds such a folder).
type Preparer struct {
	bucket          *blob.Bucket
	maxFileSize     int64
	prepareDuration time.Duration
	storagePrefix   string
	dataPrefix      string // "": layout.DataPrefix
	now             func() time.Time
	newRunID        func() string
	codec           compress.Codec
	logger          *slog.Logger
	trailer         func(context.Context) iter.Seq2[string, error]
	optErr          error // the first invalid option, while NewPreparer runs
}

// NewPreparer returns a Preparer writing into bucket, which is rooted at the
// repository's storage namespace. A nil bucket or an invalid option is an
// error wrapping ErrInvalidInput; nil options are ignored.
func NewPreparer(bucket *blob.Bucket, opts ...Option) (*Preparer, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	p := &Preparer{
		bucket:          bucket,
		maxFileSize:     DefaultMaxFileSize,
		prepareDuration: DefaultPrepareDuration,
		storagePrefix:   DefaultStoragePrefix,
		now:             time.Now,
		codec:           &gzip.Codec{Level: DefaultGzipLevel},
	}
	for _, opt := range opts {
		if opt != nil {
			opt(p)
		}
	}
	if err := p.optErr; err != nil {
		return nil, err
	}
	return p, nil
}

// Location returns the URI of the folder holding a run's files and its
// manifest:
// <namespace>/<prefix>/retention/gc/uncommitted/<run_id>/uncommitted/, with
// one '/' between parts. It is lakeFS's gc_uncommitted_location.
func Location(storageNamespace, storagePrefix, runID string) string {
	return strings.TrimRight(storageNamespace, "/") + "/" + runFolder(cleanPrefix(storagePrefix), runID)
}

// runFolder is the key prefix of a run's files in the bucket.
func runFolder(storagePrefix, runID string) string {
	return layout.UncommittedFiles(storagePrefix, runID)
}

// cleanPrefix drops leading and trailing '/' from a storage prefix; an
// empty one is DefaultStoragePrefix.
func cleanPrefix(p string) string {
	if p = strings.Trim(p, "/"); p == "" {
		return DefaultStoragePrefix
	}
	return p
}

// Prepare writes the next file of a run: the first call passes a nil checkpoint
// and starts a run, each later call passes the previous Result.Checkpoint. It
// returns the next checkpoint, nil once the run is complete.
//
// Branches the Source reports as deleted (ErrBranchNotFound) are skipped;
// any other error of the Source, of the trailer or of the bucket is
// returned wrapped, and then the same checkpoint can be retried. So is the
// context's error whenever ctx is done when the scan ends, even if the
// Source stopped quietly: a scan cut short must not look complete. An
// entry of an unknown AddressType is an error (ErrUnknownAddressType). A
// Repository without a StorageNamespace is an error: every full address
// would be skipped, and a GC would delete its object.
func (p *Preparer) Prepare(ctx context.Context, repo Repository, src Source, checkpoint *Checkpoint) (*Result, error) {
	if p.bucket == nil || src == nil {
		return nil, fmt.Errorf("%w: Prepare needs a bucket and a Source", ErrInvalidInput)
	}
	if strings.Trim(repo.StorageNamespace, "/") == "" {
		return nil, fmt.Errorf("%w: Prepare needs the repository's storage namespace", ErrInvalidInput)
	}
	data := p.dataPrefix
	if data == "" {
		data = layout.DataPrefix
	}
	ns, err := nsaddr.New(repo.StorageNamespace, data)
	if err != nil {
		return nil, fmt.Errorf("uncommitted: Prepare: the repository's storage namespace %q is not a URI", repo.StorageNamespace)
	}
	start := p.now()
	runID, err := p.runID(checkpoint, start)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	folder := runFolder(p.storagePrefix, runID)
	s := &scan{
		p:      p,
		ctx:    ctx,
		runID:  runID,
		ns:     ns,
		prober: nsaddr.NewProber(p.bucket, ns.String(), nsaddr.DefaultProbes),
		start:  start,
		key:    folder + fileName(runID, checkpoint),
	}
	p.log(ctx, "prepare uncommitted: start", "repository", repo.ID, "run_id", runID, "checkpoint", checkpoint)
	if err := removeObject(ctx, p.bucket, folder+ManifestName); err != nil {
		return nil, err
	}
	next, err := s.branches(src, checkpoint)
	if err == nil && next == nil && p.trailer != nil {
		err = s.trailer()
	}
	if err == nil {
		// A Source may stop quietly when ctx is done.
		err = ctx.Err()
	}
	if err != nil {
		if s.file != nil {
			s.file.abort()
		}
		return nil, err
	}
	res := &Result{RunID: runID, Checkpoint: next, Location: Location(repo.StorageNamespace, p.storagePrefix, runID), Foreign: s.foreign}
	if s.file != nil {
		if err := s.file.commit(); err != nil {
			return nil, err
		}
		res.Filename = s.key[len(folder):]
		res.Rows = s.file.rows
	} else if err := removeObject(ctx, p.bucket, s.key); err != nil {
		// A file of an earlier attempt from this checkpoint, whose rows
		// the next calls write again.
		return nil, err
	}
	if next == nil {
		if err := p.complete(ctx, folder, runID); err != nil {
			return nil, err
		}
	}
	if p.logger != nil {
		p.log(ctx, "prepare uncommitted: done", "repository", repo.ID, "run_id", runID,
			"rows", res.Rows, "foreign", res.Foreign, "file", res.Filename, "next", next, "elapsed", p.now().Sub(start))
	}
	return res, nil
}

// complete writes the manifest of a run whose last file was written.
func (p *Preparer) complete(ctx context.Context, folder, runID string) error {
	m, err := describeRun(ctx, p.bucket, folder, runID)
	if err != nil {
		return err
	}
	return writeManifest(ctx, p.bucket, folder, m)
}

// fileName names the file of the call of run runID that starts from checkpoint
// (nil: the run's first call): 32 hex digits of a SHA-256 of both, which
// never start with '_' or '.'. The run ID, branch and path are hashed with
// their lengths, so distinct checkpoints give distinct names.
func fileName(runID string, checkpoint *Checkpoint) string {
	var branch, path string
	if checkpoint != nil {
		branch, path = checkpoint.BranchID, checkpoint.Path
	}
	var b []byte
	for _, part := range []string{runID, branch, path} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func (p *Preparer) runID(checkpoint *Checkpoint, now time.Time) (string, error) {
	if checkpoint != nil {
		return checkpoint.RunID, validRunID(checkpoint.RunID)
	}
	if p.newRunID == nil {
		return layout.NewRunID(now), nil
	}
	id := p.newRunID()
	if err := validRunID(id); err != nil {
		return "", fmt.Errorf("uncommitted: WithRunID: %w", err)
	}
	return id, nil
}

func (p *Preparer) log(ctx context.Context, msg string, args ...any) {
	if p.logger != nil {
		p.logger.InfoContext(ctx, msg, args...)
	}
}

// scan is the state of one Prepare call.
type scan struct {
	p       *Preparer
	ctx     context.Context
	runID   string
	ns      *nsaddr.Namespace
	prober  *nsaddr.Prober // of the tails of foreign addresses
	keys    []string       // the keys of the current entry
	foreign int64          // full addresses outside the namespace
	start   time.Time
	key     string
	file    *fileWriter // nil until the first row
	scanned int
	// progressed is set once the call consumed an entry or a branch: a
	// checkpoint taken then is past the one the call started from.
	progressed bool
}

const (
	// ctxCheckEvery is how many entries pass between checks of ctx, which
	// takes a lock.
	ctxCheckEvery = 256
	// clockEvery is how many entries pass between reads of the clock, which
	// costs as much as exporting a row on some virtual machines. A call
	// overruns its time budget by at most the time of that many entries.
	clockEvery = 16
)

// branches exports the branches from the checkpoint on, and returns the next
// checkpoint.
func (s *scan) branches(src Source, checkpoint *Checkpoint) (*Checkpoint, error) {
	from := ""
	if checkpoint != nil {
		from = checkpoint.BranchID
	}
	floor, floorScanned := from, false
	for branch, err := range src.Branches(s.ctx, from) {
		if err != nil {
			return nil, fmt.Errorf("uncommitted: list branches: %w", err)
		}
		if branch < floor || floorScanned && branch == floor {
			return nil, fmt.Errorf("%w: branch %q after %q", ErrOutOfOrder, branch, floor)
		}
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		if s.overBudget(true) {
			if id, ok := resumeAt(floor, floorScanned, branch); ok {
				return &Checkpoint{BranchID: id, RunID: s.runID}, nil
			}
		}
		path := ""
		if checkpoint != nil && branch == checkpoint.BranchID {
			path = checkpoint.Path
		}
		next, err := s.branch(src, branch, path)
		if err != nil || next != nil {
			return next, err
		}
		floor, floorScanned = branch, true
		s.progressed = true
	}
	return nil, nil
}

// branch exports one branch's entries from path on; it returns a checkpoint
// when a budget stopped it.
func (s *scan) branch(src Source, branch, path string) (*Checkpoint, error) {
	floor, floorScanned := path, false
	// A checkpoint must name its branch: inside a branch whose name JSON cannot
	// carry, the call only stops between branches.
	canStop := utf8.ValidString(branch)
	for e, err := range src.Uncommitted(s.ctx, branch, path) {
		if err != nil {
			if errors.Is(err, ErrBranchNotFound) {
				s.p.log(s.ctx, "prepare uncommitted: branch deleted, skipped", "branch", branch)
				return nil, nil
			}
			return nil, fmt.Errorf("uncommitted: branch %q: %w", branch, err)
		}
		if e.Key < floor || floorScanned && e.Key == floor {
			return nil, fmt.Errorf("%w: branch %q: key %q after %q", ErrOutOfOrder, branch, e.Key, floor)
		}
		if s.scanned++; s.scanned%ctxCheckEvery == 0 {
			if err := s.ctx.Err(); err != nil {
				return nil, err
			}
		}
		if canStop && s.overBudget(s.scanned%clockEvery == 0) {
			if p, ok := resumeAt(floor, floorScanned, e.Key); ok {
				return &Checkpoint{BranchID: branch, Path: p, RunID: s.runID}, nil
			}
		}
		floor, floorScanned = e.Key, true
		s.progressed = true
		if e.Tombstone {
			continue
		}
		if e.AddressType != Relative && e.AddressType != Full {
			return nil, fmt.Errorf("%w: branch %q: key %q: %v", ErrUnknownAddressType, branch, e.Key, e.AddressType)
		}
		if err := s.export(e.PhysicalAddress, e.AddressType, e.CreationDate.Unix()); err != nil {
			return nil, fmt.Errorf("uncommitted: branch %q: key %q: %w", branch, e.Key, err)
		}
	}
	return nil, nil
}

// trailer exports the trailer's addresses, all of them, in this file.
func (s *scan) trailer() error {
	created := s.p.now().Unix()
	for a, err := range s.p.trailer(s.ctx) {
		if err != nil {
			return fmt.Errorf("uncommitted: trailer: %w", err)
		}
		if err := s.export(a, trailerType(a), created); err != nil {
			return fmt.Errorf("uncommitted: trailer: %w", err)
		}
	}
	return s.ctx.Err()
}

// export writes the rows of one address: its keys (see exportKeys). The
// tail of a full address outside the namespace is probed, for the first
// distinct tails of the call: an object of the bucket there means the
// address named the namespace in another spelling.
func (s *scan) export(address string, typ AddressType, created int64) error {
	var class nsaddr.Class
	var err error
	s.keys, class, err = exportKeys(s.keys[:0], address, typ, s.ns)
	if err == nil && class == nsaddr.Outside {
		s.foreign++
		if len(s.keys) > 0 {
			if err = s.prober.Probe(s.ctx, address, s.keys[0]); errors.Is(err, nsaddr.ErrMismatch) {
				err = fmt.Errorf("%w: %w", ErrNamespaceMismatch, err)
			}
		}
	}
	if err != nil {
		return err
	}
	for _, k := range s.keys {
		if err := s.write(Row{PhysicalAddress: k, CreationDate: created}); err != nil {
			return err
		}
	}
	return nil
}

// overBudget reports whether the call should stop before the next entry or
// branch: only once it consumed an entry or a branch, so every call makes
// progress. The clock is read only when readClock is set.
func (s *scan) overBudget(readClock bool) bool {
	if !s.progressed {
		return false
	}
	if s.file != nil && s.file.size() >= s.p.maxFileSize {
		return true
	}
	return readClock && s.p.prepareDuration > 0 && s.p.now().Sub(s.start) >= s.p.prepareDuration
}

// resumeAt returns where to resume so that nothing is scanned twice or
// skipped: a name in (floor, next], or in [floor, next] when floor itself
// was not scanned yet. JSON cannot carry invalid UTF-8 (it would come back
// as U+FFFD, possibly past entries not yet exported), so the name must be
// valid UTF-8; when no valid name lies in the range, it returns false and
// the call does not stop there.
func resumeAt(floor string, floorScanned bool, next string) (string, bool) {
	switch {
	case utf8.ValidString(next):
		return next, true
	case !floorScanned:
		return floor, true // floor came from a checkpoint or is "": valid
	case utf8.ValidString(floor):
		return floor + "\x00", true // the smallest name after floor
	}
	valid := next
	for i, r := range next {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(next[i:]); size == 1 {
				valid = next[:i]
				break
			}
		}
	}
	// valid+"\x00" <= next, since next continues with a byte >= 0x80.
	if m := valid + "\x00"; m > floor {
		return m, true
	}
	return "", false
}

func (s *scan) write(r Row) error {
	if s.file == nil {
		f, err := newFileWriter(s.ctx, s.p.bucket, s.key, s.p.codec, s.p.maxFileSize)
		if err != nil {
			return err
		}
		s.file = f
	}
	return s.file.write(r)
}
