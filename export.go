package lakegc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// ErrNoExport is wrapped by the error for a Config.ResumeExport that names
// no export Collect started under the storage prefix (a mistyped run ID, or
// another prefix), one of another namespace, or one that read copy records
// the resuming Host does not read.
var ErrNoExport = errors.New("lakegc: no such export")

// ErrStaleExport is wrapped by the error for an export that began the copy
// tracker's TTL or more ago (Host.Copies): the records of renames that raced
// its first calls, or that were made after it, may have expired before the
// export or the mark read them. Such an export, finished or not, is neither
// resumed nor marked; run a new cycle.
var ErrStaleExport = errors.New("lakegc: export older than the copy records' TTL")

// exportState is Collect's record of an export, beside the run's folder:
// where the next call resumes and what the calls so far wrote. It is
// written before the first call and after each, so that an interrupted
// export resumes by its run ID, with its start time.
type exportState struct {
	// Start is when the export began: the anchor of the cutoff.
	Start time.Time `json:"start"`
	// Namespace is the repository's storage namespace.
	Namespace string `json:"namespace"`
	// Copies is set when the export reads the copy records of Repository:
	// a resume must read the same ones.
	Copies     bool   `json:"copies,omitempty"`
	Repository string `json:"repository,omitempty"`
	// Next is the continuation token of the next call: "" before the first
	// call completed, and once Done.
	Next string `json:"next"`
	// Done is set once a call returned no next mark.
	Done        bool  `json:"done"`
	Files       int   `json:"files"`
	Rows        int64 `json:"rows"`
	CopyRecords int64 `json:"copy_records"`
}

// maxStateSize bounds what readExportState reads: a state is one line.
const maxStateSize = 64 << 10

// stateKey is the key of an export's state: in the run's folder, beside the
// uncommitted/ folder that lakeFS's GC client reads, under a name readers
// skip.
func stateKey(storagePrefix, runID string) string {
	return layout.ExportStateKey(storagePrefix, runID)
}

func writeExportState(ctx context.Context, bucket *blob.Bucket, key string, st exportState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return bucket.WriteAll(ctx, key, append(b, '\n'), &blob.WriterOptions{ContentType: "application/json"})
}

func readExportState(ctx context.Context, bucket *blob.Bucket, key string) (exportState, error) {
	r, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound && ctx.Err() == nil {
			return exportState{}, fmt.Errorf("%w: %s does not exist", ErrNoExport, key)
		}
		return exportState{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxStateSize+1))
	if err != nil {
		return exportState{}, err
	}
	return decodeExportState(b)
}

// decodeExportState parses a state, refusing one that cannot continue a
// run: it came from the bucket.
func decodeExportState(b []byte) (exportState, error) {
	if len(b) > maxStateSize {
		return exportState{}, fmt.Errorf("%w: state larger than %d bytes", ErrNoExport, maxStateSize)
	}
	var st exportState
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&st); err != nil {
		return exportState{}, fmt.Errorf("%w: state: %v", ErrNoExport, err)
	}
	switch {
	case st.Start.IsZero():
		return exportState{}, fmt.Errorf("%w: state without a start time", ErrNoExport)
	case st.Done && st.Next != "":
		return exportState{}, fmt.Errorf("%w: state both done and with a next call", ErrNoExport)
	case st.Files < 0 || st.Rows < 0 || st.CopyRecords < 0:
		return exportState{}, fmt.Errorf("%w: state with negative counts", ErrNoExport)
	}
	return st, nil
}

// runExport runs the uncommitted export to completion: a new one, or the
// rest of Config.ResumeExport.
func (c *cycle) runExport(ctx context.Context) error {
	done := c.phase(ctx, PhaseExport)
	st, mark, err := c.startExport(ctx)
	if err != nil {
		return err
	}
	runID := c.report.ExportRunID
	rep := &ExportReport{
		Start:    st.Start,
		Location: uncommitted.Location(c.cfg.Namespace, c.cfg.StoragePrefix, runID),
		Resumed:  c.cfg.ResumeExport != "",
	}
	c.report.Export = rep
	fail := func(err error) error {
		rep.Files, rep.Rows = st.Files, st.Rows
		return mismatch(fmt.Errorf("lakegc: export %s: %w", runID, err))
	}
	var trailer int64
	opts := []uncommitted.Option{
		uncommitted.WithStoragePrefix(c.cfg.StoragePrefix),
		uncommitted.WithDataPrefix(c.cfg.DataPrefix),
		uncommitted.WithClock(c.cfg.Clock),
		uncommitted.WithMaxFileSize(c.cfg.ExportFileSize),
		uncommitted.WithRunID(func() string { return runID }),
		uncommitted.WithLogger(c.cfg.Logger),
		// ZSTD, not lakeFS's GZIP: only this cycle's mark reads the export back.
		uncommitted.WithCompression(uncommitted.Zstd()),
	}
	if c.host.Copies != nil {
		opts = append(opts, uncommitted.WithTrailer(func(ctx context.Context) iter.Seq2[string, error] {
			return counted(c.host.Copies.Addresses(ctx, c.cfg.Repository), &trailer)
		}))
	}
	p, err := uncommitted.NewPreparer(c.cfg.Bucket, opts...)
	if err != nil {
		return fail(err)
	}
	repo := uncommitted.Repository{ID: c.cfg.Repository, StorageNamespace: c.cfg.Namespace}
	key := stateKey(c.cfg.StoragePrefix, runID)
	for !st.Done {
		trailer = 0
		res, err := p.Prepare(ctx, repo, c.host.Staging, mark)
		if err == nil {
			// A call that ends as ctx is cancelled is not trusted to be
			// complete, whatever it returned.
			err = ctx.Err()
		}
		if err == nil && res.RunID != runID {
			err = fmt.Errorf("a call wrote run %q", res.RunID)
		}
		if err != nil {
			return fail(err)
		}
		rep.Calls++
		rep.Foreign += res.Foreign
		if res.Filename != "" {
			st.Files++
			st.Rows += res.Rows
		}
		mark = res.Checkpoint
		if mark == nil {
			// The call read the copy records: were they all still there?
			if err := c.checkCopyTTL(st.Start); err != nil {
				return fail(err)
			}
		}
		st.Next, st.Done = uncommitted.EncodeToken(mark), mark == nil
		if st.Done {
			st.CopyRecords = trailer
		}
		if err := writeExportState(ctx, c.cfg.Bucket, key, st); err != nil {
			return fail(err)
		}
		c.progress(Progress{Phase: PhaseExport, ExportNext: mark, Files: st.Files, Rows: st.Rows})
	}
	c.export = st
	rep.Files, rep.Rows, rep.CopyRecords = st.Files, st.Rows, st.CopyRecords
	if rep.Bytes, err = folderSize(ctx, c.cfg.Bucket, runFolder(c.cfg.StoragePrefix, runID)); err != nil {
		return fail(err)
	}
	rep.Duration = done("files", rep.Files, "rows", rep.Rows, "copy_records", rep.CopyRecords)
	return nil
}

// hostExport runs the host's own export (Host.Export) after recording its
// start, the anchor of the cutoff. Its addresses are read by the mark, made
// relative to the namespace as the committed ones are.
func (c *cycle) hostExport(ctx context.Context) error {
	done := c.phase(ctx, PhaseExport)
	start := c.cfg.Clock()
	rep := &ExportReport{Start: start, Host: true}
	c.report.Export = rep
	c.progress(Progress{Phase: PhaseExport})
	exp, err := c.host.Export.Export(ctx)
	if err == nil {
		// An export that ends as ctx is cancelled is not trusted to be
		// complete, whatever it returned.
		err = ctx.Err()
	}
	if err == nil && (exp == nil || exp.Addresses == nil) {
		err = errors.New("the host's export returned no addresses")
	}
	if err != nil {
		return fmt.Errorf("lakegc: export: %w", err)
	}
	rep.Calls = 1
	c.report.ExportRunID, rep.Location = exp.RunID, exp.Location
	c.export = exportState{Start: start, Namespace: c.cfg.Namespace, Done: true}
	c.exported = c.relativeAddresses(ctx, "export", exp.Addresses)
	c.progress(Progress{Phase: PhaseExport})
	rep.Duration = done()
	return nil
}

// startExport records the start of a new export, or reads where the export
// to resume stopped. It returns the state and the mark of the next call.
func (c *cycle) startExport(ctx context.Context) (exportState, *uncommitted.Checkpoint, error) {
	if runID := c.cfg.ResumeExport; runID != "" {
		c.report.ExportRunID = runID
		st, err := readExportState(ctx, c.cfg.Bucket, stateKey(c.cfg.StoragePrefix, runID))
		if err == nil && st.Namespace != c.cfg.Namespace {
			err = fmt.Errorf("%w: export of namespace %q, not %q", ErrNoExport, st.Namespace, c.cfg.Namespace)
		}
		var mark *uncommitted.Checkpoint
		if err == nil {
			mark, err = uncommitted.DecodeToken(st.Next)
		}
		if err == nil && mark != nil && mark.RunID != runID {
			err = fmt.Errorf("%w: next call of run %q", ErrNoExport, mark.RunID)
		}
		// A finished export too: the mark reads the copy records again,
		// for the copies made after the export read them, and they must
		// be the same records, all still there.
		if err == nil && st.Copies && (c.host.Copies == nil || st.Repository != c.cfg.Repository) {
			err = fmt.Errorf("%w: an export that reads the copy records of repository %q, resumed without them", ErrNoExport, st.Repository)
		}
		if err == nil {
			err = c.checkCopyTTL(st.Start)
		}
		if err != nil {
			return exportState{}, nil, fmt.Errorf("lakegc: resume export %s: %w", runID, err)
		}
		return st, mark, nil
	}
	// Records older than the tracker's TTL are dropped first: they are of
	// renames long done, whose objects a branch's staging area or a commit
	// holds.
	if c.host.Copies != nil {
		if _, err := c.host.Copies.Expire(ctx, c.cfg.Repository); err != nil {
			return exportState{}, nil, fmt.Errorf("lakegc: export: expire copy records: %w", err)
		}
	}
	// The cutoff is anchored here, before the first call: an upload linked
	// after the export passed its path is in neither input.
	st := exportState{Start: c.cfg.Clock(), Namespace: c.cfg.Namespace}
	if c.host.Copies != nil {
		st.Copies, st.Repository = true, c.cfg.Repository
	}
	runID := retention.NewRunID(st.Start)
	c.report.ExportRunID = runID
	if err := writeExportState(ctx, c.cfg.Bucket, stateKey(c.cfg.StoragePrefix, runID), st); err != nil {
		return exportState{}, nil, fmt.Errorf("lakegc: export %s: %w", runID, err)
	}
	return st, nil, nil
}

// checkCopyTTL refuses an export that began the copy tracker's TTL or more
// ago: a record of a rename made after its start, once it passed the
// rename's destination, may be expired before its last call reads the
// records, and the object it keeps would be marked.
func (c *cycle) checkCopyTTL(start time.Time) error {
	if c.host.Copies == nil {
		return nil
	}
	ttl := c.host.Copies.TTL()
	if age := c.cfg.Clock().Sub(start); age >= ttl {
		return fmt.Errorf("%w: it began %v ago, and copy records expire after %v; run a new cycle", ErrStaleExport, age, ttl)
	}
	return nil
}

// counted yields seq, counting its items into n.
func counted(seq iter.Seq2[string, error], n *int64) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for a, err := range seq {
			if err == nil {
				*n++
			}
			if !yield(a, err) {
				return
			}
		}
	}
}

// runFolder is the folder of an export run's files.
func runFolder(storagePrefix, runID string) string {
	return layout.UncommittedFiles(storagePrefix, runID)
}

// exportedAddresses yields the addresses of the finished export run runID,
// checked against the manifest of its last call: a run that is absent
// (uncommitted.ErrNoRun) or unfinished (uncommitted.ErrIncomplete) ends
// the iteration with the error, and the mark then marks nothing. Collect's
// own record must say done too.
func exportedAddresses(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, done bool) iter.Seq2[string, error] {
	if !done {
		return func(yield func(string, error) bool) {
			yield("", fmt.Errorf("lakegc: export %s: %w", runID, uncommitted.ErrIncomplete))
		}
	}
	return uncommitted.Addresses(ctx, bucket, storagePrefix, runID)
}
